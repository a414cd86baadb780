"""Group commit: concurrent writers share transactions; each gets its own result or error."""

from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

from docassist.core.batching import once_after_batch
from docassist.core.errors import StorageError, StoreClosedError
from docassist.storage import Store
from docassist.storage.group_commit import GroupCommit
from tests.helpers import message


def test_a_burst_shares_transactions_and_every_caller_gets_its_result() -> None:
    batches: list[list[int]] = []
    first_batch_writing = threading.Event()
    release = threading.Event()

    def write(items: list[int]) -> list[int]:
        batches.append(items)
        if len(batches) == 1:  # hold the first transaction while the rest queue up
            first_batch_writing.set()
            release.wait(10)
        return [item * 10 for item in items]

    commit: GroupCommit[int, int] = GroupCommit(write)
    with ThreadPoolExecutor(max_workers=20) as pool:
        first = pool.submit(commit.submit, 0)
        assert first_batch_writing.wait(10)
        rest = [pool.submit(commit.submit, item) for item in range(1, 20)]
        while sum(len(batch) for batch in batches) + len(commit._queue) < 20:  # all queued
            threading.Event().wait(0.01)
        release.set()
        assert first.result() == 0 and [f.result() for f in rest] == [i * 10 for i in
                                                                        range(1, 20)]
    assert batches[0] == [0] and len(batches) == 2  # the 19 others: one transaction
    assert sorted(batches[1]) == list(range(1, 20))


def test_a_failed_transaction_fails_each_of_its_callers_and_not_the_next() -> None:
    calls: list[list[str]] = []

    def write(items: list[str]) -> list[str]:
        calls.append(items)
        if "bad" in items:
            raise StorageError("disk full")
        return items

    commit: GroupCommit[str, str] = GroupCommit(write)
    with pytest.raises(StorageError, match="disk full"):
        commit.submit("bad")
    assert commit.submit("good") == "good"


def test_a_burst_of_events_is_stored_once_each(db_path: Path) -> None:
    store = Store(db_path)
    try:
        messages = [message("How do I renew TLS?", thread=f"t{i % 5}", event_id=f"Ev{i % 30}")
                    for i in range(60)]  # every event twice, as Slack retries do
        with ThreadPoolExecutor(max_workers=30) as pool:
            ids = list(pool.map(lambda m: store.enqueue(m, dedupe_key=m.event_id), messages))
        stored = [i for i in ids if i is not None]
        assert len(stored) == 30 and len(set(stored)) == 30
        assert sorted(row["event_id"] for row in store.inbox_rows()) == sorted(
            f"Ev{i}" for i in range(30))
        assert store.inbox_seen("test", "Ev7", None) and not store.inbox_seen("test", "Ev99",
                                                                              None)
    finally:
        store.close()


def test_an_item_submitted_soon_is_committed_by_the_writer_thread_with_blocking_ones(
        ) -> None:
    """`submit_soon` returns before the write; items queued meanwhile, by either call, share
    the next transaction, in the order they were queued."""
    batches: list[list[int]] = []
    writer_threads: set[str] = set()
    first_batch_writing = threading.Event()
    release = threading.Event()

    def write(items: list[int]) -> list[int]:
        batches.append(items)
        writer_threads.add(threading.current_thread().name)
        if len(batches) == 1:
            first_batch_writing.set()
            release.wait(10)
        return [item * 10 for item in items]

    commit: GroupCommit[int, int] = GroupCommit(write)
    first = commit.submit_soon(0)  # the writer thread leads it, and holds it
    assert first_batch_writing.wait(10) and not first.done()
    soon = [commit.submit_soon(item) for item in range(1, 5)]
    with ThreadPoolExecutor(max_workers=1) as pool:
        blocking = pool.submit(commit.submit, 5)
        while len(commit._queue) < 5:  # all queued behind the first batch
            threading.Event().wait(0.01)
        release.set()
        assert blocking.result(10) == 50
    assert [future.result(10) for future in [first, *soon]] == [0, 10, 20, 30, 40]
    assert batches == [[0], [1, 2, 3, 4, 5]]
    assert "group-commit" in writer_threads
    commit.close()


def test_a_failed_transaction_fails_the_futures_of_its_items_and_not_the_next() -> None:
    def write(items: list[str]) -> list[str]:
        if "bad" in items:
            raise StorageError("disk full")
        return items

    commit: GroupCommit[str, str] = GroupCommit(write)
    failed = commit.submit_soon("bad")
    with pytest.raises(StorageError, match="disk full"):
        failed.result(10)
    assert commit.submit_soon("good").result(10) == "good"
    commit.close()


def test_close_commits_what_was_queued_then_refuses_items_submitted_soon() -> None:
    written: list[str] = []
    writing = threading.Event()
    release = threading.Event()

    def write(items: list[str]) -> list[str]:
        writing.set()
        release.wait(10)
        written.extend(items)
        return items

    commit: GroupCommit[str, str] = GroupCommit(write)
    queued = [commit.submit_soon("a"), commit.submit_soon("b")]
    assert writing.wait(10)
    closing = threading.Thread(target=commit.close)
    closing.start()
    release.set()
    closing.join(10)
    assert not closing.is_alive()  # close waited for the queue, then the writer ended
    assert [future.result(0) for future in queued] == ["a", "b"] and written == ["a", "b"]
    late = commit.submit_soon("c")
    with pytest.raises(StoreClosedError):
        late.result(0)
    assert commit.submit("d") == "d"  # a blocking caller still writes on its own thread


def test_a_store_closed_with_events_queued_soon_has_stored_them(db_path: Path) -> None:
    store = Store(db_path)
    futures = [store.enqueue_soon(message("How do I renew TLS?", thread=f"t{i}",
                                          event_id=f"EvSoon{i}")) for i in range(20)]
    store.close()
    assert all(future.done() and future.exception() is None for future in futures)
    reopened = Store(db_path)
    try:
        assert len(reopened.inbox_rows()) == 20
    finally:
        reopened.close()


def test_what_the_futures_of_one_batch_ask_for_runs_once_after_all_are_complete() -> None:
    """One wake-up per committed batch, not per event (core/batching.py)."""
    writing, release = threading.Event(), threading.Event()
    rings: list[int] = []

    def write(items: list[int]) -> list[int]:
        writing.set()
        release.wait(10)
        return items

    commit: GroupCommit[int, int] = GroupCommit(write)
    first = commit.submit_soon(0)
    assert writing.wait(10)
    held = [commit.submit_soon(item) for item in range(1, 6)]  # queued: the second batch
    done: list[int] = []

    def ring() -> None:
        rings.append(len(done))

    def committed(future: Future[int | None]) -> None:
        done.append(future.result() or 0)
        once_after_batch(ring)

    for future in held:
        future.add_done_callback(committed)
    release.set()
    assert [future.result(10) for future in [first, *held]] == [0, 1, 2, 3, 4, 5]
    commit.close()
    assert rings == [5]  # once, after the fifth
