"""The durable inbox: platform events are stored before they are acknowledged, answered in
arrival order per conversation (different conversations in parallel), and finished only
after the reply was delivered. On start, what was not finished is resumed: events without
an answer run their turn, answered ones are delivered again.

Statuses: `pending` (stored, not answered) → `answered` (turn committed, result stored) →
`done` (reply delivered) or `failed` (delivery kept failing; the error is kept). The turn's
commit marks the event `answered` in the same transaction (see ConversationStore.commit_turn).

A process killed between a post and its `done` leaves an `answered` event whose reply may
already be out: on resume, `already_delivered` (when the platform can tell) is asked first,
so the reply is not posted twice.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Final, Literal, Protocol

from pydantic import BaseModel

from docassist.core.errors import StorageUnavailableError
from docassist.core.limits import INBOX_WORKERS
from docassist.core.messages import ChatMessage
from docassist.core.results import TurnResult
from docassist.core.turn import TurnEngine

logger = logging.getLogger(__name__)

InboxStatus = Literal["pending", "answered", "done", "failed"]
MAX_DELIVERY_ATTEMPTS: Final = 3


class InboxEvent(BaseModel):
    id: int
    platform: str
    event_id: str
    conversation_id: str
    message: ChatMessage
    status: InboxStatus
    result: TurnResult | None = None
    attempts: int = 0


class Inbox(Protocol):
    def enqueue(self, message: ChatMessage, dedupe_key: str | None = None) -> int | None:
        """Store an event; its inbox id, or None when the event (or dedupe key) was seen."""
        ...

    def unfinished(self) -> list[InboxEvent]:
        """`pending` and `answered` events, oldest first."""
        ...

    def record_answer(self, inbox_id: int, result: TurnResult | None) -> None: ...

    def finish(self, inbox_id: int, status: InboxStatus, error: str | None = None) -> None: ...

    def delivery_failed(self, inbox_id: int, error: str) -> int:
        """Count a failed delivery; returns the attempts so far."""
        ...


Deliver = Callable[[ChatMessage, TurnResult], None]
AlreadyDelivered = Callable[[ChatMessage, TurnResult], bool]


class InboxWorker:
    def __init__(self, engine: TurnEngine, inbox: Inbox, deliver: Deliver,
                 workers: int = INBOX_WORKERS,
                 on_undeliverable: Callable[[ChatMessage, str], None] | None = None,
                 partial_sink: Callable[[ChatMessage], Callable[[str], None] | None]
                 | None = None,
                 already_delivered: AlreadyDelivered | None = None) -> None:
        self.engine = engine
        self.already_delivered = already_delivered
        self.partial_sink = partial_sink
        """Gives a per-message receiver of streamed answer sentences (or None)."""
        self.inbox = inbox
        self.deliver = deliver
        self.on_undeliverable = on_undeliverable
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="inbox")
        self._queues: dict[str, deque[InboxEvent]] = {}
        self._active: set[str] = set()
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._futures: list[Future[None]] = []

    def submit(self, message: ChatMessage, dedupe_key: str | None = None) -> bool:
        """Store the event (do this before acking the platform) and schedule it.

        False when it is a duplicate: ack it, it is (being) answered already.
        """
        if message.event_id is None:
            raise ValueError("inbox events need an event id")
        inbox_id = self.inbox.enqueue(message, dedupe_key)
        if inbox_id is None:
            return False
        self._schedule(InboxEvent(id=inbox_id, platform=message.key.platform,
                                  event_id=message.event_id,
                                  conversation_id=message.key.conversation_id,
                                  message=message, status="pending"))
        return True

    def resume(self) -> int:
        """Schedule every unfinished event, in arrival order; returns how many."""
        events = self.inbox.unfinished()
        for event in events:
            self._schedule(event)
        return len(events)

    def _schedule(self, event: InboxEvent) -> None:
        with self._lock:
            queue = self._queues.setdefault(event.conversation_id, deque())
            queue.append(event)
            if event.conversation_id not in self._active:
                self._active.add(event.conversation_id)
                self._futures.append(self._pool.submit(self._drain, event.conversation_id))

    def _drain(self, conversation_id: str) -> None:
        """Answer one conversation's events one at a time, in order."""
        while True:
            with self._lock:
                queue = self._queues[conversation_id]
                if not queue:
                    self._active.discard(conversation_id)
                    del self._queues[conversation_id]
                    self._idle.notify_all()
                    return
                event = queue.popleft()
            try:
                self._process(event)
            except Exception:
                logger.exception("inbox event %s failed; it stays unfinished", event.id)

    def _process(self, event: InboxEvent) -> None:
        result = event.result
        if event.status == "pending":
            sink = self.partial_sink(event.message) if self.partial_sink else None
            result = self.engine.handle(event.message, on_partial=sink)
            if result is not None and result.status == "storage_unavailable":
                self._tell_not_saved(event, result)
                return
            try:
                self.inbox.record_answer(event.id, result)
            except StorageUnavailableError as error:
                # The turn is committed; only this mark failed. Deliver it now: resumed
                # later, the event is found answered (event_seen) and not run again.
                logger.error("inbox event %s answered, but not marked so: %s", event.id, error)
        if result is None:  # answered before (a duplicate delivery of the same event)
            self.inbox.finish(event.id, "done")
            return
        if event.status == "answered" and self._delivered_before_restart(event, result):
            self.inbox.finish(event.id, "done")
            return
        for _ in range(MAX_DELIVERY_ATTEMPTS):
            try:
                self.deliver(event.message, result)
            except Exception as error:
                attempts = self.inbox.delivery_failed(event.id, f"{type(error).__name__}: "
                                                                f"{error}")
                logger.warning("delivery of inbox event %s failed (attempt %d): %s",
                               event.id, attempts, error)
                continue
            self.inbox.finish(event.id, "done")
            return
        self.inbox.finish(event.id, "failed")  # the last delivery error stays recorded
        if self.on_undeliverable is not None:
            try:  # never silence: tell the user if the platform lets us say anything at all
                self.on_undeliverable(event.message, "delivery kept failing")
            except Exception:
                logger.exception("could not tell the user about inbox event %s", event.id)

    def _tell_not_saved(self, event: InboxEvent, result: TurnResult) -> None:
        """The database refused the turn (logged once by the engine): tell the user once, and
        write nothing more. The event stays `pending`, so a start on a writable database
        answers it; nothing is retried in a loop meanwhile."""
        try:
            self.deliver(event.message, result)
        except Exception as error:
            logger.warning("could not tell the user that inbox event %s was not saved: %s",
                           event.id, error)

    def _delivered_before_restart(self, event: InboxEvent, result: TurnResult) -> bool:
        """A resumed `answered` event: did the previous process get the reply out?"""
        if self.already_delivered is None:
            return False
        try:
            return self.already_delivered(event.message, result)
        except Exception as error:  # cannot tell: deliver (a repeat beats silence)
            logger.warning("could not check inbox event %s for an earlier delivery: %s",
                           event.id, error)
            return False

    def wait_idle(self, timeout: float = 30.0) -> bool:
        """Block until no event is queued or running (tests, shutdown)."""
        with self._idle:
            return self._idle.wait_for(lambda: not self._active, timeout=timeout)

    def close(self) -> None:
        self._pool.shutdown(wait=True)
