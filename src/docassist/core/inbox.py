"""The durable inbox: platform events are stored before they are acknowledged, answered in
arrival order per conversation (different conversations in parallel), and finished only
after the reply was delivered. On start, what was not finished is resumed: events without
an answer run their turn, answered ones are delivered again.

Statuses: `pending` (stored, not answered) → `answered` (turn committed, result stored) →
`done` (reply delivered) or `failed` (delivery kept failing; the error is kept). The turn's
commit marks the event `answered` in the same transaction (see ConversationStore.commit_turn).

An event stored with a notice (a refusal or note decided at admission, see admission.py)
gets that notice delivered by the worker like an answer: once per message, whatever the
platform's retries; a refusal runs no turn.

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
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Final

from docassist.core.errors import AckDeadlineError, StorageUnavailableError
from docassist.core.limits import ACK_WRITERS, INBOX_WORKERS
from docassist.core.messages import ChatMessage
from docassist.core.ports import Inbox, InboxEvent
from docassist.core.results import TurnResult
from docassist.core.turn import TurnEngine

logger = logging.getLogger(__name__)

MAX_DELIVERY_ATTEMPTS: Final = 3


Deliver = Callable[[ChatMessage, TurnResult], None]
AlreadyDelivered = Callable[[ChatMessage, TurnResult], bool]
DeliverNotice = Callable[[ChatMessage, str], None]
DirectReply = Callable[[ChatMessage], None]
"""Answers a `direct` event; one whose reply it finds posted before a restart it skips."""
LateFailure = Callable[[StorageUnavailableError], None]


class InboxWorker:
    def __init__(self, engine: TurnEngine, inbox: Inbox, deliver: Deliver,
                 workers: int = INBOX_WORKERS,
                 on_undeliverable: Callable[[ChatMessage, str], None] | None = None,
                 partial_sink: Callable[[ChatMessage], Callable[[str], None] | None]
                 | None = None,
                 already_delivered: AlreadyDelivered | None = None,
                 deliver_notice: DeliverNotice | None = None,
                 before_turn: Callable[[ChatMessage], None] | None = None,
                 direct: DirectReply | None = None) -> None:
        self.engine = engine
        self.direct = direct
        """Answers events marked `direct` (no turn); see `_process_direct`."""
        self.deliver_notice = deliver_notice
        self.before_turn = before_turn
        """Called right before a turn runs (never for a duplicate or a refusal)."""
        self.already_delivered = already_delivered
        self.partial_sink = partial_sink
        """Gives a per-message receiver of streamed answer sentences (or None)."""
        self.inbox = inbox
        self.deliver = deliver
        self.on_undeliverable = on_undeliverable
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="inbox")
        self._writers = ThreadPoolExecutor(max_workers=ACK_WRITERS,
                                           thread_name_prefix="inbox-ack")
        self._queues: dict[str, deque[InboxEvent]] = {}
        self._active: set[str] = set()
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._futures: list[Future[None]] = []

    def submit(self, message: ChatMessage, dedupe_key: str | None = None,
               deadline: float | None = None,
               on_late_failure: LateFailure | None = None) -> bool:
        """Store the event (do this before acking the platform) and schedule it.

        False when it is a duplicate: ack it, it is (being) answered already. With a
        `deadline` (seconds), an event not stored by then raises AckDeadlineError; its write
        goes on and, once stored, the event is scheduled (a failure goes to
        `on_late_failure`), so the platform's retry finds it a duplicate.
        """
        if message.event_id is None:
            raise ValueError("inbox events need an event id")
        if deadline is None:
            return self._schedule_stored(message, self.inbox.enqueue(message, dedupe_key))
        writing = self._writers.submit(self.inbox.enqueue, message, dedupe_key)
        try:
            inbox_id = writing.result(timeout=deadline)
        except FutureTimeout:
            writing.add_done_callback(lambda done: self._stored_late(message, done,
                                                                     on_late_failure))
            raise AckDeadlineError(f"event {message.event_id} not stored within "
                                   f"{deadline:g} s") from None
        return self._schedule_stored(message, inbox_id)

    def _schedule_stored(self, message: ChatMessage, inbox_id: int | None) -> bool:
        if inbox_id is None:
            return False
        self._schedule(InboxEvent(id=inbox_id, platform=message.key.platform,
                                  event_id=str(message.event_id),
                                  conversation_id=message.key.conversation_id,
                                  message=message, status="pending"))
        return True

    def _stored_late(self, message: ChatMessage, done: Future[int | None],
                     on_late_failure: LateFailure | None) -> None:
        error = done.exception()
        if error is None:
            if self._schedule_stored(message, done.result()):
                logger.warning("event %s stored after its ack deadline; answering it",
                               message.event_id)
            return
        logger.error("event %s not stored after its ack deadline: %s", message.event_id, error)
        if on_late_failure is not None and isinstance(error, StorageUnavailableError):
            try:
                on_late_failure(error)
            except Exception:
                logger.exception("could not report that event %s was not stored",
                                 message.event_id)

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
        notice = event.message.notice
        if event.status == "pending" and notice is not None:
            delivered = self._deliver_with_retries(
                event, lambda: self._send_notice(event.message, notice.text()))
            if not delivered:
                return
            if notice.replaces_turn:  # a refusal: the notice is the whole reply, no turn runs
                self.inbox.finish(event.id, "done")
                return
        if event.status == "pending" and event.message.direct is not None:
            self._process_direct(event)
            return
        if event.status == "pending":
            if self.before_turn is not None:
                self._call_quietly(self.before_turn, event)
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
        answer = result
        if self._deliver_with_retries(event, lambda: self.deliver(event.message, answer)):
            self.inbox.finish(event.id, "done")

    def _process_direct(self, event: InboxEvent) -> None:
        """A request the adapter answers itself (no turn), once: the adapter records the
        posted reply before the event is done, and skips one it finds posted."""
        if self.direct is None:
            raise RuntimeError("this worker cannot answer direct requests")
        answer = self.direct
        if self._deliver_with_retries(event, lambda: answer(event.message)):
            self.inbox.finish(event.id, "done")

    def _send_notice(self, message: ChatMessage, text: str) -> None:
        if self.deliver_notice is None:
            raise RuntimeError("this worker cannot deliver notices")
        self.deliver_notice(message, text)

    def _deliver_with_retries(self, event: InboxEvent, send: Callable[[], None]) -> bool:
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

    @staticmethod
    def _call_quietly(hook: Callable[[ChatMessage], None], event: InboxEvent) -> None:
        try:
            hook(event.message)
        except Exception as error:  # a status line must never cost the answer
            logger.info("before-turn hook failed for inbox event %s: %s", event.id, error)

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
        self._writers.shutdown(wait=True)
        self._pool.shutdown(wait=True)
