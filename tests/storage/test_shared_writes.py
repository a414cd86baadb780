"""Shared write transactions (storage/shared_writes.py) on a real SQLite file: writes queued
while one commits share the next transaction, each keeps its own outcome, and a transaction
that fails fails every write in it."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import pytest

from docassist.core.errors import ConcurrentUpdateError, StorageError
from docassist.storage import Store
from docassist.storage.shared_writes import SharedWrites
from tests.helpers import message


class Transactions:
    """BEGIN IMMEDIATE … COMMIT on one connection to a real file, counted."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.connection = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self.connection.execute("CREATE TABLE IF NOT EXISTS rows (value INTEGER UNIQUE)")
        self.begun = 0
        self.fail_commit_of: int | None = None
        """The transaction (1, 2, …) whose COMMIT fails."""

    @contextmanager
    def __call__(self) -> Iterator[sqlite3.Connection]:
        self.begun += 1
        self.connection.execute("BEGIN IMMEDIATE")
        try:
            yield self.connection
            if self.begun == self.fail_commit_of:
                raise StorageError("database or disk is full")
            self.connection.execute("COMMIT")
        except BaseException:
            if self.connection.in_transaction:  # SQLite may have rolled back already
                self.connection.execute("ROLLBACK")
            raise

    def values(self) -> list[int]:
        with sqlite3.connect(self.path) as other:  # another connection sees committed rows only
            return sorted(row[0] for row in other.execute("SELECT value FROM rows"))


@pytest.fixture
def transactions(tmp_path: Path) -> Transactions:
    return Transactions(tmp_path / "rows.db")


@pytest.fixture
def writes(transactions: Transactions) -> SharedWrites:
    return SharedWrites(transactions)


def insert(value: int) -> Callable[[sqlite3.Connection], int]:
    def body(connection: sqlite3.Connection) -> int:
        connection.execute("INSERT INTO rows (value) VALUES (?)", [value])
        return value
    return body


class BehindAHeldWrite:
    """A first write holds the transaction open; writes added meanwhile queue behind it, in
    the order added, and share the next transaction once it is let go."""

    def __init__(self, writes: SharedWrites, pool: ThreadPoolExecutor) -> None:
        self.writes, self.pool = writes, pool
        self._writing, self._release = threading.Event(), threading.Event()
        self.first = pool.submit(writes.write, self._held)
        assert self._writing.wait(10)

    def _held(self, connection: sqlite3.Connection) -> str:
        self._writing.set()
        self._release.wait(10)
        return "first"

    def add(self, body: Callable[[sqlite3.Connection], object]) -> Future[object]:
        queued = len(self.writes._batches._queue)
        future = self.pool.submit(self.writes.write, body)
        while len(self.writes._batches._queue) <= queued:  # in the queue, in this order
            threading.Event().wait(0.01)
        return future

    def let_go(self) -> str:
        self._release.set()
        return str(self.first.result())


def test_writes_queued_meanwhile_share_one_transaction_and_each_gets_its_result(
        transactions: Transactions, writes: SharedWrites) -> None:
    with ThreadPoolExecutor(max_workers=12) as pool:
        held = BehindAHeldWrite(writes, pool)
        rest = [held.add(insert(value)) for value in range(10)]
        assert held.let_go() == "first"
        assert [future.result() for future in rest] == list(range(10))
    assert transactions.begun == 2  # the ten: one transaction, one fsync
    assert transactions.values() == list(range(10))


def test_a_write_that_raises_is_undone_alone_and_its_caller_gets_the_error(
        transactions: Transactions, writes: SharedWrites) -> None:

    def conflicting(connection: sqlite3.Connection) -> None:
        connection.execute("INSERT INTO rows (value) VALUES (100)")  # undone with it
        raise ConcurrentUpdateError("conversation at version 3, expected 2")

    with ThreadPoolExecutor(max_workers=5) as pool:
        held = BehindAHeldWrite(writes, pool)
        before = held.add(insert(1))
        bad = held.add(conflicting)
        duplicate = held.add(insert(1))  # a UNIQUE violation: SQLite's error
        after = held.add(insert(2))
        held.let_go()
        assert before.result() == 1 and after.result() == 2
        with pytest.raises(ConcurrentUpdateError, match="version 3"):
            bad.result()
        with pytest.raises(StorageError, match="UNIQUE"):  # ours, as every store error is
            duplicate.result()
    assert transactions.begun == 2
    assert transactions.values() == [1, 2]


def test_a_transaction_that_fails_at_commit_fails_every_write_in_it(
        transactions: Transactions, writes: SharedWrites) -> None:
    with ThreadPoolExecutor(max_workers=5) as pool:
        held = BehindAHeldWrite(writes, pool)
        queued = [held.add(insert(value)) for value in range(3)]
        transactions.fail_commit_of = 2
        held.let_go()
        for future in queued:
            with pytest.raises(StorageError, match="full"):
                future.result()
    assert transactions.values() == []  # none of the three is stored
    assert writes.write(insert(7)) == 7  # the next transaction is a fresh one
    assert transactions.values() == [7]


def test_a_write_that_ends_the_transaction_fails_the_writes_before_it_too(
        transactions: Transactions, writes: SharedWrites) -> None:
    """SQLite rolls a whole transaction back on some errors (a full disk, an I/O error):
    then no write of the batch stands, and none of their callers is told it was stored."""

    def rolled_back(connection: sqlite3.Connection) -> None:
        connection.execute("ROLLBACK")  # as SQLite does itself on those errors
        raise sqlite3.OperationalError("disk I/O error")

    with ThreadPoolExecutor(max_workers=4) as pool:
        held = BehindAHeldWrite(writes, pool)
        before = held.add(insert(1))
        failing = held.add(rolled_back)
        held.let_go()
        for future in (before, failing):
            with pytest.raises(sqlite3.OperationalError, match="disk I/O"):
                future.result()
    assert transactions.values() == []


def test_a_write_made_inside_another_joins_it_instead_of_waiting_for_itself(
        transactions: Transactions, writes: SharedWrites) -> None:

    def outer(connection: sqlite3.Connection) -> int:
        connection.execute("INSERT INTO rows (value) VALUES (1)")
        return writes.write(insert(2)) + 1  # would deadlock if queued behind its own batch

    assert writes.write(outer) == 3
    assert transactions.begun == 1
    assert transactions.values() == [1, 2]


def test_a_turn_process_s_writes_commit_their_own_outcomes_on_the_store(db_path: Path) -> None:
    """Concurrent claims, finishes and probes on one Store: every finish is stored, every
    event is claimed once, and a probe stores nothing."""
    store = Store(db_path)
    try:
        ids = [store.enqueue(message("How do I renew TLS?", thread=f"t{i}", event_id=f"Ev{i}"))
               for i in range(24)]
        with ThreadPoolExecutor(max_workers=12) as pool:
            claims = list(pool.map(lambda _: store.claim("test", "holder", 30.0, 2), range(12)))
            claimed = sorted(event.id for batch in claims for event in batch)
            assert claimed == sorted(i for i in ids if i is not None)  # each once

            def probe_then_finish(inbox_id: int) -> None:
                store.ensure_writable()
                store.finish(inbox_id, "done")

            list(pool.map(probe_then_finish, claimed))
        rows = store.inbox_rows()
        assert {row["status"] for row in rows} == {"done"} and len(rows) == 24
        assert all(row["claimed_by"] is None for row in rows)
    finally:
        store.close()
