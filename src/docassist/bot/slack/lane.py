"""The events lane: Slack message events stored from the HTTP server's event loop, without
Bolt's dispatch or a thread hop per event (issue 25).

A mention or a direct message needs nothing Bolt adds once `server.SlackEvents` has checked
the request: the signature and timestamp are verified there, the JSON is parsed, and the
listener would only translate and store. Here the same translation (`arrival_for`) and
admission run on the loop, and the event is committed by the store's group-commit thread
with the others arriving meanwhile; the request waits for that commit (at most the ack
deadline), never for a thread of its own. Measured with turns idle on two cores, the
serving process's CPU per ack fell from 1.38–1.70 ms to 0.74–0.92 ms, beside the bare Bolt
floor's 0.74–0.82 in the same runs (docs/acks-and-capacity-history.md, "the events lane").

Everything else goes through Bolt as before: interactivity, commands, the assistant pane
(its listeners set titles and prompts), events of other types, and a reply in a channel
thread that does not mention the bot (whether the thread is ours is a read, which would
block the loop). Socket Mode has no loop of ours: Bolt's listeners store there.
"""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any, Final, Protocol

from slack_bolt.request.payload_utils import (
    is_assistant_event,
    is_other_message_sub_event_in_assistant_thread,
)

from docassist.bot.hygiene import json_without_lone_surrogates
from docassist.core.statuses import Verdict

LANE_EVENTS: Final = frozenset({"app_mention", "message"})
"""The event types the message listeners answer (listeners.LISTENERS)."""


class EventSubmitter(Protocol):
    """What the lane needs of the adapter (`app.SlackAdapter`)."""

    @staticmethod
    def needs_thread_lookup(event: dict[str, Any], mentioned: bool) -> bool: ...

    def submit_event(self, body: dict[str, Any], event: dict[str, Any], mentioned: bool,
                     retry: str | None = None) -> Future[Verdict] | None: ...


class EventLane:
    def __init__(self, adapter: EventSubmitter) -> None:
        self.adapter = adapter

    def takes(self, body: dict[str, Any]) -> bool:
        """An event callback the message listeners would answer, outside the assistant
        pane, whose translation reads nothing."""
        event = body.get("event")
        if body.get("type") != "event_callback" or not isinstance(event, dict):
            return False
        kind = event.get("type")
        if kind not in LANE_EVENTS:
            return False
        if is_assistant_event(body) or is_other_message_sub_event_in_assistant_thread(body):
            return False
        return not self.adapter.needs_thread_lookup(event, kind == "app_mention")

    def submit(self, text: str, body: dict[str, Any],
               retry: str | None) -> Future[Verdict] | None:
        """Store the event `takes` accepted (`text` is the body as sent): a Future of its
        verdict once committed, or None when it is not for us (acked at once). Text that
        cannot be stored (a lone surrogate) is made readable first, as `ReadableText` does
        for Bolt's listeners."""
        body = json_without_lone_surrogates(text, body)
        event = body["event"]
        return self.adapter.submit_event(body, event, event.get("type") == "app_mention", retry)
