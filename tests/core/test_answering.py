"""Answers cite only what was retrieved for them."""

from __future__ import annotations

from collections.abc import Iterator

from docassist.core.answering import check_citations
from docassist.core.ports import SearchHit
from docassist.storage import Store
from tests.conftest import EngineFactory
from tests.helpers import message

REAL = "DOC-TLS-0123456789-0002"
FOREIGN = "DOC-DB-9876543210-0001"


def test_citations_outside_the_retrieved_chunks_are_removed_and_flagged() -> None:
    answer, cited, warnings = check_citations(
        f"Renew 30 days ahead [{REAL}]. Restore nightly [{FOREIGN}]. Again [{REAL}].", {REAL})
    assert FOREIGN not in answer and f"[{REAL}]" in answer
    assert cited == [REAL]
    assert warnings == [f"removed_citation:{FOREIGN}"]


def test_an_answer_without_a_valid_citation_is_marked() -> None:
    answer, cited, warnings = check_citations(f"Trust me [{FOREIGN}].", {REAL})
    assert cited == [] and "no_valid_citation" in warnings
    assert answer == "Trust me."


class InventingAnswerer:
    """Stands in for a model that cites a chunk it was never given."""

    backend = "inventing"
    model: str | None = None
    can_stream = False
    reads_whole_page = False

    def compose(self, question: str, hits: list[SearchHit], language: str) -> str:
        return f"Do this [{hits[0].chunk.chunk_id}] and that [{FOREIGN}]."

    def compose_stream(self, question: str, hits: list[SearchHit], language: str
                       ) -> Iterator[str]:
        raise AssertionError("can_stream is False: never called")


def test_the_engine_checks_citations_of_every_answer(make_engine: EngineFactory,
                                                     store: Store) -> None:
    engine = make_engine()
    engine.answerer = InventingAnswerer()
    result = engine.handle(message("How do I renew the TLS certificate?"))
    assert result and result.status == "answered"
    assert FOREIGN not in result.answer
    assert result.warnings == [f"removed_citation:{FOREIGN}"]
    [row] = store.turns()
    assert FOREIGN in row["warnings"]
