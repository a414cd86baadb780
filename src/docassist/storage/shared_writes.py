"""Shared write transactions: a process's writes that queue for its SQLite connection run
in one transaction, each in a savepoint of its own.

A turn process runs dozens of turns on one connection, and each turn writes a few times
(the claim, the write probe, the turn's commit, the finish). One transaction each meant
one BEGIN IMMEDIATE (a wait for the other processes' writers), one fsync and every GIL
hand-back of its statements, all while the process's other writers waited: under a
50-conversation burst a write waited ~90 ms for the connection (p50) and a turn spent a
third of its life there. Here the first writer waiting leads (core/batching.SharedBatches):
it opens one transaction, runs every queued write in its own savepoint and commits once.

Each write keeps its own outcome: one that raises is rolled back to its savepoint alone and
its caller gets the error (a version conflict, a duplicate event); the others commit. When
the transaction itself fails (busy past the bounded wait, the disk full at COMMIT, an error
SQLite answers by rolling everything back), every write of the batch gets that error: none
of them is stored, as each caller is told. Nothing returns before its COMMIT.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, Final, Protocol, TypeVar, cast

from docassist.core.batching import SharedBatches
from docassist.storage.connection import storage_error
from docassist.storage.limits import MAX_SHARED_WRITES

T = TypeVar("T")
Body = Callable[[sqlite3.Connection], Any]

_SAVEPOINT: Final = "shared_write"


class _Outcome:
    __slots__ = ("error", "value")

    def __init__(self, value: object = None, error: BaseException | None = None) -> None:
        self.value = value
        self.error = error


class SharesWrites(Protocol):
    """The store's side the row mixins write through (database.Store._shared_write)."""

    def _shared_write(self, body: Callable[[sqlite3.Connection], T]) -> T: ...


class _Leading(threading.local):
    connection: sqlite3.Connection | None = None
    """The transaction this thread runs a batch in (None: it leads none)."""


class SharedWrites:
    def __init__(self, transaction: Callable[[], AbstractContextManager[sqlite3.Connection]]
                 ) -> None:
        """`transaction` opens the store's write transaction (BEGIN IMMEDIATE … COMMIT)."""
        self._transaction = transaction
        self._batches: SharedBatches[Body, _Outcome] = SharedBatches(
            self._run, max_batch=MAX_SHARED_WRITES, thread_name="shared-writes")
        self._leading = _Leading()

    def write(self, body: Callable[[sqlite3.Connection], T]) -> T:
        """Run `body` in a write transaction (perhaps shared); its result once committed."""
        connection = self._leading.connection
        if connection is not None:  # a write from inside one: queued, it would wait for itself
            outcome: _Outcome | None = _in_savepoint(connection, body)
        else:
            outcome = self._batches.submit(body)
        assert outcome is not None
        if outcome.error is not None:
            raise outcome.error
        return cast(T, outcome.value)

    def _run(self, bodies: list[Body]) -> list[_Outcome]:
        with self._transaction() as connection:
            self._leading.connection = connection
            try:
                return [_in_savepoint(connection, body) for body in bodies]
            finally:
                self._leading.connection = None


def _in_savepoint(connection: sqlite3.Connection, body: Body) -> _Outcome:
    connection.execute(f"SAVEPOINT {_SAVEPOINT}")
    try:
        value = body(connection)
    except BaseException as error:
        if not connection.in_transaction:
            raise  # SQLite rolled the whole transaction back: no write of the batch stands
        connection.execute(f"ROLLBACK TO {_SAVEPOINT}")
        connection.execute(f"RELEASE {_SAVEPOINT}")
        if isinstance(error, sqlite3.Error):
            converted = storage_error(error)
            converted.__cause__ = error
            return _Outcome(error=converted)
        return _Outcome(error=error)
    connection.execute(f"RELEASE {_SAVEPOINT}")
    return _Outcome(value)
