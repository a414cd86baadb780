"""Replies to a clarification over a real handbook (a new operator's trial): a name the
lexicon does not know ("gitleaks") supplies the object asked for, and a new question after
"there are no sources to show" is answered, not met with the same words again."""

from __future__ import annotations

from pathlib import Path

import pytest

from docassist.core.turn import TurnEngine
from docassist.storage import Store
from tests.helpers import index_pages, message

GITLEAKS = ("# GitLeaks guidance\n\n## Local developer workflow\n\nRun gitleaks locally before "
            "every push with `gitleaks protect --staged`; wire it into pre-commit.\n")


@pytest.fixture
def handbook(store: Store, tmp_path: Path) -> Store:
    return index_pages(store, tmp_path / "pages", {"gitleaks.md": GITLEAKS})


def test_a_name_the_lexicon_does_not_know_completes_the_question(
        engine: TurnEngine, handbook: Store) -> None:
    asked = engine.handle(message("How do I run it locally before I push?"))
    assert asked and asked.status == "clarification_needed"
    done = engine.handle(message("gitleaks", event_id="Ev-2"))
    assert done and done.status == "answered", done
    assert "gitleaks protect --staged" in done.answer
    assert done.conversation.standalone_question == (
        "How do I run gitleaks locally before I push?")


@pytest.mark.parametrize("reply", ["hmm", "no idea", "both"])
def test_a_word_that_names_nothing_is_no_progress(engine: TurnEngine, handbook: Store,
                                                  reply: str) -> None:
    asked = engine.handle(message("How do I run it locally before I push?"))
    assert asked and asked.status == "clarification_needed"
    again = engine.handle(message(reply, event_id="Ev-2"))
    assert again and again.status == "clarification_needed"
    assert again.decision.reason == "no_progress"


def test_a_new_question_after_no_sources_is_answered(engine: TurnEngine,
                                                     handbook: Store) -> None:
    shown = engine.handle(message("show sources"))
    assert shown and shown.status == "clarification_needed"
    answered = engine.handle(message("gitleaks - how do I run it before I push?",
                                     event_id="Ev-2"))
    assert answered and answered.status == "answered", answered
    assert "gitleaks protect --staged" in answered.answer
