"""The Store under real SQLite faults: a lock held by another connection, a read-only file,
a full database. Each fault is SQLite's own, on a real file; nothing of ours is replaced."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from docassist.core.errors import StorageBusyError, StorageFullError, StorageReadOnlyError
from docassist.storage import Store
from docassist.storage.limits import STORAGE_RETRY_BACKOFF_SECONDS, STORAGE_WRITE_ATTEMPTS
from tests.db_locks import SHORT_BUSY_TIMEOUT_MS, LockHolder
from tests.helpers import message


@pytest.fixture
def holder(db_path: Path, store: Store) -> Iterator[LockHolder]:
    held = LockHolder(db_path)
    yield held
    held.close()


class ReleaseOnRetry(logging.Handler):
    """Releases the lock when the store logs its first busy retry: proof that it retried."""

    def __init__(self, holder: LockHolder) -> None:
        super().__init__(logging.INFO)
        self.holder = holder
        self.retries: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage().startswith("database busy"):
            self.retries.append(record.getMessage())
            self.holder.release()


def test_a_busy_write_is_retried_and_succeeds_once_the_lock_is_free(
        store: Store, holder: LockHolder) -> None:
    store.db.execute(f"PRAGMA busy_timeout = {SHORT_BUSY_TIMEOUT_MS}")
    watcher = ReleaseOnRetry(holder)
    database_logger = logging.getLogger("docassist.storage.database")
    database_logger.addHandler(watcher)
    previous_level = database_logger.level
    database_logger.setLevel(logging.INFO)
    try:
        inbox_id = store.enqueue(message("How do I renew TLS?", event_id="Ev1"))
    finally:
        database_logger.removeHandler(watcher)
        database_logger.setLevel(previous_level)
    assert inbox_id is not None
    assert watcher.retries == [f"database busy (attempt 1 of {STORAGE_WRITE_ATTEMPTS}), "
                               f"retrying in {STORAGE_RETRY_BACKOFF_SECONDS:.2f} s"]
    assert [row["event_id"] for row in store.inbox_rows()] == ["Ev1"]


def test_a_lock_held_past_the_bound_is_a_busy_error_and_nothing_is_written(
        store: Store, holder: LockHolder) -> None:
    store.db.execute(f"PRAGMA busy_timeout = {SHORT_BUSY_TIMEOUT_MS}")
    with pytest.raises(StorageBusyError, match="held the write lock"):
        store.enqueue(message("How do I renew TLS?", event_id="Ev1"))
    with pytest.raises(StorageBusyError):
        store.ensure_writable()
    assert store.documents()  # reads go on: WAL readers never wait for a writer
    holder.release()
    assert store.inbox_rows() == []
    store.ensure_writable()  # the lock is free again: writes work without a restart


def test_a_read_only_database_reads_but_refuses_every_write(db_path: Path) -> None:
    # mode=ro is the state SQLite opens a write-protected file in (root ignores chmod).
    read_only = Store(f"file:{db_path}?mode=ro")
    try:
        assert {d.document_id for d in read_only.documents()} >= {"DOC-TLS", "DOC-INSTR"}
        with pytest.raises(StorageReadOnlyError, match="read-only"):
            read_only.ensure_writable()
        with pytest.raises(StorageReadOnlyError):
            read_only.enqueue(message("How do I renew TLS?", event_id="Ev1"))
        assert read_only.inbox_rows() == []
    finally:
        read_only.close()


def fill_until_full(store: Store) -> int:
    """Inbox rows of ~1.5 KB until SQLite has no page left; returns how many were stored."""
    page_count = store.db.execute("PRAGMA page_count").fetchone()[0]
    store.db.execute(f"PRAGMA max_page_count = {page_count}")  # the disk ends here
    for stored in range(1000):
        try:
            store.enqueue(message("x" * 1500, thread=f"fill-{stored}", event_id=f"F{stored}"))
        except StorageFullError:
            return stored
    raise AssertionError("the database never filled up")


def test_a_full_database_rolls_the_whole_transaction_back(store: Store) -> None:
    stored = fill_until_full(store)
    # SQLite has already rolled the transaction back itself; the error is still ours.
    with pytest.raises(StorageFullError, match="full"):
        store.enqueue(message("x" * 1500, thread="one-more", event_id="Fmore"))
    assert len(store.inbox_rows()) == stored
    with pytest.raises(StorageFullError, match="page limit"):
        store.ensure_writable()  # a no-op write would pass; the room check sees the limit
    store.db.execute("PRAGMA max_page_count = 1073741823")  # space freed
    assert store.enqueue(message("x" * 1500, thread="one-more", event_id="Fmore")) is not None
