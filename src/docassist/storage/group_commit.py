"""Group commit: writes that arrive while a transaction commits share the next one.

A durable ack costs one fsync of the write-ahead log. Under a burst of concurrent events
(Slack sends them in parallel), one transaction per event puts every ack behind all the
fsyncs before it: measured 3–9 ms each on a busy 2-core machine, so the 50th ack of a
burst waited ~300 ms. Here the first waiting thread writes everything queued so far in one
transaction (one fsync) and hands each caller its own result, so a burst costs a few fsyncs.
Nothing is acknowledged before its transaction committed.

A caller that must not block (an event loop: Slack's events lane) uses `submit_soon`: its
item joins the same queue and a writer thread of this commit, started on first use, leads
when no blocking caller does; the returned Future completes once the item's transaction has
committed (or failed). One queue for both, so they share transactions.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Final, Generic, TypeVar

from docassist.core.batching import batch as once_per_batch
from docassist.core.errors import StoreClosedError

Item = TypeVar("Item")
Result = TypeVar("Result")

MAX_BATCH: Final = 256
"""Items one transaction takes at most; the rest wait for the next one."""


class _Slot(Generic[Item, Result]):
    """One caller's item. `_wake` (under the guard) says "look again": a plain lock held
    until then, cheaper on the ack path than an Event (a Condition and its lock per call)."""

    __slots__ = ("_bell", "_rung", "done", "error", "future", "item", "result")

    def __init__(self, item: Item, future: Future[Result | None] | None = None) -> None:
        self.item = item
        self.future = future
        """Set for `submit_soon`: completed with the result; no thread waits on the bell."""
        self.done = False
        self.result: Result | None = None
        self.error: BaseException | None = None
        self._bell = threading.Lock()
        self._bell.acquire()
        self._rung = False

    def wake(self) -> None:
        """Called with the guard held; a second call before `wait` returns is one wake."""
        if not self._rung:
            self._rung = True
            self._bell.release()

    def wait(self, guard: threading.Lock) -> None:
        self._bell.acquire()
        with guard:
            self._rung = False


class GroupCommit(Generic[Item, Result]):
    def __init__(self, write_batch: Callable[[list[Item]], list[Result]]) -> None:
        """`write_batch` writes its items in one transaction and returns one result per
        item, in order; if it raises, every item of that batch gets the error."""
        self._write_batch = write_batch
        self._guard = threading.Lock()
        self._queue: list[_Slot[Item, Result]] = []
        self._writing = False
        self._soon = threading.Condition(self._guard)
        """The writer thread waits here for queued `submit_soon` items nobody leads."""
        self._writer: threading.Thread | None = None
        self._closed = False

    def submit(self, item: Item) -> Result | None:
        """Block until `item` is committed (alone or with others); its result."""
        slot: _Slot[Item, Result] = _Slot(item)
        with self._guard:
            self._queue.append(slot)
        while True:
            with self._guard:
                if slot.done:
                    break
                lead = not self._writing
                if lead:
                    self._writing = True
                    batch, self._queue = self._queue[:MAX_BATCH], self._queue[MAX_BATCH:]
            if lead:
                self._commit(batch)
            else:
                slot.wait(self._guard)  # woken when our batch committed or the writer changed
        if slot.error is not None:
            raise slot.error
        return slot.result

    def submit_soon(self, item: Item) -> Future[Result | None]:
        """Queue `item` and return at once; the Future completes when it is committed
        (its result) or its transaction failed (the error). After `close`, it fails with
        StoreClosedError."""
        future: Future[Result | None] = Future()
        future.set_running_or_notify_cancel()  # a write once queued is not called off
        with self._guard:
            if self._closed:
                future.set_exception(StoreClosedError("the store is closed"))
                return future
            self._queue.append(_Slot(item, future))
            if self._writer is None:
                self._writer = threading.Thread(target=self._write_soon, daemon=True,
                                                name="group-commit")
                self._writer.start()
            if not self._writing:  # else the commit under way hands over when it ends
                self._soon.notify()
        return future

    def _write_soon(self) -> None:
        """The writer thread: leads a batch whenever items are queued and nobody writes;
        ends once closed with nothing left."""
        while True:
            with self._guard:
                while self._writing or not self._queue:
                    if self._closed and not self._writing:
                        return
                    self._soon.wait()
                self._writing = True
                batch, self._queue = self._queue[:MAX_BATCH], self._queue[MAX_BATCH:]
            self._commit(batch)

    def close(self) -> None:
        """Commit what `submit_soon` queued, then stop the writer thread; later
        `submit_soon` calls fail (blocking `submit` is the caller's own thread)."""
        with self._guard:
            self._closed = True
            self._soon.notify()
            writer = self._writer
        if writer is not None:
            writer.join()

    def _commit(self, batch: list[_Slot[Item, Result]]) -> None:
        try:
            results = self._write_batch([slot.item for slot in batch])
            for slot, result in zip(batch, results, strict=True):
                slot.result = result
        except BaseException as error:  # every caller of the batch sees why
            for slot in batch:
                slot.error = error
        with self._guard:
            for slot in batch:
                slot.done = True
                slot.wake()
            self._writing = False
            if self._queue:  # the next writer takes everything queued meanwhile:
                self._queue[0].wake()  # a blocking caller of its own accord,
            if self._queue or self._closed:
                self._soon.notify()  # else the writer thread (or it ends, once closed)
        with once_per_batch():  # outside the guard: a future's callbacks run here
            for slot in batch:
                if slot.future is None:
                    continue
                if slot.error is not None:
                    slot.future.set_exception(slot.error)
                else:
                    slot.future.set_result(slot.result)
