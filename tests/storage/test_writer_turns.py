"""The writer turn: DocAssist's connections to one SQLite file take turns through an advisory
lock beside it (storage/writer_turns.py) before SQLite's own write lock. Real files, real
`flock`; a second `Store` or `WriterTurns` on the same file stands for another process."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

import pytest

from docassist.core.errors import StorageBusyError
from docassist.storage import Store
from docassist.storage.writer_turns import SUFFIX, WriterTurns
from tests.db_locks import SHORT_BUSY_TIMEOUT_MS
from tests.helpers import message


def _stored_event_ids(db_path: Path) -> list[str]:
    with sqlite3.connect(db_path) as reader:
        return [row[0] for row in reader.execute("SELECT event_id FROM inbox ORDER BY id")]


def test_a_write_waits_for_another_connections_turn_though_sqlite_is_free(
        db_path: Path, store: Store) -> None:
    other = WriterTurns(str(db_path))  # another process, between BEGIN and COMMIT
    assert other.take(0.0)
    writing = threading.Thread(target=store.enqueue,
                               args=(message("How do I renew TLS?", event_id="Ev1"),))
    writing.start()
    try:
        time.sleep(0.3)
        assert writing.is_alive()
        assert _stored_event_ids(db_path) == []  # it did not write beside the holder
    finally:
        other.give_back()
    writing.join(5)
    assert not writing.is_alive()
    assert _stored_event_ids(db_path) == ["Ev1"]
    other.close()


def test_a_turn_kept_past_the_bound_is_a_busy_error_and_nothing_is_written(
        db_path: Path, store: Store) -> None:
    store.db.execute(f"PRAGMA busy_timeout = {SHORT_BUSY_TIMEOUT_MS}")
    other = WriterTurns(str(db_path))
    assert other.take(0.0)
    try:
        with pytest.raises(StorageBusyError, match="another DocAssist connection kept writing"):
            store.enqueue(message("How do I renew TLS?", event_id="Ev1"))
        assert store.documents()  # reads go on
    finally:
        other.close()  # closing gives the turn back
    assert _stored_event_ids(db_path) == []
    store.enqueue(message("How do I renew TLS?", event_id="Ev2"))  # no restart needed
    assert _stored_event_ids(db_path) == ["Ev2"]


def test_a_transaction_that_fails_gives_the_turn_back(db_path: Path, store: Store) -> None:
    second = Store(db_path)
    second.db.execute(f"PRAGMA busy_timeout = {SHORT_BUSY_TIMEOUT_MS}")
    try:
        with pytest.raises(RuntimeError), store._transaction():
            raise RuntimeError("the body failed")
        second.enqueue(message("How do I renew TLS?", event_id="Ev1"))  # busy if still held
        assert _stored_event_ids(db_path) == ["Ev1"]
    finally:
        second.close()


def test_two_stores_writing_at_once_take_turns_and_lose_nothing(
        db_path: Path, store: Store) -> None:
    second = Store(db_path)
    errors: list[BaseException] = []

    def write(target: Store, prefix: str) -> None:
        try:
            for index in range(40):
                target.enqueue(message(f"question {index}", event_id=f"{prefix}{index}"))
        except BaseException as error:  # reported by the assertion below
            errors.append(error)

    writers = [threading.Thread(target=write, args=(target, prefix))
               for target, prefix in ((store, "A"), (second, "B"))]
    try:
        for writer in writers:
            writer.start()
        for writer in writers:
            writer.join(30)
    finally:
        second.close()
    assert errors == []
    assert sorted(_stored_event_ids(db_path)) == sorted(
        [f"A{index}" for index in range(40)] + [f"B{index}" for index in range(40)])


def test_a_file_whose_lock_cannot_be_created_is_written_without_a_turn(tmp_path: Path) -> None:
    turns = WriterTurns(str(tmp_path / "no-such-folder" / "docassist.db"))
    assert turns.take(0.0)  # SQLite's busy handler alone orders the writers
    turns.give_back()
    turns.close()
    assert not (tmp_path / "no-such-folder").exists()


def test_the_lock_file_beside_the_database_holds_no_data(db_path: Path, store: Store) -> None:
    store.enqueue(message("How do I renew TLS?", event_id="Ev1"))
    assert Path(f"{db_path}{SUFFIX}").read_bytes() == b""
