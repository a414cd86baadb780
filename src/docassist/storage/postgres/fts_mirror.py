"""The searchable rows of a PostgreSQL store, mirrored into an in-memory SQLite FTS5 table.

Search on PostgreSQL uses the same in-process index as on SQLite (storage/search.py: BM25
from the FTS rows, phrases scored by FTS5; measured against PostgreSQL's own full text,
docs/scaling-out.md). That index asks its store for FTS rows by rowid and for FTS5's bm25
of a phrase; this mirror answers both with the SQLite store's own queries
(storage/full_text.py) from a copy of `chunks_fts` kept in step with the database: when the
index version moved, rows deleted there are deleted here and rows added there are read (only
those), so a replica that did not index catches up without a restart and reads each row
once. PostgreSQL-only: SQLite runs the queries on its own file.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from docassist.storage.full_text import Fts5Queries

Rows = Callable[[str, list[Any]], list[tuple[Any, ...]]]
"""Runs a query on PostgreSQL and returns its rows."""


class FtsMirror(Fts5Queries):
    """The copy, answering full_text.py's queries (storage/full_text.FullText) once synced."""

    def __init__(self, read: Rows) -> None:
        super().__init__(self._locked)
        self._read = read
        self._lock = threading.Lock()
        self._db = sqlite3.connect(":memory:", check_same_thread=False)
        self._db.execute("CREATE VIRTUAL TABLE chunks_fts USING fts5("
                         "chunk_id UNINDEXED, title, section, body, tokenize = 'unicode61')")
        self._version = -1

    @contextmanager
    def _locked(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            yield self._db

    def sync(self, version: int) -> None:
        """Bring the copy to `version` (read by the caller before the rows, so a change made
        meanwhile is caught by the next call)."""
        with self._lock:
            if version == self._version:
                return
            wanted = {int(row[0]) for row in self._read("SELECT rowid FROM chunks_fts", [])}
            held = {int(row[0]) for row in self._db.execute("SELECT rowid FROM chunks_fts")}
            gone = sorted(held - wanted)
            self._db.executemany("DELETE FROM chunks_fts WHERE rowid = ?",
                                 [(rowid,) for rowid in gone])
            new = sorted(wanted - held)
            for start in range(0, len(new), 5000):
                rows = self._read("SELECT rowid, chunk_id, title, section, body FROM chunks_fts "
                                  "WHERE rowid = ANY(%s)", [new[start:start + 5000]])
                self._db.executemany("INSERT INTO chunks_fts (rowid, chunk_id, title, section, "
                                     "body) VALUES (?, ?, ?, ?, ?)", rows)
            self._version = version

    def close(self) -> None:
        self._db.close()
