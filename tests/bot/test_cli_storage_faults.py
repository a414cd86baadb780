"""The terminal chat and `docassist ask` when the database takes no writes: a clear message,
the session goes on, nothing runs, what only reads still works."""

from __future__ import annotations

import io
import json
from pathlib import Path

from rich.console import Console

from docassist.bot.terminal import ChatSession
from docassist.core import i18n
from docassist.core.tools import ToolRegistry
from docassist.core.turn import TurnEngine
from docassist.storage import Store
from tests.cli_run import run
from tests.helpers import recording


def flat(text: str) -> str:
    return " ".join(text.split())


def test_the_chat_goes_on_while_the_connection_is_read_only(
        engine: TurnEngine, store: Store, registry: ToolRegistry) -> None:
    output = io.StringIO()
    session = ChatSession(engine, Console(file=output, width=200), "en",
                          feedback_sink=store.record_feedback)
    assert session.handle_line("How do I renew the TLS certificate?")
    store.db.execute("PRAGMA query_only = ON")  # SQLite refuses every write from here on
    output.seek(0)
    output.truncate()
    with recording(registry, *registry.names()) as recorders:
        assert session.handle_line("How do I check the status of docassist-api?")
    assert all(recorder.calls == [] for recorder in recorders.values())
    assert flat(output.getvalue()) == flat(i18n.text("storage_read_only", "en"))
    output.seek(0)
    output.truncate()
    assert session.handle_line("/good")  # the vote is lost, the session is not
    assert flat(output.getvalue()) == flat(i18n.text("storage_read_only", "en"))
    store.db.execute("PRAGMA query_only = OFF")
    assert session.handle_line("How do I check the status of docassist-api?")
    assert [row["status"] for row in store.turns()] == ["answered", "answered"]
    assert store.feedback() == []


def test_ask_on_a_read_only_database_says_so_and_exits_1(db_path: Path) -> None:
    read_only = f"file:{db_path}?mode=ro"
    done = run("ask", "Jak odnowić certyfikat TLS?", db=Path(read_only))
    assert done.returncode == 1, done.stderr
    assert flat(done.stdout) == flat(i18n.text("storage_read_only", "pl"))
    [logged] = [line for line in done.stderr.splitlines() if "not saved" in line]
    assert "read-only" in logged  # the log line is the record: no row can be written
    as_json = run("ask", "How do I renew the TLS certificate?", "--json", db=Path(read_only))
    assert as_json.returncode == 1
    result = json.loads(as_json.stdout)
    assert (result["status"], result["answer"], result["tool"]["status"]) == (
        "storage_unavailable", i18n.text("storage_read_only", "en"), None)
    catalog = run("docs", "--json", db=Path(read_only))  # reading needs no writes
    assert catalog.returncode == 0, catalog.stderr
    assert "DOC-TLS" in {document["document_id"] for document in json.loads(catalog.stdout)}
    store = Store(db_path)
    assert store.turns() == []
    store.close()
