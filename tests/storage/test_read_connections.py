"""A turn's reads do not queue behind the store's shared connection while it waits for
another process's write lock (storage/connection.ReadConnections)."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from docassist.core.errors import StoreClosedError
from docassist.storage import Store
from docassist.storage.connection import ReadConnections, connect
from docassist.storage.limits import STORAGE_READ_CONNECTIONS
from docassist.storage.search import Bm25Retriever
from tests.db_locks import WriteLock
from tests.helpers import message


def test_reads_answer_while_a_write_waits_for_another_process_lock(
        db_path: Path, store: Store) -> None:
    retriever = Bm25Retriever(store)
    retriever.search("renew certificate", 1)  # the index is built (a server warms it)
    lock = WriteLock(db_path)  # another process holds the write lock
    writing = threading.Thread(target=lambda: store.enqueue(message("Renew TLS?", event_id="E1")))
    try:
        writing.start()
        assert _held_elsewhere(store._lock)  # the shared connection waits for the lock
        [hit] = retriever.search("renew certificate", 1)
        assert store.chunk(hit.chunk.chunk_id) is not None
        assert store.index_version() > 0 and store.document(hit.document.document_id)
        assert store.scope_mappings() == {}
        assert not store.event_seen("test", "E1")
        assert writing.is_alive()  # every read above answered while the write still waited
    finally:
        lock.release()
    writing.join(30)
    assert not writing.is_alive()
    assert [row["event_id"] for row in store.inbox_rows()] == ["E1"]


def _held_elsewhere(lock: Any) -> bool:
    """Wait (up to 10 s) until another thread holds `lock`."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if not lock.acquire(blocking=False):
            return True
        lock.release()
        time.sleep(0.005)
    return False


def test_a_read_after_close_is_refused_and_close_waits_for_a_lent_connection(
        db_path: Path) -> None:
    opened: list[sqlite3.Connection] = []

    def open_one() -> sqlite3.Connection:
        opened.append(connect(str(db_path), 1.0))
        return opened[-1]

    readers = ReadConnections(open_one, 2)
    with readers.lend() as first, readers.lend() as second:
        assert first is not second
    with readers.lend():
        closing = threading.Thread(target=readers.close)
        closing.start()
        closing.join(0.2)
        assert closing.is_alive()  # the lent connection is not closed under its read
    closing.join(10)
    assert not closing.is_alive() and len(opened) == 2  # never more than its size
    with pytest.raises(StoreClosedError), readers.lend():
        pass
    with pytest.raises(StoreClosedError):
        opened[0].execute("SELECT 1")


def test_a_store_keeps_a_bounded_number_of_read_connections(store: Store) -> None:
    results: list[int] = []
    threads = [threading.Thread(target=lambda: results.append(store.index_version()))
               for _ in range(4 * STORAGE_READ_CONNECTIONS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert len(set(results)) == 1 and len(results) == len(threads)
    assert store._readers._opened <= STORAGE_READ_CONNECTIONS
