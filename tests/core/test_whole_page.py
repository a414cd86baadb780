"""The extractive answerer reads every section of the page it answers from: the section that
answers is often one retrieval did not return (its words are not the question's), and the
reader tells it from the sections that merely share the question's words."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from docassist.core.extractive import ExtractiveAnswerer
from docassist.core.ports import SearchHit
from docassist.core.turn import TurnEngine
from docassist.models.embedders import get_embedder
from docassist.storage import Bm25Retriever, Store, index_paths
from docassist.storage.reader import default_reader
from tests.conftest import EngineFactory
from tests.helpers import message

EQUIPMENT = """---
id: DOC-EQUIPMENT
title: Equipment
---
# Equipment

## Ordering a laptop

Order a laptop through the IT portal; delivery takes three days. A laptop bag is included.

## Laptop setup

On the first start the laptop enrols itself; sign in with your work account.

## Travelling with a laptop

Keep the laptop in your hand luggage on the train or plane, never in checked bags.

## Stolen or lost devices

Report a theft or a loss to security@example.com within 24 hours; they lock the device
remotely and order a replacement.

## Returning equipment

Hand everything to the Service Desk on your last day.
"""
QUESTION = "komu zgłosić kradzież laptopa?"


def _engine(make_engine: EngineFactory, store: Store, tmp_path: Path,
            answerer: ExtractiveAnswerer) -> TurnEngine:
    (tmp_path / "equipment.md").write_text(EQUIPMENT)
    index_paths(store, [tmp_path])
    return make_engine(retriever=Bm25Retriever(store), answerer=answerer)


def _sections(answer: str, engine: TurnEngine) -> list[str]:
    return [chunk.section for chunk_id in re.findall(r"\[([^\]]+-\d{4})\]", answer)
            if (chunk := engine.catalog.chunk(chunk_id)) is not None]


def test_the_section_retrieval_missed_answers_when_the_reader_reads_it(
        make_engine: EngineFactory, store: Store, tmp_path: Path) -> None:
    engine = _engine(make_engine, store, tmp_path, ExtractiveAnswerer(
        get_embedder("use"), catalog=store, reader=default_reader()))
    retrieved = {hit.chunk.section for hit in Bm25Retriever(store).search(QUESTION, 20)}
    assert "Stolen or lost devices" not in retrieved  # none of its words is the question's
    result = engine.handle(message(QUESTION))
    assert result is not None and result.status == "answered"
    assert _sections(result.answer, engine) == ["Stolen or lost devices"]
    assert "security@example.com" in result.answer
    # The sources: what retrieval returned of the page, and the section quoted; not the
    # page's other sections.
    shown = {source.section for source in result.sources}
    assert "Stolen or lost devices" in shown and "Returning equipment" not in shown


def test_without_a_reader_only_the_retrieved_sections_are_considered(
        make_engine: EngineFactory, store: Store, tmp_path: Path) -> None:
    engine = _engine(make_engine, store, tmp_path,
                     ExtractiveAnswerer(get_embedder("use"), catalog=store))
    result = engine.handle(message(QUESTION))
    assert result is not None and result.status == "answered"
    assert _sections(result.answer, engine) != ["Stolen or lost devices"]
    assert "Stolen or lost devices" not in {source.section for source in result.sources}


class RecordingAnswerer:
    """Stands in for a model answerer: records the sections it is given."""

    backend = "recording"
    model: str | None = None
    can_stream = False

    def __init__(self, reads_whole_page: bool) -> None:
        self.reads_whole_page = reads_whole_page
        self.given: list[str] = []

    def compose(self, question: str, hits: list[SearchHit], language: str) -> str:
        self.given = [hit.chunk.section for hit in hits]
        return f"See [{hits[0].chunk.chunk_id}]."

    def compose_stream(self, question: str, hits: list[SearchHit], language: str
                       ) -> Iterator[str]:
        raise AssertionError("can_stream is False: never called")


def test_an_answerer_that_does_not_read_whole_pages_is_given_the_retrieved_sections(
        make_engine: EngineFactory, store: Store, tmp_path: Path) -> None:
    whole, retrieved = RecordingAnswerer(True), RecordingAnswerer(False)
    for answerer in (whole, retrieved):
        engine = _engine(make_engine, store, tmp_path, ExtractiveAnswerer())
        engine.answerer = answerer
        engine.handle(message(QUESTION, f"t-{answerer.reads_whole_page}"))
    assert set(whole.given) == {"Ordering a laptop", "Laptop setup", "Travelling with a laptop",
                                "Stolen or lost devices", "Returning equipment"}
    assert set(retrieved.given) == {"Ordering a laptop", "Laptop setup",
                                    "Travelling with a laptop"}
