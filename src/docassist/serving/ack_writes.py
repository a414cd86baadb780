"""The ack path's waits: an arriving event is written by the store's group commit (one path
for every platform, see admission.py), and a caller that must answer the platform waits for
that write at most the ack deadline (ACK_DEADLINE_SECONDS). A write that is late goes on:
once stored, the event is answered (so the platform's retry is a duplicate); one that fails
is reported to `on_late_failure`. Other ack-path work that writes (a rate-limit check) runs
on writer threads here, within the same deadline."""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import TypeVar

from docassist.core.errors import AckDeadlineError, StorageUnavailableError
from docassist.serving.limits import ACK_WRITERS

logger = logging.getLogger(__name__)

T = TypeVar("T")
LateFailure = Callable[[StorageUnavailableError], None]


def stored_within(writing: Future[T], deadline: float | None, what: str,
                  on_late_failure: LateFailure | None = None) -> T:
    """What `writing` gives once committed, waited for at most `deadline` seconds (None: no
    bound). Past it, AckDeadlineError: the write goes on, and a failure that comes later
    goes to `on_late_failure` (one that comes in time is raised here)."""
    try:
        return writing.result(timeout=deadline)
    except FutureTimeout:
        writing.add_done_callback(lambda done: _landed_late(done, what, on_late_failure))
        raise AckDeadlineError(f"{what} not stored within {deadline:g} s") from None


def _landed_late(done: Future[T], what: str, on_late_failure: LateFailure | None) -> None:
    error = done.exception()
    if error is None:
        logger.warning("%s stored after its ack deadline; answering it", what)
        return
    logger.error("%s not stored after its ack deadline: %s", what, error)
    if on_late_failure is not None and isinstance(error, StorageUnavailableError):
        try:
            on_late_failure(error)
        except Exception:
            logger.exception("could not report that %s was not stored", what)


class AckWriters:
    """Threads for ack-path work that writes and is not an event (a rate-limit check)."""

    def __init__(self) -> None:
        self._writers = ThreadPoolExecutor(max_workers=ACK_WRITERS,
                                           thread_name_prefix="inbox-ack")

    def within_deadline(self, work: Callable[[], int], deadline: float) -> int:
        """Run `work` on a writer thread; AckDeadlineError when it has not finished within
        `deadline` (it goes on)."""
        running = self._writers.submit(work)
        try:
            return running.result(timeout=deadline)
        except FutureTimeout:
            raise AckDeadlineError(f"not done within {deadline:g} s") from None

    def close(self) -> None:
        self._writers.shutdown(wait=True)
