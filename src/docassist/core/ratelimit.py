"""Turns per minute, per user and in total: a sliding window that says when to try again."""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Final

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
        self._lock = threading.Lock()

    def check(self, user: str) -> int:
        """0 and the turn is counted, or the whole seconds to wait before trying again."""
        now = self.clock()
        with self._lock:
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
