"""A short message that a document's title names is a topic to search: a new operator's
"testing" over a playbook with testing pages got the self-introduction."""

from __future__ import annotations

from pathlib import Path

import pytest

from docassist.core.turn import TurnEngine
from docassist.storage import Store
from tests.helpers import index_pages, message

PAGE = ("# Unit testing\n\n## Why unit tests\n\nEvery change ships with unit tests that run in "
        "the pipeline; aim for fast tests without network access.\n")


@pytest.fixture
def playbook(store: Store, tmp_path: Path) -> Store:
    return index_pages(store, tmp_path / "pages", {"unit-testing.md": PAGE})


@pytest.mark.parametrize("asked", ["testing", "unit testing?"])
def test_a_title_word_alone_is_searched(engine: TurnEngine, playbook: Store,
                                        asked: str) -> None:
    result = engine.handle(message(asked))
    assert result is not None and result.decision.action == "answer_from_documents", result
    assert result.status in ("answered", "no_answer")


@pytest.mark.parametrize(("asked", "text"), [
    ("hello", "I'm DocAssist"), ("thanks", "You're welcome")])
def test_small_talk_stays_small_talk(engine: TurnEngine, playbook: Store, asked: str,
                                     text: str) -> None:
    result = engine.handle(message(asked))
    assert result is not None and result.status == "no_suitable_tool"
    assert result.answer.startswith(text)
