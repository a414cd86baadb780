"""The SQLite connection the store uses: after `close()`, our StoreClosedError, not the
driver's `sqlite3.ProgrammingError`, so code outside storage (the index warmer) can tell a
closed store from a bug without importing sqlite3."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from typing import Any

from docassist.core.errors import StoreClosedError


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


def connect(path: str, timeout_seconds: float) -> ClosableConnection:
    connection = sqlite3.connect(path, check_same_thread=False, isolation_level=None,
                                 timeout=timeout_seconds, uri=path.startswith("file:"),
                                 factory=ClosableConnection)  # uri: e.g. file:/x.db?mode=ro
    assert isinstance(connection, ClosableConnection)
    return connection
