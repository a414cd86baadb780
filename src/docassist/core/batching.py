"""Side effects that the callbacks of one committed batch ask for, done once per batch.

The group commit (storage/group_commit.py) completes the Futures of a batch's events one
after another on its thread. Each completion may want a system call: a byte that wakes a
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
from contextlib import contextmanager

logger = logging.getLogger(__name__)

Action = Callable[[], None]

_current = threading.local()


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
    actions: dict[Action, None] | None = getattr(_current, "actions", None)
    if actions is None:
        action()
    else:
        actions[action] = None
