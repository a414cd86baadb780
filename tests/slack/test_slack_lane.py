"""The events lane (bot/slack/lane.py): which Slack requests are stored from the event loop
without Bolt's dispatch, and that they are answered as Bolt's listeners would answer them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from slack_bolt import BoltRequest, BoltResponse
from slack_bolt.middleware import Middleware

from docassist.bot.slack.lane import EventLane
from docassist.bot.slack.server import SlackEvents
from tests.slack.rig import PANE, SlackRig, channel_message, mention


class SeenByBolt(Middleware):
    """Bolt's public middleware API: records the event types that reach Bolt's dispatch."""

    def __init__(self) -> None:
        self.types: list[str] = []

    def process(self, *, req: BoltRequest, resp: BoltResponse,
                next: Callable[[], BoltResponse]) -> BoltResponse | None:
        self.types.append(str((req.body.get("event") or {}).get("type") or req.body.get("type")))
        return next()


@pytest.fixture
def seen(rig: SlackRig) -> SeenByBolt:
    middleware = SeenByBolt()
    rig.adapter.app.middleware(middleware)
    return middleware


def test_a_mention_and_a_direct_message_are_stored_and_answered_without_bolt(
        rig: SlackRig, seen: SeenByBolt) -> None:
    assert rig.event(mention("How do I renew the TLS certificate?", "10.1"), "EvM"
                     ).status_code == 200
    direct = {"type": "message", "user": "U1", "text": "Jak odtworzyć bazę danych z kopii?",
              "ts": "11.1", "channel": "D9", "channel_type": "im", "team": "T1"}
    assert rig.event(direct, "EvD").status_code == 200
    assert rig.adapter.worker.wait_idle()
    assert seen.types == []
    assert sorted(row["event_id"] for row in rig.store.turns()) == ["EvD", "EvM"]
    threads = sorted((post["channel"], post.get("thread_ts")) for post in rig.api.posted())
    assert threads == [("C1", "10.1"), ("D9", None)]


def test_a_thread_reply_without_a_mention_and_the_assistant_pane_go_through_bolt(
        rig: SlackRig, seen: SeenByBolt) -> None:
    rig.event(mention("How do I renew the TLS certificate?", "20.1"), "EvRoot")
    # Whether the thread is ours is a read: not on the event loop.
    rig.event(channel_message("And how do I check it worked?", "20.2", thread_ts="20.1"),
              "EvReply")
    rig.event({**PANE, "type": "message", "text": "How do I renew the TLS certificate?",
               "ts": "1200.2", "thread_ts": "1200.1"}, "EvPane")
    assert rig.adapter.worker.wait_idle()
    # The reply reached Bolt's listeners; the pane's message stopped at Bolt's Assistant
    # middleware (registered before this recorder), whose listener sets the title.
    assert seen.types == ["message"]
    assert rig.api.wait_posted("assistant.threads.setTitle")
    assert sorted(row["event_id"] for row in rig.store.turns()) == [
        "EvPane", "EvReply", "EvRoot"]


def test_channel_chatter_is_acked_at_once_and_stores_nothing(
        rig: SlackRig, seen: SeenByBolt) -> None:
    chatter = rig.event(channel_message("lunch anyone?", "30.1"), "EvChat")
    edit = rig.event(mention("fixed typo", "31.1", subtype="message_changed"), "EvEdit")
    assert (chatter.status_code, edit.status_code) == (200, 200)
    assert seen.types == [] and rig.store.inbox_rows() == []


def test_what_the_lane_takes() -> None:
    class Adapter:
        @staticmethod
        def needs_thread_lookup(event: dict[str, Any], mentioned: bool) -> bool:
            return not mentioned and event.get("channel_type") != "im" and bool(
                event.get("thread_ts"))

        def submit_event(self, *args: Any) -> None:
            raise AssertionError("not called here")

    lane = EventLane(Adapter())

    def callback(event: dict[str, Any]) -> dict[str, Any]:
        return {"type": "event_callback", "event_id": "Ev1", "event": event}

    assert lane.takes(callback(mention("hi", "1.1")))
    assert lane.takes(callback(mention("hi", "1.2", thread_ts="1.1")))
    assert lane.takes(callback(channel_message("hi", "1.1")))  # chatter: dropped at once
    assert not lane.takes(callback(channel_message("hi", "1.2", thread_ts="1.1")))
    assert not lane.takes(callback({**PANE, "type": "message", "text": "hi", "ts": "1.2",
                                    "thread_ts": "1.1"}))
    assert not lane.takes(callback({"type": "assistant_thread_started", "event_ts": "1.0"}))
    assert not lane.takes(callback({"type": "reaction_added", "user": "U1"}))
    assert not lane.takes({"type": "url_verification", "challenge": "c"})
    assert not lane.takes({"type": "event_callback", "event": "not an object"})


def test_the_lane_is_refused_without_the_signing_secret(rig: SlackRig) -> None:
    """Bolt's signature check does not run for the events the lane takes: the server's
    own must."""
    with pytest.raises(ValueError, match="signing secret"):
        SlackEvents(rig.adapter.app, None, lane=EventLane(rig.adapter))
