"""Group commit: writes that arrive while a transaction commits share the next one.

A durable ack costs one fsync of the write-ahead log. Under a burst of concurrent events
(Slack sends them in parallel), one transaction per event puts every ack behind all the
fsyncs before it: measured 3–9 ms each on a busy 2-core machine, so the 50th ack of a
burst waited ~300 ms. Here the first waiting thread writes everything queued so far in one
transaction (one fsync) and hands each caller its own result, so a burst costs a few fsyncs.
Nothing is acknowledged before its transaction committed.

A caller that must not block (the ack path: every platform's event, serving/inbox.py) uses
`submit_soon`: its item joins the same queue and a writer thread of this commit, started on
first use, leads when no blocking caller does; the returned Future completes once the item's
transaction has committed (or failed). One queue for both, so they share transactions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, TypeVar

from docassist.core.batching import SharedBatches

Item = TypeVar("Item")
Result = TypeVar("Result")

MAX_BATCH: Final = 256
"""Items one transaction takes at most; the rest wait for the next one."""


class GroupCommit(SharedBatches[Item, Result]):
    def __init__(self, write_batch: Callable[[list[Item]], list[Result]]) -> None:
        """`write_batch` writes its items in one transaction and returns one result per
        item, in order; if it raises, every item of that batch gets the error."""
        super().__init__(write_batch, max_batch=MAX_BATCH, thread_name="group-commit")
