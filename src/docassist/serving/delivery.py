"""Getting a stored answer (or a notice) out to the platform for the inbox worker: sent with
retries, the event marked `failed` after the last, the user told when anything can still
be said; and, for an event resumed as `answered`, asking first whether the previous process
already posted it, so a reply is not posted twice."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from docassist.core.messages import ChatMessage
from docassist.core.ports import Inbox, InboxEvent
from docassist.core.results import TurnResult
from docassist.serving.limits import MAX_DELIVERY_ATTEMPTS

logger = logging.getLogger(__name__)

Deliver = Callable[[ChatMessage, TurnResult], None]
AlreadyDelivered = Callable[[ChatMessage, TurnResult], bool]
DeliverNotice = Callable[[ChatMessage, str], None]
Undeliverable = Callable[[ChatMessage, str], None]
StreamFor = Callable[[ChatMessage], Callable[[str], None] | None]
"""Gives a per-message receiver of streamed answer sentences (or None: no streaming)."""
DirectReply = Callable[[ChatMessage], None]
"""Answers a `direct` event; one whose reply it finds posted before a restart it skips."""


@dataclass(frozen=True)
class Outlet:
    """What the inbox needs from a platform, in one object: how a reply, a notice or a direct
    answer goes out, whether a resumed answer was posted already, what to say when nothing
    can be delivered, and the streaming and before-turn hooks. Adapters build one; the inbox
    decides when each is called."""

    deliver: Deliver
    platform: str = ""
    notice: DeliverNotice | None = None
    already_delivered: AlreadyDelivered | None = None
    undeliverable: Undeliverable | None = None
    stream_for: StreamFor | None = None
    before_turn: Callable[[ChatMessage], None] | None = None
    """Called right before a turn runs (never for a duplicate or a refusal)."""
    direct: DirectReply | None = None


class Delivery:
    def __init__(self, inbox: Inbox, outlet: Outlet) -> None:
        self.inbox = inbox
        self.deliver = outlet.deliver
        self.deliver_notice = outlet.notice
        self.already_delivered = outlet.already_delivered
        self.on_undeliverable = outlet.undeliverable

    def with_retries(self, event: InboxEvent, send: Callable[[], None]) -> bool:
        """Send, retried; True once sent. After the last failure the event is `failed`."""
        for _ in range(MAX_DELIVERY_ATTEMPTS):
            try:
                send()
            except Exception as error:
                attempts = self.inbox.delivery_failed(event.id, f"{type(error).__name__}: "
                                                                f"{error}")
                logger.warning("delivery of inbox event %s failed (attempt %d): %s",
                               event.id, attempts, error)
                continue
            return True
        self.inbox.finish(event.id, "failed")  # the last delivery error stays recorded
        if self.on_undeliverable is not None:
            try:  # never silence: tell the user if the platform lets us say anything at all
                self.on_undeliverable(event.message, "delivery kept failing")
            except Exception:
                logger.exception("could not tell the user about inbox event %s", event.id)
        return False

    def notice(self, message: ChatMessage, text: str) -> None:
        if self.deliver_notice is None:
            raise RuntimeError("this worker cannot deliver notices")
        self.deliver_notice(message, text)

    def before_restart(self, event: InboxEvent, result: TurnResult) -> bool:
        """A resumed `answered` event: did the previous process get the reply out?"""
        if self.already_delivered is None:
            return False
        try:
            return self.already_delivered(event.message, result)
        except Exception as error:  # cannot tell: deliver (a repeat beats silence)
            logger.warning("could not check inbox event %s for an earlier delivery: %s",
                           event.id, error)
            return False
