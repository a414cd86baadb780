"""Privacy: an answered event keeps ids and hashes only; purge and retention erase every
stored copy of user text older than the cutoff — checked in the real SQLite file."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from docassist.bot.terminal.chat import new_thread_key
from docassist.core.state import ConversationState
from docassist.core.trace import sha256_text
from docassist.core.turn import TurnEngine
from docassist.storage import Store
from docassist.storage.exports import RetentionScheduler
from tests.cli_run import one_json, run
from tests.helpers import key, message
from tests.slack.rig import SlackRig, mention
from tests.storage.privacy_case import MARKER, QUESTION
from tests.teams.rig import TeamsRig


def stored_values(db: Path) -> list[tuple[str, str, Any]]:
    """Every value of every column of every table, read from the file itself."""
    connection = sqlite3.connect(db)
    try:
        tables = [row[0] for row in connection.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")]
        values: list[tuple[str, str, Any]] = []
        for table in tables:
            cursor = connection.execute(f'SELECT * FROM "{table}"')
            names = [column[0] for column in cursor.description]
            values.extend((table, name, value) for row in cursor for name, value in
                          zip(names, row, strict=True))
        return values
    finally:
        connection.close()


def holding(db: Path, needle: str) -> list[tuple[str, str]]:
    """(table, column) pairs whose values contain `needle`."""
    found = set()
    for table, column, value in stored_values(db):
        text = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
        if needle in text:
            found.add((table, column))
    return sorted(found)


def test_a_slack_event_answered_keeps_ids_and_hashes_only(rig: SlackRig) -> None:
    rig.event(mention(QUESTION, "2100.1"), "EvPrivate")
    [post] = rig.api.posted()
    assert "[1]" in post["text"] and "DOC-TLS-" in str(post["blocks"])
    [row] = rig.store.inbox_rows()
    assert row["status"] == "done" and row["result"] is None
    stored = json.loads(row["message"])
    assert MARKER not in row["message"] and "U1" not in row["message"]
    assert stored["user_sha256"] == sha256_text("U1")
    assert stored["text_sha256"] == rig.store.turns()[0]["question_sha256"]
    assert (row["event_id"], stored["key"]["thread"]) == ("EvPrivate", "2100.1")
    # The conversation keeps the recent history follow-ups need, nothing older.
    assert MARKER in rig.store.load(
        key("2100.1", "slack").model_copy(update={"workspace": "T1", "channel": "C1"})
    ).state.history[0].content


def test_a_teams_activity_answered_keeps_ids_and_hashes_only(teams: TeamsRig) -> None:
    teams.post(teams.activity(QUESTION, activity_id="act-private"))
    assert teams.connector.sent
    [row] = teams.store.inbox_rows()
    assert row["status"] == "done" and row["result"] is None
    for private in (MARKER, "aad-user-1", "Ada", teams.connector.url):
        assert private not in row["message"]
    assert json.loads(row["message"])["event_id"].endswith("|act-private")


def test_with_save_raw_the_answered_event_keeps_its_text(db_path: Path,
                                                          make_engine: Any) -> None:
    from docassist.serving.delivery import Outlet
    from docassist.serving.inbox import InboxWorker

    raw_store = Store(db_path, save_raw=True)
    posted: list[str] = []
    worker = InboxWorker(make_engine(), raw_store,
                         Outlet(lambda m, r: posted.append(r.answer)))
    worker.submit(message(QUESTION, event_id="Ev1"))
    assert worker.wait_idle()
    worker.close()
    [row] = raw_store.inbox_rows()
    assert row["status"] == "done" and MARKER in row["message"]
    raw_store.close()


def test_history_is_bounded_to_the_recent_exchanges(engine: TurnEngine, store: Store) -> None:
    for number in range(5):
        engine.handle(message(f"How do I renew the TLS certificate, try {number}?"))
    state = store.load(key()).state
    assert len(state.history) == 6  # MAX_HISTORY_TURNS exchanges
    assert "try 0" not in state.model_dump_json() and "try 4" in state.model_dump_json()


def test_purge_0d_leaves_no_question_text_anywhere(db_path: Path, store: Store,
                                                   engine: TurnEngine) -> None:
    store.enqueue(message(QUESTION, thread="t-pending", event_id="Ev-pending"))  # unanswered
    raw = run("ask", QUESTION, "--thread", "T1", "--json", db=db_path, DOCASSIST_SAVE_RAW="true")
    assert one_json(raw.stdout)["status"] == "answered", raw.stderr
    asked = engine.handle(message(f"How do I check its status on {MARKER}?", thread="t-clarify"))
    assert asked is not None and asked.status == "clarification_needed"
    before = holding(db_path, MARKER)
    assert ("turns", "raw") in before and ("conversations", "state") in before
    assert ("inbox", "message") in before

    done = run("traces", "purge", "--older-than", "0d", "--json", db=db_path)
    assert done.returncode == 0, done.stderr
    erased = one_json(done.stdout)
    assert erased["deleted_turns"] == 2 and erased["deleted_inbox_events"] == 1
    assert erased["emptied_conversations"] == 2
    assert holding(db_path, MARKER) == []
    store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    for path in (db_path, db_path.with_name(db_path.name + "-wal")):
        if path.exists():
            assert MARKER.encode() not in path.read_bytes(), path  # not even in free pages
    # The emptied conversation starts again under its next generation.
    state = store.load(new_thread_key("T1")).state
    assert state.history == [] and state.generation == 1
    again = engine.handle(message("How do I renew the TLS certificate?", thread="t-clarify"))
    assert again is not None and again.status == "answered" and again.generation == 1


def test_retention_erases_old_inbox_events_and_idle_histories(engine: TurnEngine,
                                                              store: Store) -> None:
    engine.handle(message(QUESTION, thread="old"))
    engine.handle(message(QUESTION, thread="recent"))
    store.enqueue(message(QUESTION, thread="old", event_id="Ev-old"))
    store.enqueue(message(QUESTION, thread="recent", event_id="Ev-recent"))
    long_ago = "2020-01-01T00:00:00.000+00:00"
    store.db.execute("UPDATE conversations SET updated_at = ? WHERE thread = 'old'", [long_ago])
    store.db.execute("UPDATE inbox SET received_at = ? WHERE event_id = 'Ev-old'", [long_ago])
    store.db.execute("UPDATE turns SET created_at = ? WHERE conversation_id = ?",
                     [long_ago, key("old").conversation_id])
    scheduler = RetentionScheduler(store, days=30)
    erased = scheduler.run_once()
    assert (erased.turns, erased.inbox_events, erased.conversations_emptied) == (1, 1, 1)
    assert [row["event_id"] for row in store.inbox_rows()] == ["Ev-recent"]
    assert store.load(key("old")).state == ConversationState(generation=1)
    assert MARKER in store.load(key("recent")).state.history[0].content
    assert len(store.turns()) == 1


def test_retention_erases_escalations_of_old_answers(engine: TurnEngine, store: Store) -> None:
    old = engine.handle(message(QUESTION, thread="old"))
    recent = engine.handle(message(QUESTION, thread="recent"))
    assert old is not None and recent is not None
    assert store.record_escalation(old.result_id, "U1")
    assert store.record_escalation(recent.result_id, "U1")
    long_ago = "2020-01-01T00:00:00.000+00:00"
    store.db.execute("UPDATE turns SET created_at = ? WHERE result_id = ?",
                     [long_ago, old.result_id])
    erased = RetentionScheduler(store, days=30).run_once()
    assert erased.escalations == 1
    assert [row["result_id"] for row in store.db["escalations"].rows] == [recent.result_id]
