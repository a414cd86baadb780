"""`docassist gaps` and `docassist eval canary` as real processes on a real SQLite file."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from docassist.storage import Store
from tests.cli_run import one_json, run
from tests.conftest import REPO
from tests.stale_zebra import QUESTION, ZEBRA_V1, ZEBRA_V2

TLS_CASE = {"id": "tls", "question": "How do I renew the TLS certificate?",
            "expected_documents": ["DOC-TLS"]}
OFF_TOPIC_CASE = {"id": "capital", "question": "What is the dress code for client visits?",
                  "expected_documents": []}


def test_gaps_lists_an_unanswered_question_with_its_closest_documents(db_path: Path) -> None:
    asked = one_json(run("ask", "What is the dress code for client visits?", "--json",
                         db=db_path).stdout)
    assert asked["status"] == "no_answer"
    done = run("gaps", "--json", db=db_path)
    assert done.returncode == 0, done.stderr
    [group] = one_json(done.stdout)["groups"]
    assert group["count"] == 1 and group["kinds"] == {"no_answer": 1}
    assert group["documents"] and {"document_id", "title", "owner"} <= set(group["documents"][0])
    [example] = group["examples"]
    assert example["text"] is None and len(example["sha256"]) == 64  # no raw text kept
    later = run("gaps", "--since", "2999-01-01", "--json", db=db_path)
    assert one_json(later.stdout)["groups"] == []


def test_a_bad_since_is_a_clear_error_and_nothing_is_written(tmp_path: Path) -> None:
    db = tmp_path / "never.db"
    done = run("gaps", "--since", "last tuesday", "--json", db=db)
    assert done.returncode == 2
    assert one_json(done.stdout) == {
        "error": "--since: not an ISO date or time, nor an age like 7d, 12h or 30m: "
                 "'last tuesday'"}
    assert "--since" in done.stderr
    assert not db.exists()  # refused before the store was opened


def write_sets(tmp_path: Path) -> str:
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps(case) + "\n" for case in (TLS_CASE, OFF_TOPIC_CASE)))
    decisions = tmp_path / "decisions.jsonl"
    decisions.write_text("".join((REPO / "samples" / "decisions_dev.jsonl")
                                 .read_text().splitlines(keepends=True)[:3]))
    return f"{decisions},{answers}"


def canary_runs(db: Path) -> list[str]:
    with sqlite3.connect(db) as connection:
        return [row[0] for row in connection.execute(
            "SELECT run_id FROM eval_runs WHERE kind = 'canary'")]


def test_the_first_canary_is_the_baseline_and_a_broken_case_is_a_regression(
        db_path: Path, tmp_path: Path) -> None:
    sets = write_sets(tmp_path)
    first = run("eval", "canary", "--json", db=db_path, DOCASSIST_CANARY_SETS=sets)
    assert first.returncode == 0, first.stderr
    baseline = one_json(first.stdout)
    assert baseline["regressions"] == [] and baseline["baseline"] is None
    assert baseline["total"] == 5 and all(case["passed"] for case in baseline["cases"])

    store = Store(db_path)  # the index changes: the TLS document is gone
    store.remove_document("DOC-TLS")
    store.close()
    second = run("eval", "canary", "--json", db=db_path, DOCASSIST_CANARY_SETS=sets)
    assert second.returncode == 1, second.stderr
    report = one_json(second.stdout)
    assert report["baseline"] == baseline["run_id"]
    assert [(case["id"], case["passed"]) for case in report["regressions"]] == [("tls", False)]
    assert canary_runs(db_path) == [baseline["run_id"], report["run_id"]]

    html_file = tmp_path / "report.html"
    assert run("report", "--out", str(html_file), db=db_path).returncode == 0
    page = html_file.read_text()
    assert "1 regression(s)" in page and "answers.jsonl: tls</li>" in page


def test_a_missing_canary_set_is_a_clear_error_and_no_run_is_stored(db_path: Path) -> None:
    done = run("eval", "canary", "--json", db=db_path, DOCASSIST_CANARY_SETS="nope.jsonl")
    assert done.returncode == 2
    assert one_json(done.stdout)["error"].startswith("canary set nope.jsonl: ")
    assert canary_runs(db_path) == []


def test_the_canary_refuses_an_empty_index(tmp_path: Path) -> None:
    db = tmp_path / "empty.db"
    done = run("eval", "canary", "--json", db=db)
    assert done.returncode == 2
    assert "the index is empty" in one_json(done.stdout)["error"]
    assert canary_runs(db) == []


def test_with_canary_after_sync_a_sync_that_breaks_a_case_logs_the_regression(
        tmp_path: Path) -> None:
    db, folder = tmp_path / "s.db", tmp_path / "handbook"
    folder.mkdir()
    (folder / "zebra.md").write_text(ZEBRA_V1)
    cases = tmp_path / "zebra.jsonl"
    cases.write_text(json.dumps({"id": "zebra", "question": QUESTION,
                                 "expected_documents": ["DOC-ZEBRA"]}) + "\n")
    sets = {"DOCASSIST_CANARY_SETS": str(cases)}
    assert run("sources", "add", "folder", "handbook", "--path", str(folder),
               db=db).returncode == 0
    assert run("sync", "--json", db=db, **sets).returncode == 0
    assert canary_runs(db) == []  # off by default

    (folder / "zebra.md").write_text(ZEBRA_V2)
    updated = run("sync", "--json", db=db, DOCASSIST_CANARY_AFTER_SYNC="true", **sets)
    assert one_json(updated.stdout)["sources"][0]["updated"] == 1
    assert len(canary_runs(db)) == 1 and "regression" not in updated.stderr  # the baseline

    (folder / "zebra.md").unlink()
    deleted = run("sync", "--json", db=db, DOCASSIST_CANARY_AFTER_SYNC="true", **sets)
    assert deleted.returncode == 0  # the sync itself went well
    assert one_json(deleted.stdout)["sources"][0]["deleted"] == 1
    assert f"canary regression after sync: {cases} zebra" in deleted.stderr
    assert len(canary_runs(db)) == 2
