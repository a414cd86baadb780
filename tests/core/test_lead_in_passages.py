"""A section that only announces what follows ("Below are some examples of checks…") is
answered with the sections it announces: a new operator was given the lead-in alone while
the checks were in the next sections."""

from __future__ import annotations

import re
from pathlib import Path

from docassist.core.extractive import ExtractiveAnswerer, leads_in
from docassist.core.turn import TurnEngine
from docassist.storage import Bm25Retriever, Store, index_paths
from tests.conftest import EngineFactory
from tests.helpers import message

DONE = """# Definition of Done

To close a user story or a sprint it is important to verify that the tasks are complete.
Below are some examples of checks to verify that a story or sprint is completed.

## Feature/User Story

- [ ] Acceptance criteria are met
- [x] Code review is complete

## Sprint Goal

- [ ] Performance tests pass
"""
READY = """# Definition of Ready

A story is ready when its acceptance criteria are written and the team has estimated it.

## Estimation

Estimate in story points during refinement.
"""


def _engine(make_engine: EngineFactory, store: Store, tmp_path: Path) -> TurnEngine:
    (tmp_path / "done.md").write_text(DONE)
    (tmp_path / "ready.md").write_text(READY)
    index_paths(store, [tmp_path])
    return make_engine(retriever=Bm25Retriever(store),
                       answerer=ExtractiveAnswerer(catalog=store))


def _sections(answer: str, engine: TurnEngine) -> list[str]:
    return [chunk.section for chunk_id in re.findall(r"\[([^\]]+-\d{4})\]", answer)
            if (chunk := engine.catalog.chunk(chunk_id)) is not None]


def test_a_lead_in_is_answered_with_the_sections_it_announces(
        make_engine: EngineFactory, store: Store, tmp_path: Path) -> None:
    engine = _engine(make_engine, store, tmp_path)
    result = engine.handle(message("what is in the definition of done?"))
    assert result is not None and result.status == "answered"
    assert _sections(result.answer, engine) == [
        "Definition of Done", "Feature/User Story", "Sprint Goal"]
    # Each announced section is named, its task boxes read as boxes, not as "[ ]" markup.
    assert "Feature/User Story:\n☐ Acceptance criteria are met\n☑ Code review is complete" \
        in result.answer
    assert "[ ]" not in result.answer and "Performance tests pass" in result.answer
    assert {"Feature/User Story", "Sprint Goal"} <= {source.section for source in result.sources}


def test_a_section_that_announces_nothing_is_answered_alone(
        make_engine: EngineFactory, store: Store, tmp_path: Path) -> None:
    engine = _engine(make_engine, store, tmp_path)
    result = engine.handle(message("when is a user story ready to be estimated by the team?"))
    assert result is not None and result.status == "answered"
    assert _sections(result.answer, engine) == ["Definition of Ready"]
    assert "story points" not in result.answer


def test_what_reads_as_a_lead_in() -> None:
    assert leads_in(["Run the following:"])
    assert leads_in(["Some text.", "Poniżej kilka przykładów kontroli."])
    assert leads_in(["The checks are listed below."])
    assert not leads_in(["The checks are listed below.", "…"])  # cut short: it goes on
    assert not leads_in(["Following the release, tag the commit."])
    assert not leads_in([])
