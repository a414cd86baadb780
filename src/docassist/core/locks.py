"""One lock per key, kept only while someone holds or waits for it."""

from __future__ import annotations

import threading
from collections.abc import Hashable, Iterator
from contextlib import contextmanager


class KeyedLocks:
    """Serializes work per key (a conversation) without keeping a lock for every key ever
    seen: an entry lives while a thread holds or waits for it, then is dropped."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._entries: dict[Hashable, tuple[threading.Lock, int]] = {}

    def __len__(self) -> int:
        """Keys currently held or waited for."""
        with self._guard:
            return len(self._entries)

    @contextmanager
    def hold(self, key: Hashable) -> Iterator[None]:
        with self._guard:
            lock, users = self._entries.get(key, (threading.Lock(), 0))
            self._entries[key] = (lock, users + 1)
        try:
            with lock:
                yield
        finally:
            with self._guard:
                lock, users = self._entries[key]
                if users == 1:
                    del self._entries[key]
                else:
                    self._entries[key] = (lock, users - 1)
