"""A user's groups, reused until they expire.

A lookup that fails (throttled past its retries, an expired or revoked credential) gives no
groups and is not remembered: membership decides what a user may read, so a failure must not
grant group-scoped collections (fail closed), and the next question asks again.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Generic, TypeVar

from docassist.directory.limits import MEMBERSHIP_CACHE_SECONDS

logger = logging.getLogger(__name__)

Clock = Callable[[], float]
Value = TypeVar("Value")


class LookupFailed(Exception):
    """The directory could not say; `str()` is safe to log (no secret, no token)."""


class ExpiringCache(Generic[Value]):
    """Values by key (a user's groups, a workspace's group members), each kept for
    `seconds` after it was fetched; `empty` stands in when a fetch fails."""

    def __init__(self, fetch: Callable[[str], Value], empty: Value, *,
                 seconds: float = MEMBERSHIP_CACHE_SECONDS, clock: Clock = time.monotonic) -> None:
        self.fetch = fetch
        self.empty = empty
        self.seconds = seconds
        self.clock = clock
        self._kept: dict[str, tuple[float, Value]] = {}
        self._lock = threading.Lock()

    def get(self, key: str) -> Value:
        now = self.clock()
        with self._lock:
            kept = self._kept.get(key)
        if kept is not None and now - kept[0] < self.seconds:
            return kept[1]
        try:
            value = self.fetch(key)
        except LookupFailed as error:
            logger.warning("group membership unavailable (no groups used): %s", error)
            return self.empty
        with self._lock:
            self._kept[key] = (now, value)
        return value
