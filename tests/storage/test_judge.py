"""The judge's part in answering (storage/judge.py): only the pages it read can be answered
from, it reads the pages' leading passages, and it moves no page (so ranking is measured
without it)."""

from __future__ import annotations

import math

from docassist.core.turn import TurnEngine
from docassist.models.embedders import get_embedder
from docassist.storage.judge import JUDGED_PAGES, Judge, judged
from docassist.storage.reader import Reader
from docassist.storage.rerank import RankedRetriever


def test_the_judges_column_is_empty_where_it_read_nothing() -> None:
    column = judged([4, 1], [0.8, 0.7], 6)
    assert [round(v, 2) if not math.isnan(v) else None for v in column] == [
        None, 0.7, None, None, 0.8, None]


def test_pages_the_judge_did_not_read_cannot_be_answered_from(
        ranked_engine: TurnEngine) -> None:
    hits = ranked_engine.retriever.search("How do I renew the TLS certificate?", 30)
    pages = list(dict.fromkeys(hit.document.document_id for hit in hits))
    assert len(pages) > JUDGED_PAGES
    scores = {hit.document.document_id: hit.score for hit in hits}
    assert pages[0] == "DOC-TLS" and scores["DOC-TLS"] > 0.9
    assert all(scores[page] == 0.0 for page in pages[JUDGED_PAGES:])


def test_the_order_alone_is_the_judged_order_without_reading(ranked_engine: TurnEngine) -> None:
    judged_retriever = ranked_engine.retriever
    assert isinstance(judged_retriever, RankedRetriever)
    unread = Judge(get_embedder("e5"))
    alone = RankedRetriever(judged_retriever.bm25, judged_retriever.dense, unread,
                            Reader()).order_only()
    for question in ("How do I renew the TLS certificate?", "Jak zgłosić incydent?",
                     "What's the wifi password?", "kto zatwierdza dostęp administratora?"):
        judged_hits = judged_retriever.search(question, 12)
        hits = alone.search(question, 12)
        assert [h.chunk.chunk_id for h in hits] == [h.chunk.chunk_id for h in judged_hits]
        assert all(0 < hit.score < 1 for hit in hits)
    assert len(unread.passages) == 0  # the judge read nothing
