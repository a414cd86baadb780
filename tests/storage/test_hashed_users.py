"""Conversation states keep no raw platform user id (issue 39): a saved audience keeps the
user as a hash, scopes still match it, and states saved before are rewritten by `db migrate`
on both stores."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import psycopg

from docassist.core.scopes import Audience, hashed_user
from docassist.core.scoping import ScopeResolver, thread_audience
from docassist.core.state import ConversationState
from docassist.storage import Store
from docassist.storage.postgres import PostgresStore
from tests.cli_run import one_json, run
from tests.helpers import key, turn_record

RAW_USER = "U0RAWSLACKID"


class _Rules:
    def scope_mappings(self) -> dict[str, tuple[str, ...]]:
        return {f"user:slack:{RAW_USER}": ("hr",), "group:slack:S1": ("finance",)}

    def shareable_collections(self) -> frozenset[str]:
        return frozenset()


class _Directory:
    def __init__(self) -> None:
        self.asked: list[str] = []

    def groups_of(self, platform: str, user_id: str) -> frozenset[str]:
        self.asked.append(user_id)
        return frozenset({"S1"})


def test_a_saved_audience_keeps_a_hash_that_scopes_still_match() -> None:
    state = ConversationState()
    asked = Audience(kind="private", platform="slack", channel="D1", user=RAW_USER)
    assert thread_audience(asked, state) == asked  # this turn uses the real id
    assert state.audience is not None and state.audience.user == hashed_user(RAW_USER)
    assert RAW_USER not in state.model_dump_json()
    directory = _Directory()
    resolver = ScopeResolver(_Rules(), directory)  # type: ignore[arg-type]
    assert resolver.scope_of(asked).collections == frozenset({"hr", "finance"})
    # later (a stale note): the mapping by the hashed id still counts; groups, which only
    # the real id could look up, do not (fail closed), and the directory is not asked
    directory.asked.clear()
    assert resolver.scope_of(state.audience).collections == frozenset({"hr"})
    assert directory.asked == []


def _old_state() -> str:
    audience = {"kind": "private", "platform": "slack", "channel": "D1", "user": RAW_USER,
                "collections": None}
    return json.dumps({**json.loads(ConversationState().model_dump_json()),
                       "audience": audience})


def test_db_migrate_hashes_user_ids_saved_before_on_sqlite(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    store = Store(db)
    store.commit_turn(key("dm"), ConversationState(), 0, turn_record("r1", 1, []), [])
    store.close()
    with sqlite3.connect(db) as connection:
        connection.execute("UPDATE conversations SET state = ?", [_old_state()])
        connection.execute("DELETE FROM _sqlite_migrations WHERE name = 'm018_hashed_users'")
    done = one_json(run("db", "migrate", "--json", db=db).stdout)
    assert done["applied"] == ["m018_hashed_users"]
    with sqlite3.connect(db) as connection:
        [state] = [row[0] for row in connection.execute("SELECT state FROM conversations")]
    assert RAW_USER not in state
    assert json.loads(state)["audience"]["user"] == hashed_user(RAW_USER)


def test_db_migrate_hashes_user_ids_saved_before_on_postgresql(pg_url: str) -> None:
    store = PostgresStore(pg_url)
    store.commit_turn(key("dm"), ConversationState(), 0, turn_record("r1", 1, []), [])
    store.close()
    with psycopg.connect(pg_url) as connection:
        connection.execute("UPDATE conversations SET state = %s", [_old_state()])
        connection.execute("DELETE FROM docassist_migrations WHERE name = 'p009_hashed_users'")
    done = one_json(run("db", "migrate", "--json", db=pg_url).stdout)
    assert done["applied"] == ["p009_hashed_users"]
    with psycopg.connect(pg_url) as connection:
        row = connection.execute("SELECT state FROM conversations").fetchone()
    assert row is not None and RAW_USER not in row[0]
    assert json.loads(row[0])["audience"]["user"] == hashed_user(RAW_USER)
