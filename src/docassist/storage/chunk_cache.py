"""Chunks kept in memory by id, for both stores: a chunk id names one version of one section
(`core.documents.chunk_id` holds its document's content hash), so its text never changes;
only pruning removes one. A turn reads a chunk by id for every section of a procedure
(core/procedure.py) and a hybrid question ~20 candidates, each a query otherwise. Emptied
when the store sees the index version move (an indexing or a removal, in this process or
another; every search looks) and when this process prunes. A prune does not move the
version, so a chunk another process pruned stays readable here until the version next
moves: the superseded text an old answer cited, as it was."""

from __future__ import annotations

import threading

from docassist.core.documents import Chunk
from docassist.storage.limits import CHUNK_CACHE_ENTRIES


class ChunkCache:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._chunks: dict[str, Chunk] = {}
        self._version = -1

    def get(self, chunk_id: str) -> Chunk | None:
        with self._lock:
            return self._chunks.get(chunk_id)

    def keep(self, chunk: Chunk) -> None:
        with self._lock:
            if len(self._chunks) >= CHUNK_CACHE_ENTRIES:
                self._chunks.pop(next(iter(self._chunks)))  # the oldest entry
            self._chunks[chunk.chunk_id] = chunk

    def seen_version(self, version: int) -> None:
        """The index version just read: a move empties the cache (pruned chunks go too)."""
        with self._lock:
            if version != self._version:
                self._chunks.clear()
                self._version = version

    def clear(self) -> None:
        with self._lock:
            self._chunks.clear()
