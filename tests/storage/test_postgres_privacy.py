"""Privacy on PostgreSQL: `traces purge --older-than 0d` leaves the question's text in no
column of any table (the SQLite twin is tests/storage/test_privacy.py; PostgreSQL's files
keep deleted rows until vacuum, README "Scaling out")."""

from __future__ import annotations

import psycopg
import pytest

from docassist.bot.terminal.chat import new_thread_key
from docassist.core.turn import TurnEngine
from docassist.storage.postgres import PostgresStore
from docassist.storage.roles import Storage
from tests.cli_run import one_json, run
from tests.conftest import STORES
from tests.helpers import message
from tests.storage.privacy_case import MARKER, QUESTION


def holding(url: str, needle: str) -> list[str]:
    """Tables with a row whose text contains `needle` (every column, as PostgreSQL prints it)."""
    found = []
    with psycopg.connect(url) as connection:
        tables = [row[0] for row in connection.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'")]
        for table in tables:
            rows = connection.execute(f'SELECT t::text FROM "{table}" t').fetchall()
            if any(needle in row[0] for row in rows):
                found.append(table)
    return sorted(found)


@pytest.mark.parametrize("store", STORES[1:], indirect=True)
def test_purge_0d_leaves_no_question_text_in_any_table(store: Storage,
                                                       engine: TurnEngine) -> None:
    assert isinstance(store, PostgresStore)
    url = store.url
    store.enqueue(message(QUESTION, thread="t-pending", event_id="Ev-pending"))  # unanswered
    raw = run("ask", QUESTION, "--thread", "T1", "--json", db=url, DOCASSIST_SAVE_RAW="true")
    assert one_json(raw.stdout)["status"] == "answered", raw.stderr
    asked = engine.handle(message(f"How do I check its status on {MARKER}?", thread="t-clarify"))
    assert asked is not None and asked.status == "clarification_needed"
    assert {"turns", "conversations", "inbox"} <= set(holding(url, MARKER))
    done = run("traces", "purge", "--older-than", "0d", "--json", db=url)
    assert done.returncode == 0, done.stderr
    erased = one_json(done.stdout)
    assert erased["deleted_turns"] == 2 and erased["deleted_inbox_events"] == 1
    assert erased["emptied_conversations"] == 2
    assert holding(url, MARKER) == []
    state = store.load(new_thread_key("T1")).state
    assert state.history == [] and state.generation == 1
