"""Teams "Ask again" on a stale note goes through the durable inbox like any message: a
redelivered click is one turn, a click that names no note of this thread is told so with
nothing run (the trace says why), and the click keeps its place among the conversation's
other messages (its question is read when its turn runs)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from docassist.bot.stale_courier import StaleNoteCourier
from docassist.bot.teams import cards
from docassist.sources.sync import sync_all
from docassist.storage import Bm25Retriever, Store
from tests.conftest import STORES, EngineFactory
from tests.helpers import assert_ask_again_refused
from tests.stale_zebra import QUESTION, ZEBRA_V2
from tests.teams.rig import TeamsRig, actions

UNKNOWN = "I don't know that changed-document note"


@pytest.fixture
def teams(teams_factory: Any, make_engine: EngineFactory, store: Store) -> TeamsRig:
    rig: TeamsRig = teams_factory(make_engine(retriever=Bm25Retriever(store)))
    return rig


def _noted_thread(teams: TeamsRig, store: Store, zebra: Path, root: str) -> tuple[str, dict[
        str, Any]]:
    """A channel thread answered from the zebra page, the page changed, its note posted:
    the thread and the note's "Ask again" data."""
    thread = teams.channel_thread(root)
    teams.post(teams.activity(QUESTION, conversation=thread, conversation_type="channel",
                              activity_id=root, mention=True))
    zebra.write_text(ZEBRA_V2)
    sync_all(store, stale_days=14)
    assert StaleNoteCourier(store, "teams", teams.adapter.stale_notes.post).deliver_once() >= 1
    [data] = [d for d in actions(teams.connector.messages()[-1])
              if d.get(cards.ACTION_KEY) == cards.ASK_AGAIN]
    return thread, data


def _click(teams: TeamsRig, thread: str, data: dict[str, Any], activity_id: str
           ) -> dict[str, Any]:
    return teams.activity(None, conversation=thread, conversation_type="channel",
                          value=data, activity_id=activity_id)


@pytest.mark.parametrize("store", STORES, indirect=True)
def test_a_redelivered_ask_again_is_answered_once(teams: TeamsRig, store: Store,
                                                  zebra: Path) -> None:
    thread, data = _noted_thread(teams, store, zebra, "3001")
    before = len(teams.connector.messages())
    click = _click(teams, thread, data, "click-1")
    for _ in range(3):  # the platform's retries of one click
        assert teams.post(click).status_code == 202
    [again] = teams.connector.messages()[before:]
    assert again.conversation_id == thread and again.reply_to_id == "click-1"
    assert "Opsgenie" in again.text and "PagerDuty" not in again.text
    [row] = [r for r in store.inbox_rows() if str(r["event_id"]).endswith("|click-1")]
    assert row["status"] == "done" and row["posted_id"]
    turns = store.turns()
    assert [t["status"] for t in turns] == ["answered", "answered"]
    assert turns[-1]["event_id"].endswith("|click-1")


@pytest.mark.parametrize("value", [
    {cards.ACTION_KEY: cards.ASK_AGAIN},
    {cards.ACTION_KEY: cards.ASK_AGAIN, "note": "not-a-number"},
    {cards.ACTION_KEY: cards.ASK_AGAIN, "note": "987654"},
    {cards.ACTION_KEY: cards.ASK_AGAIN, "note": "9" * 40},
    {cards.ACTION_KEY: cards.ASK_AGAIN, "note": ["1"]},
], ids=["no-note", "not-a-number", "unknown", "huge", "a-list"])
def test_an_ask_again_naming_no_note_of_the_thread_runs_nothing(
        teams: TeamsRig, store: Store, zebra: Path, value: dict[str, Any]) -> None:
    thread, _data = _noted_thread(teams, store, zebra, "3002")
    before = len(teams.connector.messages())
    assert teams.post(_click(teams, thread, value, "bad-1")).status_code == 202
    [told] = teams.connector.messages()[before:]
    assert UNKNOWN in told.text and "Zebra" not in told.text
    assert_ask_again_refused(store, "unknown_note")


def test_another_threads_note_is_unknown_here(teams: TeamsRig, store: Store,
                                              zebra: Path) -> None:
    _thread, data = _noted_thread(teams, store, zebra, "3003")
    other = teams.channel_thread("3999")  # a thread that never got that note
    before = len(teams.connector.messages())
    teams.post(_click(teams, other, data, "elsewhere-1"))
    [told] = teams.connector.messages()[before:]
    assert told.conversation_id == other and UNKNOWN in told.text
    assert_ask_again_refused(store, "unknown_note")


def test_ask_again_after_the_thread_was_cleared_says_the_question_is_gone(
        teams: TeamsRig, store: Store, zebra: Path) -> None:
    thread, data = _noted_thread(teams, store, zebra, "3004")
    teams.post(teams.activity("clear", conversation=thread, conversation_type="channel",
                              mention=True))
    before = len(teams.connector.messages())
    teams.post(_click(teams, thread, data, "late-1"))
    [told] = teams.connector.messages()[before:]
    assert "I no longer have that question" in told.text
    assert_ask_again_refused(store, "no_question")


@pytest.mark.parametrize("store", STORES, indirect=True)
def test_ask_again_keeps_its_place_among_the_conversations_messages(
        teams: TeamsRig, store: Store, zebra: Path) -> None:
    """Three activities acknowledged back to back, before any is answered: replies come in
    arrival order, and the click re-runs the question the thread had when it was sent (a
    `clear` after it does not overtake it)."""
    thread, data = _noted_thread(teams, store, zebra, "3005")
    before = len(teams.connector.messages())
    sent = [_click(teams, thread, data, "order-1"),
            teams.activity("clear", conversation=thread, conversation_type="channel",
                           mention=True, activity_id="order-2"),
            _click(teams, thread, data, "order-3")]
    for activity in sent:  # each is stored before its 202: no waiting for the turns
        assert httpx.post(teams.url, json=activity, timeout=30).status_code == 202
    assert teams.adapter.worker.wait_idle()
    replies = teams.connector.messages()[before:]
    assert [reply.reply_to_id for reply in replies] == ["order-1", "order-2", "order-3"]
    assert "Opsgenie" in replies[0].text
    assert "I no longer have that question" in replies[2].text
    statuses = [t["status"] for t in store.turns()][-3:]
    assert statuses == ["answered", "cleared", "invalid_message"]

