"""`docassist traces export|purge`: formats, filters, privacy and bad arguments."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from docassist.core.limits import MAX_RETENTION_DAYS
from docassist.storage.backends import open_store
from tests.cli_run import one_json, run


@pytest.fixture(scope="module")
def traced_template(module_db: str) -> str:
    """Three turns in the demo database, on each store (SQLite, PostgreSQL), run once."""
    run("ask", "How do I renew the TLS certificate?", "--thread", "T1", db=module_db)
    run("ask", "pokaż źródła", "--thread", "T1", db=module_db)
    run("ask", "Restart docassist-api now", "--thread", "T2", db=module_db)
    return module_db


@pytest.fixture
def traced_db(traced_template: str, clone_db: Callable[[str], str]) -> str:
    """The three turns, in this test's own copy of the database."""
    return clone_db(traced_template)


def test_export_jsonl_with_tool_attempts_and_no_text(traced_db: str, tmp_path: Path) -> None:
    out = tmp_path / "traces.jsonl"
    done = run("traces", "export", "--format", "jsonl", "--out", str(out), "--json",
               db=traced_db)
    assert done.returncode == 0, done.stderr
    assert one_json(done.stdout) == {"rows": 3, "format": "jsonl", "out": str(out)}
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [row["status"] for row in rows] == ["answered", "sources_shown", "rejected"]
    assert rows[0]["feedback"] is None
    assert (rows[0]["backend"], rows[0]["answer_backend"], rows[0]["retriever"]) == (
        "rules", "rules", "ranked")  # the default retriever since issue 40
    assert rows[0]["tool_calls"][0]["tool_name"] == "answer_from_documents"
    assert rows[0]["tool_calls"][0]["arguments"]["question"].keys() == {"sha256"}
    assert rows[2]["tool_calls"] == []
    assert "renew" not in out.read_text() and "Restart" not in out.read_text()
    assert len(rows[0]["question_sha256"]) == 64 and len(rows[0]["user_sha256"]) == 64


def test_export_csv_filters_by_time_and_conversation(traced_db: str, tmp_path: Path) -> None:
    store = open_store(traced_db)
    conversation = store.turns()[0]["conversation_id"]
    store.record_feedback(store.turns()[0]["result_id"], "U1", positive=False)
    store.close()
    out = tmp_path / "t.csv"
    run("traces", "export", "--format", "csv", "--out", str(out), "--conversation",
        conversation, "--since", "2000-01-01", db=traced_db)
    with out.open(newline="") as file:
        rows = list(csv.DictReader(file))
    assert [row["status"] for row in rows] == ["answered", "sources_shown"]
    assert rows[0]["feedback"] == "-1"
    assert json.loads(rows[1]["source_ids"])  # lists stay JSON inside a CSV cell
    future = tmp_path / "none.csv"
    run("traces", "export", "--format", "csv", "--out", str(future), "--since", "2999-01-01",
        db=traced_db)
    assert future.read_text().splitlines() == [",".join(csv.DictReader(
        out.open(newline="")).fieldnames or [])]


@pytest.mark.parametrize(("args", "fragment"), [
    (["--since", "yesterday-ish"], "--since: not an ISO date or time"),
    (["--until", "2026-13-01"], "--until: not an ISO date or time"),
    (["--out", "/nonexistent-dir/x.jsonl"], "cannot write /nonexistent-dir/x.jsonl"),
])
def test_export_bad_arguments_are_clear(traced_db: str, tmp_path: Path, args: list[str],
                                        fragment: str) -> None:
    base = ["traces", "export", "--json"]
    if "--out" not in args:
        base += ["--out", str(tmp_path / "x.jsonl")]
    done = run(*base, *args, db=traced_db)
    assert done.returncode == 2
    assert fragment in one_json(done.stdout)["error"]


def test_export_takes_ages_like_gaps(traced_db: str, tmp_path: Path) -> None:
    """`--since 7d` / `--until 12h`: the forms `gaps --since` takes, by the same parser."""
    recent = tmp_path / "recent.jsonl"
    done = run("traces", "export", "--out", str(recent), "--since", "7d", "--json",
               db=traced_db)
    assert done.returncode == 0, done.stderr
    assert one_json(done.stdout)["rows"] == 3  # the three turns were asked just now
    older = tmp_path / "older.jsonl"
    done = run("traces", "export", "--out", str(older), "--until", "12h", "--json",
               db=traced_db)
    assert done.returncode == 0, done.stderr
    assert one_json(done.stdout)["rows"] == 0 and older.read_text() == ""


@pytest.mark.parametrize(("args", "message"), [
    (["--since", "last week"],
     "--since: not an ISO date or time, nor an age like 7d, 12h or 30m: 'last week'"),
    (["--until", "7 d"], "--until: not a duration like 90d, 12h or 30m: '7 d'"),
    (["--since", "99999d"], f"--since: '99999d' is longer than {MAX_RETENTION_DAYS} days"),
])
def test_a_bad_bound_is_refused_and_nothing_is_exported(
        tmp_path: Path, args: list[str], message: str) -> None:
    out, db = tmp_path / "x.jsonl", tmp_path / "never.db"
    done = run("traces", "export", "--out", str(out), *args, "--json", db=db)
    assert done.returncode == 2
    assert one_json(done.stdout) == {"error": message}
    assert f"error: {message}" in done.stderr
    assert not out.exists() and not db.exists()  # refused before anything was opened


def test_an_unknown_collection_is_refused_and_nothing_is_exported(traced_db: str,
                                                                   tmp_path: Path) -> None:
    """As `ask --collections`: a misspelt name would export nothing and exit 0."""
    out = tmp_path / "x.jsonl"
    done = run("traces", "export", "--out", str(out), "--collection", "nosuch", "--json",
               db=traced_db)
    assert done.returncode == 2
    assert one_json(done.stdout) == {"error": "unknown collection: nosuch (known: default)"}
    assert "error: unknown collection: nosuch (known: default)" in done.stderr
    assert not out.exists()


def test_a_collection_known_only_from_its_traces_is_still_exported(db_path: Path,
                                                                   tmp_path: Path) -> None:
    """The documents of a collection removed, the turns that searched it stay exportable (and
    it is among the known ones a misspelt name is shown)."""
    people = tmp_path / "people"
    people.mkdir()
    (people / "leave.md").write_text("# Leave\nBook leave in the HR portal.\n")
    assert run("index", str(people), "--collection", "hr", db=db_path).returncode == 0
    assert run("ask", "How do I book leave?", "--collections", "hr",
               db=db_path).returncode == 0
    assert run("remove", "--collection", "hr", db=db_path).returncode == 0
    out = tmp_path / "hr.jsonl"
    done = run("traces", "export", "--out", str(out), "--collection", "hr", "--json",
               db=db_path)
    assert done.returncode == 0, done.stderr
    assert one_json(done.stdout)["rows"] == 1
    typo = run("traces", "export", "--out", str(tmp_path / "typo.jsonl"), "--collection", "hrr",
               "--json", db=db_path)
    assert typo.returncode == 2 and not (tmp_path / "typo.jsonl").exists()
    assert one_json(typo.stdout) == {"error": "unknown collection: hrr (known: default, hr)"}


def test_unknown_format_is_refused(traced_db: str, tmp_path: Path) -> None:
    done = run("traces", "export", "--format", "xml", "--out", str(tmp_path / "x"),
               db=traced_db)
    assert done.returncode == 2 and "xml" in done.stderr


def test_purge(traced_db: str) -> None:
    bad = run("traces", "purge", "--older-than", "ninety days", "--json", db=traced_db)
    assert bad.returncode == 2 and "not a duration" in one_json(bad.stdout)["error"]
    kept = one_json(run("traces", "purge", "--older-than", "90d", "--json",
                        db=traced_db).stdout)
    assert kept == {"deleted_turns": 0, "deleted_tool_calls": 0, "deleted_shadow_decisions": 0,
                    "deleted_feedback": 0, "deleted_inbox_events": 0,
                    "emptied_conversations": 0}
    gone = one_json(run("traces", "purge", "--older-than", "0m", "--json",
                        db=traced_db).stdout)
    assert gone == {"deleted_turns": 3, "deleted_tool_calls": 2, "deleted_shadow_decisions": 0,
                    "deleted_feedback": 0, "deleted_inbox_events": 0,
                    "emptied_conversations": 2}
    store = open_store(traced_db)
    assert store.turns() == [] and store.tool_calls() == []
    store.close()
