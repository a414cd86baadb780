"""Work shared by concurrent callers, in batches, and the side effects a batch's callers
ask for, done once per batch.

`SharedBatches`: calls that arrive while a batch runs share the next one (the inbox's group
commit, storage/group_commit.py; query embeddings, models/embedders.py).

`once_after_batch`: the group commit completes the Futures of a batch's events one after
another on its thread. Each completion may want a system call: a byte that wakes a
turn process, a write that wakes the event loop waiting for the ack. Every such call gives
up the GIL, and getting it back from a busy event loop takes up to the interpreter's switch
interval, so a call per event made the batch's last ack wait behind all of them. A callback
asks for its action with `once_after_batch`; the batch runs each distinct action once, after
the last Future is complete. Outside a batch the action runs at once.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from typing import Generic, TypeVar

from docassist.core.errors import StoreClosedError

logger = logging.getLogger(__name__)

Action = Callable[[], None]
Item = TypeVar("Item")
Result = TypeVar("Result")


class _Current(threading.local):
    actions: dict[Action, None] | None = None
    """The actions the batch running on this thread defers (None: no batch)."""


_current = _Current()


@contextmanager
def batch() -> Iterator[None]:
    """Completions inside this block defer their actions to its end (on this thread)."""
    actions: dict[Action, None] = {}  # insertion-ordered; equal bound methods are one
    _current.actions = actions
    try:
        yield
    finally:
        _current.actions = None
        for action in actions:
            try:
                action()
            except Exception:  # one action's failure leaves the others to run
                logger.exception("an action after a committed batch failed")


def once_after_batch(action: Action) -> None:
    """Run `action` once the current batch is complete (at once outside one)."""
    actions = _current.actions
    if actions is None:
        action()
    else:
        actions[action] = None


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


class SharedBatches(Generic[Item, Result]):
    """Calls that arrive while a batch runs share the next one: the first caller waiting
    runs everything queued so far (up to `max_batch`) and hands each caller its own result.
    Idle, a call runs at once, alone; busy, callers share the work without any timer.
    `submit_soon` queues without waiting: a thread of this object (`thread_name`, started
    on first use) leads when no blocking caller does; the Future completes with the result.
    One queue for both."""

    def __init__(self, run_batch: Callable[[list[Item]], list[Result]], *,
                 max_batch: int, thread_name: str) -> None:
        """`run_batch` runs its items together and returns one result per item, in order;
        if it raises, every item of that batch gets the error."""
        self._run_batch = run_batch
        self._max_batch = max_batch
        self._thread_name = thread_name
        self._guard = threading.Lock()
        self._queue: list[_Slot[Item, Result]] = []
        self._running = False
        self._soon = threading.Condition(self._guard)
        """The `submit_soon` thread waits here for queued items nobody leads."""
        self._thread: threading.Thread | None = None
        self._closed = False

    def submit(self, item: Item) -> Result | None:
        """Block until `item` has run (alone or with others); its result."""
        slot: _Slot[Item, Result] = _Slot(item)
        with self._guard:
            self._queue.append(slot)
        while True:
            with self._guard:
                if slot.done:
                    break
                lead = not self._running
                if lead:
                    self._running = True
                    taken = self._take()
            if lead:
                self._run(taken)
            else:
                slot.wait(self._guard)  # woken when our batch ran, or to lead the next one
        if slot.error is not None:
            raise slot.error
        return slot.result

    def submit_soon(self, item: Item) -> Future[Result | None]:
        """Queue `item` and return at once; the Future completes with its result, or with
        the error of its batch. After `close`, it fails with StoreClosedError."""
        future: Future[Result | None] = Future()
        future.set_running_or_notify_cancel()  # once queued, it is not called off
        with self._guard:
            if self._closed:
                future.set_exception(StoreClosedError("the store is closed"))
                return future
            self._queue.append(_Slot(item, future))
            if self._thread is None:
                self._thread = threading.Thread(target=self._lead_soon, daemon=True,
                                                name=self._thread_name)
                self._thread.start()
            if not self._running:  # else the batch under way hands over when it ends
                self._soon.notify()
        return future

    def _lead_soon(self) -> None:
        """The thread of `submit_soon`: leads a batch whenever items are queued and no batch
        runs; ends once closed with nothing left."""
        while True:
            with self._guard:
                while self._running or not self._queue:
                    if self._closed and not self._running:
                        return
                    self._soon.wait()
                self._running = True
                taken = self._take()
            self._run(taken)

    def close(self) -> None:
        """Run what `submit_soon` queued, then stop its thread; later `submit_soon` calls
        fail (a blocking `submit` runs on the caller's own thread)."""
        with self._guard:
            self._closed = True
            self._soon.notify()
            writer = self._thread
        if writer is not None:
            writer.join()

    def _take(self) -> list[_Slot[Item, Result]]:
        """The next batch off the queue (called with the guard held)."""
        taken, self._queue = self._queue[:self._max_batch], self._queue[self._max_batch:]
        return taken

    def _run(self, slots: list[_Slot[Item, Result]]) -> None:
        try:
            results = self._run_batch([slot.item for slot in slots])
            for slot, result in zip(slots, results, strict=True):
                slot.result = result
        except BaseException as error:  # every caller of the batch sees why
            for slot in slots:
                slot.error = error
        with self._guard:
            for slot in slots:
                slot.done = True
                slot.wake()
            self._running = False
            if self._queue:  # the next leader takes everything queued meanwhile:
                self._queue[0].wake()  # a blocking caller of its own accord,
            if self._queue or self._closed:
                self._soon.notify()  # else the `submit_soon` thread (which ends once closed)
        with batch():  # outside the guard: a future's callbacks run here
            for slot in slots:
                if slot.future is None:
                    continue
                if slot.error is not None:
                    slot.future.set_exception(slot.error)
                else:
                    slot.future.set_result(slot.result)
