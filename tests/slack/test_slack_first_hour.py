"""What a new Slack operator and user meet first (issue 42, item 4 and 8): a question over an
empty catalog says that nothing is indexed and how administrators fix it, and building the
app prints none of Bolt's noise."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from docassist.bot.slack.bolt_log import TOKEN_UNUSED
from docassist.core.turn import TurnEngine
from docassist.storage import Store
from tests.slack.rig import mention


def test_a_question_over_an_empty_catalog_says_nothing_is_indexed_yet(
        rig_factory: Any, engine: TurnEngine, store: Store) -> None:
    for document in store.documents():
        store.remove_document(document.document_id)
    rig = rig_factory(engine)
    rig.event(mention("How do I renew the TLS certificate?", "100.1"), "EvEmpty")
    [reply] = rig.api.posted()
    assert reply["thread_ts"] == "100.1"
    assert reply["text"].startswith("Nothing is indexed yet")
    assert "docassist index PATH" in reply["text"]  # what administrators do about it
    assert "didn't find" not in reply["text"]
    [turn] = store.turns()
    assert turn["status"] == "no_answer"  # still a gap, counted as such


def test_a_question_nothing_matches_in_a_full_catalog_is_still_not_found(
        rig: Any, store: Store) -> None:
    rig.event(mention("Qwxz vbnm plokij?", "100.2"), "EvNothing")
    [reply] = rig.api.posted()
    assert "Nothing is indexed" not in reply["text"]


def test_building_the_slack_app_prints_no_token_unused_warning(
        rig_factory: Any, engine: TurnEngine, caplog: pytest.LogCaptureFixture,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Bolt reads SLACK_BOT_TOKEN (always set when serving) although our client carries it,
    and warned at every start (`serve` printed it three times)."""
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-from-the-environment")
    with caplog.at_level(logging.WARNING):
        rig_factory(engine)
    assert TOKEN_UNUSED not in caplog.messages
    bolt = logging.getLogger("slack_bolt.App")
    with caplog.at_level(logging.WARNING):
        bolt.warning("Another warning from Bolt")  # anything else Bolt says still shows
    assert "Another warning from Bolt" in caplog.messages
