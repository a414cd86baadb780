"""`docassist` on PostgreSQL as real processes: a fresh database indexed and asked, `db
migrate` on both stores, and `db copy` from SQLite (twice: nothing duplicated; the copy
answers with the same citations)."""

from __future__ import annotations

import socket
import sqlite3
from pathlib import Path

from docassist.bot.terminal.chat import new_thread_key
from docassist.storage.backends import open_store
from docassist.storage.postgres import PostgresStore
from docassist.storage.postgres.copy import KINDS
from docassist.storage.postgres.schema import MIGRATIONS
from tests.cli_run import one_json, run
from tests.conftest import DEMO_DOCS

QUESTION = "Co zrobić po zmianie konfiguracji docassist-api?"


def test_index_docs_and_ask_on_a_fresh_postgresql_database(pg_url: str, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "ok.md").write_text("# Ok\n## Rotate keys\nRun rotate-keys --all, then verify.\n")
    (docs / "bad.bin").write_bytes(b"\x00\x01")
    done = run("index", str(docs), "--json", db=pg_url)
    assert done.returncode == 0, done.stderr
    assert one_json(done.stdout)["indexed"] == ["DOC-OK"]
    assert "bad.bin: skipped: unsupported format" in done.stderr
    assert [d["document_id"] for d in one_json(run("docs", "--json", db=pg_url).stdout)] == [
        "DOC-OK"]
    answer = one_json(run("ask", "How do I rotate keys?", "--json", db=pg_url).stdout)
    assert answer["status"] == "answered"
    assert answer["sources"][0]["document_id"] == "DOC-OK"


def test_ask_on_an_empty_postgresql_database_indexes_the_demo_corpus(pg_url: str) -> None:
    done = run("ask", QUESTION, "--json", db=pg_url)
    assert done.returncode == 0, done.stderr
    result = one_json(done.stdout)
    assert result["status"] == "answered"
    assert result["sources"][0]["document_id"] == "DOC-INSTR"
    store = open_store(pg_url)
    try:
        assert len(store.documents()) == len([p for p in DEMO_DOCS.iterdir() if p.is_file()])
        assert store.meta_value("first_index") is None  # the first start finished
    finally:
        store.close()


def test_db_migrate_on_both_stores(pg_url: str, tmp_path: Path) -> None:
    fresh = one_json(run("db", "migrate", "--json", db=pg_url).stdout)
    assert fresh["backend"] == "postgresql"
    assert fresh["applied"] == [name for name, _ in MIGRATIONS]
    assert fresh["applied"][0] == "p001_initial"
    assert "@" in fresh["database"] and fresh["known"] == len(MIGRATIONS)
    again = one_json(run("db", "migrate", "--json", db=pg_url).stdout)
    assert again["applied"] == []
    lite = one_json(run("db", "migrate", "--json", db=tmp_path / "new.db").stdout)
    assert lite["backend"] == "sqlite" and lite["applied"][0] == "m001_initial"
    assert len(lite["applied"]) == lite["known"]
    assert one_json(run("db", "migrate", "--json", db=tmp_path / "new.db").stdout)[
        "applied"] == []


def test_db_migrate_refuses_an_unknown_url_scheme(tmp_path: Path) -> None:
    done = run("db", "migrate", "--json", db="mysql://u@127.0.0.1:1/x")
    assert done.returncode == 2
    assert "unknown database URL scheme mysql://" in one_json(done.stdout)["error"]


def test_db_migrate_reports_an_unreachable_server(pg_cluster: object) -> None:
    done = run("db", "migrate", "--json", db="postgresql://nobody:secret@127.0.0.1:1/none")
    assert done.returncode == 2
    error = one_json(done.stdout)["error"]
    assert "cannot open database postgresql://nobody@127.0.0.1:1/none" in error
    assert "secret" not in done.stdout + done.stderr  # the password is never shown


def _sqlite_counts(path: Path) -> dict[str, int]:
    with sqlite3.connect(path) as connection:
        return {table: connection.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
                for table in KINDS}


def _pg_counts(url: str) -> dict[str, int]:
    store = PostgresStore(url)
    try:
        return {table: store._value(f"SELECT count(*) FROM {table}") for table in KINDS}
    finally:
        store.close()


def test_db_copy_moves_everything_once_and_answers_the_same(db_path: Path,
                                                           pg_url: str) -> None:
    asked = one_json(run("ask", QUESTION, "--thread", "T1", "--json", db=db_path).stdout)
    run("ask", "Restart docassist-api now", "--thread", "T2", db=db_path)
    run("eval", "decisions", str(DEMO_DOCS.parent / "decisions_dev.jsonl"), db=db_path)
    sqlite_store = open_store(db_path)
    sqlite_store.record_feedback(asked["result_id"], "U1", positive=True)
    sqlite_store.close()
    first = run("db", "copy", "--to", pg_url, "--json", db=db_path)
    assert first.returncode == 0, first.stderr
    report = one_json(first.stdout)
    kinds = report["kinds"]
    for kind in ("documents", "chunks", "search_rows", "vectors", "conversations", "turns",
                 "tool_calls", "feedback", "eval_runs", "inbox_events", "processed_events"):
        assert kinds[kind]["copied"] == kinds[kind]["source"], kind
    assert kinds["vectors"]["copied"] > 0 and kinds["eval_runs"]["copied"] == 1
    assert kinds["turns"]["copied"] == 2 and kinds["feedback"]["copied"] == 1
    with_password = pg_url.replace("@", ":hunter2@", 1)  # trust auth ignores it
    again_run = run("db", "copy", "--to", with_password, "--json", db=db_path)
    second = one_json(again_run.stdout)
    assert all(count["copied"] == 0 for count in second["kinds"].values())
    assert "hunter2" not in again_run.stdout + again_run.stderr  # never printed
    counts = _sqlite_counts(db_path)
    counts["meta"] -= 1  # the index version is each database's own
    pg_counts = _pg_counts(pg_url)
    pg_counts["meta"] -= 1
    assert pg_counts == counts
    source, target = open_store(db_path), open_store(pg_url)
    try:
        assert target.turns() == source.turns() and target.feedback() == source.feedback()
        assert target.documents() == source.documents()
        assert target.load(new_thread_key("T1")) == source.load(new_thread_key("T1"))
        assert target.embedding_matrix("use")[0] == source.embedding_matrix("use")[0]
        assert (target.embedding_matrix("use")[1] == source.embedding_matrix("use")[1]).all()
    finally:
        source.close()
        target.close()
    again = one_json(run("ask", QUESTION, "--json", db=pg_url).stdout)
    assert again["status"] == "answered"
    assert [s["chunk_id"] for s in again["sources"]] == [s["chunk_id"] for s in asked["sources"]]
    assert again["answer"] == asked["answer"]


def test_db_copy_needs_an_sqlite_source_and_a_postgresql_target(db_path: Path,
                                                                pg_url: str) -> None:
    wrong_target = run("db", "copy", "--to", str(db_path), "--json", db=db_path)
    assert wrong_target.returncode == 2
    assert "--to must be a postgresql:// URL" in one_json(wrong_target.stdout)["error"]
    wrong_source = run("db", "copy", "--to", pg_url, "--json", db=pg_url)
    assert wrong_source.returncode == 2
    assert "must name the SQLite file" in one_json(wrong_source.stdout)["error"]



def closed_port() -> int:
    """A port on 127.0.0.1 nothing listens on: bound, then let go."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_db_copy_to_a_server_that_is_not_running_says_so_once(db_path: Path) -> None:
    """psycopg_pool logged the refusal once per connection attempt before our error."""
    port = closed_port()
    before = _sqlite_counts(db_path)
    done = run("db", "copy", "--to", f"postgresql://docassist:hunter2@127.0.0.1:{port}/docs",
               "--json", db=db_path)
    assert done.returncode == 2
    [line] = [line for line in done.stderr.splitlines() if line.strip()]
    target = f"postgresql://docassist@127.0.0.1:{port}/docs"
    assert line.startswith(f"error: cannot open database {target}: ")
    assert "Connection refused" in line
    assert one_json(done.stdout) == {"error": line.removeprefix("error: ")}
    assert "hunter2" not in done.stdout + done.stderr  # the password is never printed
    assert _sqlite_counts(db_path) == before  # nothing copied, the source untouched
