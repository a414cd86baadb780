"""A Slack thread whose cited document changes in a sync gets exactly one note, and its
"Ask again" button answers from the new version; a thread older than the window gets none."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from docassist.bot.slack.stale import ASK_AGAIN_ACTION
from docassist.bot.stale_courier import StaleNoteCourier
from docassist.core.sources import Source, SourceKind
from docassist.sources.sync import sync_all
from docassist.storage import Bm25Retriever, Store
from tests.conftest import STORES, EngineFactory
from tests.helpers import assert_ask_again_refused
from tests.slack.rig import CHANNEL, TEAM, SlackRig, mention
from tests.stale_zebra import QUESTION, ZEBRA_V1, ZEBRA_V2


@pytest.fixture
def rig(rig_factory: Any, make_engine: EngineFactory, store: Store) -> SlackRig:
    built: SlackRig = rig_factory(make_engine(retriever=Bm25Retriever(store)))
    return built


def ask_again_payload(note_id: str, thread: str) -> dict[str, Any]:
    return {"type": "block_actions", "team": {"id": TEAM}, "user": {"id": "U1"},
            "container": {"type": "message", "channel_id": CHANNEL, "message_ts": "9.9",
                          "thread_ts": thread},
            "channel": {"id": CHANNEL}, "trigger_id": "tr-again",
            "actions": [{"action_id": ASK_AGAIN_ACTION, "value": note_id,
                         "action_ts": "900.1"}]}


@pytest.mark.parametrize("store", STORES, indirect=True)
def test_a_changed_citation_gets_one_note_and_ask_again_answers_from_the_new_version(
        rig: SlackRig, store: Store, zebra: Path) -> None:
    rig.event(mention(QUESTION, "500.1"), "Ev1")
    [answer] = rig.api.posted()
    assert "PagerDuty" in answer["text"] and "DOC-ZEBRA-" in str(answer["blocks"])
    zebra.write_text(ZEBRA_V2)
    [outcome] = sync_all(store, stale_days=14)
    assert outcome.updated == ["DOC-ZEBRA"]
    sync_all(store, stale_days=14)  # an unchanged re-sync adds nothing
    couriers = [StaleNoteCourier(store, "slack", rig.adapter.stale_notes.post, holder=name)
                for name in ("replica-1", "replica-2")]
    assert [courier.deliver_once() for courier in couriers] == [1, 0]
    assert couriers[0].deliver_once() == 0  # exactly once
    note = rig.api.posted()[-1]
    assert note["thread_ts"] == "500.1"
    assert "Zebra alarm" in note["text"] and "DOC-ZEBRA" in note["text"]
    button = next(b for b in note["blocks"] if b["type"] == "actions")["elements"][0]
    assert button["action_id"] == ASK_AGAIN_ACTION
    assert rig.interactive(ask_again_payload(button["value"], "500.1")).status_code == 200
    again = rig.api.posted()[-1]
    assert again["thread_ts"] == "500.1"
    assert "Opsgenie" in again["text"] and "PagerDuty" not in again["text"]
    [row] = store.stale_note_rows()
    assert row["status"] == "delivered"


def test_a_deleted_citation_is_noted_too(rig: SlackRig, store: Store, zebra: Path) -> None:
    rig.event(mention(QUESTION, "510.1"), "Ev1")
    zebra.unlink()
    [outcome] = sync_all(store, stale_days=14)
    assert outcome.deleted == ["DOC-ZEBRA"]
    assert StaleNoteCourier(store, "slack", rig.adapter.stale_notes.post).deliver_once() == 1
    assert "was removed" in rig.api.posted()[-1]["text"]


def test_a_thread_older_than_the_window_or_with_notes_off_gets_none(
        rig: SlackRig, store: Store, zebra: Path) -> None:
    rig.event(mention(QUESTION, "520.1"), "Ev1")
    zebra.write_text(ZEBRA_V2)
    sync_all(store)  # notes turned off (no stale_days): nothing recorded
    assert store.stale_note_rows() == []
    rig.event(mention(QUESTION, "530.1"), "Ev2")
    old = (datetime.now(UTC) - timedelta(days=15)).isoformat(timespec="milliseconds")
    store.db.execute("UPDATE conversations SET updated_at = ?", [old])  # both threads idle
    zebra.write_text(ZEBRA_V1)
    [outcome] = sync_all(store, stale_days=14)
    assert outcome.updated == ["DOC-ZEBRA"]
    assert store.stale_note_rows() == []
    posts = len(rig.api.posted())
    assert StaleNoteCourier(store, "slack", rig.adapter.stale_notes.post).deliver_once() == 0
    assert len(rig.api.posted()) == posts


def test_a_failed_post_is_tried_again_later(rig: SlackRig, store: Store, zebra: Path) -> None:
    rig.event(mention(QUESTION, "540.1"), "Ev1")
    zebra.write_text(ZEBRA_V2)
    sync_all(store, stale_days=14)
    rig.api.fail("chat.postMessage", 500, 500, 500)
    courier = StaleNoteCourier(store, "slack", rig.adapter.stale_notes.post)
    assert courier.deliver_once() == 0
    [row] = store.stale_note_rows()
    assert row["status"] == "pending" and row["attempts"] == 1
    assert courier.deliver_once() == 1


def test_admins_see_every_source_and_its_failure_in_slack(rig: SlackRig, store: Store,
                                                          zebra: Path) -> None:
    store.add_source(Source(name="gone", kind=SourceKind.FOLDER,
                            settings={"path": str(zebra.parent / "missing")}))
    sync_all(store, "gone")
    rig.command("/docassist-admin", "sources", user="UADMIN")
    [shown] = rig.api.posted("chat.postEphemeral")
    assert "handbook (folder, default): 1 docs" in shown["text"]
    assert "gone (folder, default): 0 docs, last success never" in shown["text"]
    assert "FAILING: " in shown["text"] and "folder not found" in shown["text"]
    rig.command("/docassist-admin", "sources", user="U1")
    refused = rig.api.posted("chat.postEphemeral")[-1]
    assert "handbook" not in refused["text"]


def _noted_thread(rig: SlackRig, store: Store, zebra: Path, thread: str) -> str:
    """A thread answered from ZEBRA_V1, then noted after the sync to V2: its note's id."""
    rig.event(mention(QUESTION, thread), f"Ev-{thread}")
    zebra.write_text(ZEBRA_V2)
    sync_all(store, stale_days=14)
    StaleNoteCourier(store, "slack", rig.adapter.stale_notes.post).deliver_once()
    note = rig.api.posted()[-1]
    button = next(b for b in note["blocks"] if b["type"] == "actions")["elements"][0]
    return str(button["value"])


def test_ask_again_after_the_thread_was_cleared_says_so_in_the_thread_and_runs_nothing(
        rig: SlackRig, store: Store, zebra: Path) -> None:
    note = _noted_thread(rig, store, zebra, "550.1")
    rig.event(mention("clear", "550.2", thread_ts="550.1"), "Ev2")
    posts = len(rig.api.posted())
    assert rig.interactive(ask_again_payload(note, "550.1")).status_code == 200
    [told] = rig.api.posted()[posts:]
    assert told["thread_ts"] == "550.1"
    assert told["text"].startswith("I no longer have that question")
    assert_ask_again_refused(store, "no_question")


@pytest.mark.parametrize("value", ["999", "not-a-number", "9" * 40, ""],
                         ids=["unknown", "not-a-number", "huge", "empty"])
def test_an_ask_again_naming_no_note_of_the_thread_says_so_and_runs_nothing(
        rig: SlackRig, store: Store, zebra: Path, value: str) -> None:
    _noted_thread(rig, store, zebra, "560.1")
    posts = len(rig.api.posted())
    assert rig.interactive(ask_again_payload(value, "560.1")).status_code == 200
    [told] = rig.api.posted()[posts:]
    assert told["thread_ts"] == "560.1" and "I don't know that changed-document note" in told[
        "text"] and "Zebra" not in told["text"]
    assert_ask_again_refused(store, "unknown_note")


def test_another_threads_note_is_unknown_there(rig: SlackRig, store: Store,
                                               zebra: Path) -> None:
    note = _noted_thread(rig, store, zebra, "570.1")
    rig.event(mention("How do I renew the TLS certificate?", "580.1"), "Ev-other")
    posts = len(rig.api.posted())
    assert rig.interactive(ask_again_payload(note, "580.1")).status_code == 200
    [told] = rig.api.posted()[posts:]
    assert told["thread_ts"] == "580.1"
    assert "I don't know that changed-document note" in told["text"]
    last = store.turns()[-1]
    assert (last["decision_status"], last["decision_reason"]) == ("rejected", "unknown_note")
    assert last["tool_name"] is None and store.tool_calls(last["result_id"]) == []


def test_a_redelivered_ask_again_is_answered_once(rig: SlackRig, store: Store,
                                                  zebra: Path) -> None:
    note = _noted_thread(rig, store, zebra, "590.1")
    posts, turns = len(rig.api.posted()), len(store.turns())
    for _ in range(2):  # the same click (same action_ts) delivered twice
        assert rig.interactive(ask_again_payload(note, "590.1")).status_code == 200
    [again] = rig.api.posted()[posts:]
    assert again["thread_ts"] == "590.1" and "Opsgenie" in again["text"]
    assert len(store.turns()) == turns + 1
