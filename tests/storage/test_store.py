"""The SQLite store: migrations, atomic turns, version checks, event dedupe."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sqlite_utils import Database

from docassist.core.errors import ConcurrentUpdateError, DuplicateEventError, StorageError
from docassist.core.state import ConversationState
from docassist.storage import Bm25Retriever, Store
from docassist.storage import migrations as migration_module
from docassist.storage.migrations import migrations
from tests.helpers import key, turn_record

TABLES = {"documents", "chunks", "chunks_fts", "conversations", "turns", "tool_calls",
          "processed_events"}


def test_blank_database_is_migrated_in_wal_mode(tmp_path: Path) -> None:
    path = tmp_path / "blank.db"
    store = Store(path)
    assert set(store.db.table_names()) >= TABLES
    assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    every = [m.name for m in migrations.pending(Database(memory=True))]
    assert every[:2] == ["m001_initial", "m002_versions_and_embeddings"]
    assert [m.name for m in migrations.applied(store.db)] == every
    store.close()
    again = Store(path)  # opening again applies nothing twice
    assert [m.name for m in migrations.applied(again.db)] == every
    again.close()


def test_migrations_apply_to_an_in_memory_database() -> None:
    db = Database(memory=True)
    migrations.apply(db)
    assert set(db.table_names()) >= TABLES
    assert migrations.pending(db) == []


def test_commit_checks_the_version_and_writes_nothing_on_conflict(store: Store) -> None:
    conversation = key("v")
    state = ConversationState(next_turn_id=2)
    assert store.commit_turn(conversation, state, 0, turn_record("r1", 1, []), []) == 1
    with pytest.raises(ConcurrentUpdateError):
        store.commit_turn(conversation, state, 0, turn_record("r2", 2, []), [])
    assert [row["result_id"] for row in store.turns()] == ["r1"]  # the conflict left no row
    loaded = store.load(conversation)
    assert (loaded.version, loaded.state.next_turn_id) == (1, 2)


def test_a_failed_commit_rolls_back_state_and_trace(store: Store) -> None:
    conversation = key("rollback")
    store.commit_turn(conversation, ConversationState(), 0, turn_record("same", 1, []), [])
    with pytest.raises(Exception):  # noqa: B017 - the duplicate primary key of the turn row
        store.commit_turn(conversation, ConversationState(next_turn_id=9), 1,
                          turn_record("same", 2, []), [])
    assert store.load(conversation).state.next_turn_id == 1
    assert store.load(conversation).version == 1


def test_an_event_id_is_recorded_with_its_turn_and_only_once(store: Store) -> None:
    first = turn_record("r1", 1, []).model_copy(update={"event_id": "Ev1", "platform": "slack"})
    assert store.event_seen("slack", "Ev1") is False
    store.commit_turn(key("e"), ConversationState(), 0, first, [])
    assert store.event_seen("slack", "Ev1") is True
    assert store.event_seen("teams", "Ev1") is False  # ids are per platform
    again = first.model_copy(update={"result_id": "r2", "turn_id": 2})
    with pytest.raises(DuplicateEventError):
        store.commit_turn(key("e"), ConversationState(), 1, again, [])
    assert [row["result_id"] for row in store.turns()] == ["r1"]  # nothing half-written
    assert store.load(key("e")).version == 1


def test_unopenable_database_is_a_clear_storage_error(tmp_path: Path) -> None:
    with pytest.raises(StorageError, match="cannot open database"):
        Store(tmp_path / "missing-dir" / "x.db")


def test_feedback_needs_a_known_turn(store: Store) -> None:
    with pytest.raises(StorageError, match="no turn with result id nope"):
        store.record_feedback("nope", "U1", positive=True)
    assert store.feedback() == []


def test_retention_deletes_old_traces_daily(store: Store) -> None:
    from docassist.storage.exports import RetentionScheduler

    old = turn_record("old", 1, []).model_copy(update={"created_at": "2020-01-01T00:00:00"})
    new = turn_record("new", 2, []).model_copy(update={"created_at": "2999-01-01T00:00:00"})
    store.commit_turn(key("r"), ConversationState(), 0, old, [])
    store.commit_turn(key("r"), ConversationState(), 1, new, [])
    store.record_feedback("old", "U1", positive=False)
    scheduler = RetentionScheduler(store, days=30)
    try:
        assert scheduler.start().turns == 1
    finally:
        scheduler.stop()
    assert [row["result_id"] for row in store.turns()] == ["new"]
    assert store.feedback() == []


def test_a_database_folded_before_short_i_was_kept_is_folded_again(tmp_path: Path) -> None:
    """Rows indexed when folding turned `й` into `и` are folded again on open, so Russian
    inflections (`-ей`) match by stem without re-indexing."""
    path = tmp_path / "old.db"
    db = Database(path)
    migrations.apply(db, stop_before="m009_fold_keeps_short_i")
    db.table("documents").insert({
        "document_id": "DOC-RU", "title": "Настройки", "source_path": "/x",
        "content_sha256": "0" * 64, "version": "1", "chunk_count": 1, "services": "[]",
        "extra": "{}"})
    text = "ru.md | version=1 | Файлы\nФайлы настройки пользователей."
    db.table("chunks").insert({"chunk_id": "DOC-RU-0000000000-0001", "document_id": "DOC-RU",
                         "ordinal": 1, "section": "Файлы", "header": text.split("\n")[0],
                         "text": text})
    db.execute("INSERT INTO chunks_fts (chunk_id, title, section, body) VALUES (?, ?, ?, ?)",
               ["DOC-RU-0000000000-0001", "настроики", "фаилы", "фаилы настроики пользователеи."])
    db.close()
    store = Store(path)
    body = store.db.execute("SELECT body FROM chunks_fts").fetchone()[0]
    assert body == "файлы настройки пользователей."
    hits = Bm25Retriever(store).search("настройка пользователя", 1)
    assert hits and hits[0].score == 1.0
    store.close()


def test_every_migration_function_is_registered_in_order() -> None:
    """A migration written but not decorated never runs, and nothing else fails (one was lost
    that way in a merge): every `mNNN_` function of the module is a registered migration."""
    written = sorted(name for name in vars(migration_module) if re.fullmatch(r"m\d{3}_\w+", name))
    registered = [m.name for m in migrations.pending(Database(memory=True))]
    assert registered == written
