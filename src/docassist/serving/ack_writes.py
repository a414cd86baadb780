"""The ack path's writes: an arriving event is stored on a writer thread while the
platform's request waits at most the ack deadline (ACK_DEADLINE_SECONDS). A write that is
late goes on: once stored, the event is answered (so the platform's retry is a duplicate);
one that fails is reported. Used by `InboxWorker.submit` (serving/inbox.py)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout

from docassist.core.errors import AckDeadlineError, StorageUnavailableError
from docassist.core.messages import ChatMessage
from docassist.serving.limits import ACK_WRITERS

logger = logging.getLogger(__name__)

LateFailure = Callable[[StorageUnavailableError], None]
Stored = Callable[[ChatMessage, int | None], bool]
"""Told of a stored event (its inbox id, None for a duplicate); True when it is new."""


class AckWrites:
    def __init__(self, stored: Stored) -> None:
        self.stored = stored
        self._writers = ThreadPoolExecutor(max_workers=ACK_WRITERS,
                                           thread_name_prefix="inbox-ack")

    def store(self, message: ChatMessage, write: Callable[[], int | None], deadline: float,
              on_late_failure: LateFailure | None = None) -> bool:
        """`write` the event within `deadline` seconds (AckDeadlineError if not: it goes
        on); what `stored` says of it."""
        writing = self._writers.submit(write)
        try:
            inbox_id = writing.result(timeout=deadline)
        except FutureTimeout:
            writing.add_done_callback(lambda done: self._stored_late(message, done,
                                                                     on_late_failure))
            raise AckDeadlineError(f"event {message.event_id} not stored within "
                                   f"{deadline:g} s") from None
        return self.stored(message, inbox_id)

    def within_deadline(self, work: Callable[[], int], deadline: float) -> int:
        """Run ack-path work that writes (a rate-limit check) on the writer threads; raises
        AckDeadlineError when it has not finished within `deadline` (it goes on)."""
        running = self._writers.submit(work)
        try:
            return running.result(timeout=deadline)
        except FutureTimeout:
            raise AckDeadlineError(f"not done within {deadline:g} s") from None

    def _stored_late(self, message: ChatMessage, done: Future[int | None],
                     on_late_failure: LateFailure | None) -> None:
        error = done.exception()
        if error is None:
            if self.stored(message, done.result()):
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

    def close(self) -> None:
        self._writers.shutdown(wait=True)
