"""Turns per minute, per user and in total: a sliding window that says when to try again.

Each arrival is counted once, by its id: a platform's concurrent duplicate deliveries of one
message (retries, or one message sent as two event types) get the verdict of the first and
take no more budget. `SharedRateLimiter` keeps the window in the store, so processes sharing
a database share the limits (a retry landing on another process is still one arrival);
`RateLimiter` keeps it in memory (one process).
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Final, Protocol

from docassist.core.messages import ChatMessage
from docassist.core.ports import RateCheck, RateCounter
from docassist.core.trace import sha256_text

WINDOW_SECONDS: Final = 60.0
DEFAULT_PER_USER: Final = 20
DEFAULT_GLOBAL: Final = 300


class RateLimiter:
    def __init__(self, per_user: int = DEFAULT_PER_USER, global_limit: int = DEFAULT_GLOBAL,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.per_user = per_user
        self.global_limit = global_limit
        self.clock = clock
        self._users: dict[str, deque[float]] = {}
        self._all: deque[float] = deque()
        self._verdicts: dict[str, tuple[float, int]] = {}
        """Arrival id → (when, verdict) for the ids seen in the window."""
        self._lock = threading.Lock()

    def check(self, user: str, arrival_id: str | None = None) -> int:
        """0 and the turn is counted, or the whole seconds to wait before trying again.
        An `arrival_id` seen within the window gets its first verdict again, uncounted."""
        now = self.clock()
        with self._lock:
            self._forget_before(now - WINDOW_SECONDS)
            if arrival_id is not None and arrival_id in self._verdicts:
                return self._verdicts[arrival_id][1]
            verdict = self._count(user, now)
            if arrival_id is not None:
                self._verdicts[arrival_id] = (now, verdict)
            return verdict

    def _count(self, user: str, now: float) -> int:
        mine = self._users.setdefault(user, deque())
        for window in (mine, self._all):
            while window and window[0] <= now - WINDOW_SECONDS:
                window.popleft()
        waits = [window[0] + WINDOW_SECONDS - now
                 for window, limit in ((mine, self.per_user), (self._all, self.global_limit))
                 if limit > 0 and len(window) >= limit]
        if waits:
            return max(1, math.ceil(max(waits)))
        mine.append(now)
        self._all.append(now)
        return 0

    def in_store(self, user: str, arrival_id: str,
                 limited: Callable[[float], ChatMessage]) -> RateCheck | None:
        return None  # counted in memory, by `check`

    def _forget_before(self, cutoff: float) -> None:
        """Drop remembered verdicts older than the window (dicts keep insertion order)."""
        while self._verdicts:
            oldest, (when, _) = next(iter(self._verdicts.items()))
            if when > cutoff:
                return
            del self._verdicts[oldest]


class Limiter(Protocol):
    per_user: int
    global_limit: int

    def check(self, user: str, arrival_id: str | None = None) -> int:
        """0 when the arrival is admitted (and counted), else whole seconds to wait."""
        ...

    def in_store(self, user: str, arrival_id: str,
                 limited: Callable[[float], ChatMessage]) -> RateCheck | None:
        """The check to make in the store with the event's insert, or None when this
        limiter counts elsewhere (`check`) or nothing is limited."""
        ...


def seconds_until(retry_at: float) -> int:
    """Whole seconds (at least 1) until the epoch second `retry_at`."""
    return max(1, math.ceil(retry_at - time.time()))


class SharedRateLimiter:
    """The same window, counted in the store: one atomic statement per check (see the store's
    `count_arrival`). Users are stored as hashes. Wall-clock time, as every process must
    agree on it."""

    def __init__(self, counter: RateCounter, per_user: int = DEFAULT_PER_USER,
                 global_limit: int = DEFAULT_GLOBAL) -> None:
        self.counter = counter
        self.per_user = per_user
        self.global_limit = global_limit

    def check(self, user: str, arrival_id: str | None = None) -> int:
        if not self.per_user and not self.global_limit:
            return 0  # unlimited: nothing to count, no write on the ack path
        retry_at = self.counter.count_arrival(str(sha256_text(user)), arrival_id or _fresh_id(),
                                              self.per_user, self.global_limit,
                                              WINDOW_SECONDS)
        return seconds_until(retry_at) if retry_at else 0

    def in_store(self, user: str, arrival_id: str,
                 limited: Callable[[float], ChatMessage]) -> RateCheck | None:
        if not self.per_user and not self.global_limit:
            return None
        return RateCheck(user_key=str(sha256_text(user)), arrival_id=arrival_id,
                         per_user=self.per_user, global_limit=self.global_limit,
                         window=WINDOW_SECONDS, limited=limited)


def _fresh_id() -> str:
    """An arrival without a platform id is its own arrival."""
    return f"anon-{time.time_ns()}-{threading.get_ident()}"
