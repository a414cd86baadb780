"""The SQLite connection the store uses, and what every part of the store does with it.

After `close()`, our StoreClosedError, not the driver's `sqlite3.ProgrammingError`, so code
outside storage (the index warmer) can tell a closed store from a bug without importing
sqlite3. Also here, as the PostgreSQL store keeps them in postgres/connection.py: SQLite's
errors mapped to ours, and the time text every row is stamped with.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from docassist.core.errors import (
    StorageBusyError,
    StorageError,
    StorageFullError,
    StorageReadOnlyError,
    StorageUnavailableError,
    StoreClosedError,
)


class ClosableConnection(sqlite3.Connection):
    is_closed = False

    def close(self) -> None:
        self.is_closed = True
        super().close()

    def _check_open(self) -> None:
        if self.is_closed:
            raise StoreClosedError("the store is closed")

    @property
    def in_transaction(self) -> bool:  # sqlite-utils reads it before every statement
        self._check_open()
        return bool(sqlite3.Connection.in_transaction.__get__(self))

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        self._check_open()
        return super().execute(sql, parameters)

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> sqlite3.Cursor:
        self._check_open()
        return super().executemany(sql, parameters)

    def executescript(self, script: str, /) -> sqlite3.Cursor:
        self._check_open()
        return super().executescript(script)


class ReadConnections:
    """Up to `size` connections, opened when first needed and lent one read at a time.
    `close()` waits for those lent, then closes them all: a connection closed under a read
    crashes the interpreter. A read after `close()` gets StoreClosedError."""

    def __init__(self, open_connection: Callable[[], sqlite3.Connection], size: int) -> None:
        self.size = size
        self._open = open_connection
        self._idle: list[sqlite3.Connection] = []
        self._opened = 0
        self._closed = False
        self._changed = threading.Condition()

    @contextmanager
    def lend(self) -> Iterator[sqlite3.Connection]:
        connection = self._take()
        try:
            yield connection
        finally:
            with self._changed:
                self._idle.append(connection)
                self._changed.notify_all()

    def _take(self) -> sqlite3.Connection:
        with self._changed:
            while True:
                if self._closed:
                    raise StoreClosedError("the store is closed")
                if self._idle:
                    return self._idle.pop()
                if self._opened < self.size:
                    self._opened += 1
                    break
                self._changed.wait()
        try:
            return self._open()
        except BaseException:
            with self._changed:
                self._opened -= 1
                self._changed.notify_all()
            raise

    def close(self) -> None:
        with self._changed:
            self._closed = True
            while len(self._idle) < self._opened:
                self._changed.wait()
            for connection in self._idle:
                connection.close()
            self._idle.clear()
            self._opened = 0


def connect(path: str, timeout_seconds: float) -> ClosableConnection:
    connection = sqlite3.connect(path, check_same_thread=False, isolation_level=None,
                                 timeout=timeout_seconds, uri=path.startswith("file:"),
                                 factory=ClosableConnection)  # uri: e.g. file:/x.db?mode=ro
    assert isinstance(connection, ClosableConnection)
    return connection


_BUSY_CODES = frozenset({sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED})
_UNAVAILABLE_CODES = frozenset({sqlite3.SQLITE_IOERR, sqlite3.SQLITE_CANTOPEN,
                                sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB})


def _primary_code(error: sqlite3.Error) -> int | None:
    code = getattr(error, "sqlite_errorcode", None)
    return code & 0xFF if isinstance(code, int) else None


def is_busy(error: sqlite3.Error) -> bool:
    """Another connection holds the lock (worth waiting for and trying again)."""
    return _primary_code(error) in _BUSY_CODES


def storage_error(error: sqlite3.Error) -> StorageError:
    """SQLite's error as ours, by its primary result code."""
    code = _primary_code(error)
    if code in _BUSY_CODES:
        return StorageBusyError(f"database busy: another connection held the write lock past "
                                f"the bounded wait ({error})")
    if code == sqlite3.SQLITE_READONLY:
        return StorageReadOnlyError(f"database is read-only: {error}")
    if code == sqlite3.SQLITE_FULL:
        return StorageFullError(f"database or disk is full: {error}")
    if code in _UNAVAILABLE_CODES:
        return StorageUnavailableError(f"database unavailable: {error}")
    return StorageError(f"cannot save: {error}")


def now_iso() -> str:
    """A row's time: UTC ISO text with milliseconds, as every table stores it."""
    return iso_text(datetime.now(UTC))


def iso_text(moment: datetime) -> str:
    """A moment as the tables store it (ISO text with milliseconds)."""
    return moment.isoformat(timespec="milliseconds")
