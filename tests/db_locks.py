"""Other connections holding SQLite's write lock on the real database file."""

from __future__ import annotations

import sqlite3
from pathlib import Path

SHORT_BUSY_TIMEOUT_MS = 50
"""Tests shorten SQLite's busy wait so that the bounded retries end quickly."""


class LockHolder:
    """A second connection (as another process would have) holding the write lock."""

    def __init__(self, path: Path) -> None:
        self.connection = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self.connection.execute("BEGIN EXCLUSIVE")

    def release(self) -> None:
        if self.connection.in_transaction:
            self.connection.execute("ROLLBACK")

    def close(self) -> None:
        self.release()
        self.connection.close()


class WriteLock:
    """Another connection (an indexer, a backup, another process) holding the write lock
    on the real database file: BEGIN IMMEDIATE, released on demand."""

    def __init__(self, path: Path) -> None:
        self.connection = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self.connection.execute("BEGIN IMMEDIATE")

    def release(self) -> None:
        if self.connection.in_transaction:
            self.connection.execute("ROLLBACK")
        self.connection.close()
