"""Bad input at the command line ends in one clear line and exit 2, never a traceback, and
nothing is run or stored."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from docassist.storage import Store
from tests.cli_run import one_json, run
from tests.conftest import DEMO_DOCS, REPO

BM25_ONLY = {"DOCASSIST_EMBEDDER": "none", "DOCASSIST_RETRIEVER": "bm25"}


def assert_clear_failure(done: subprocess.CompletedProcess[str], fragment: str) -> None:
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and fragment in done.stderr
    assert len([line for line in done.stderr.splitlines() if line.strip()]) == 1


def nothing_stored(db: Path) -> None:
    store = Store(db)
    assert store.turns() == [] and store.tool_calls() == [] and store.eval_runs() == []
    store.close()


@pytest.mark.parametrize("argv", [
    [b"ask", b"How do I renew TLS?", b"--thread", b"\xff\xfe"],
    [b"ask", b"How do I renew \xff TLS?"],
])
def test_arguments_that_are_not_utf8_are_refused(db_path: Path, argv: list[bytes]) -> None:
    done = subprocess.run([sys.executable.encode(), b"-m", b"docassist", *argv, b"--json"],
                          capture_output=True, text=True, cwd=REPO, timeout=60, check=False,
                          env={**os.environ, "DOCASSIST_DB": str(db_path), "COLUMNS": "200"})
    assert_clear_failure(done, "is not valid UTF-8 text")
    assert one_json(done.stdout)["error"].endswith("is not valid UTF-8 text")
    nothing_stored(db_path)  # no turn, no trace row, no tool attempt


@pytest.mark.parametrize(("args", "variable"), [
    (["slack", "--http", "--port", "0"], "DOCASSIST_TRACE_RETENTION_DAYS"),
    (["index", str(DEMO_DOCS)], "DOCASSIST_SUPERSEDED_RETENTION_DAYS"),
    (["traces", "purge", "--older-than", "1d"], "DOCASSIST_TRACE_RETENTION_DAYS"),
])
def test_a_retention_of_800000_days_is_refused_at_configuration(
        tmp_path: Path, args: list[str], variable: str) -> None:
    db = tmp_path / "fresh.db"
    done = run(*args, db=db, SLACK_BOT_TOKEN="xoxb-x", SLACK_SIGNING_SECRET="s",
               **{variable: "800000"}, **BM25_ONLY)
    assert_clear_failure(done, "less than or equal to 36500")
    if db.exists():  # nothing was committed before the refusal
        store = Store(db)
        assert store.documents() == []
        store.close()


def test_purging_older_than_800000_days_is_refused(db_path: Path) -> None:
    done = run("traces", "purge", "--older-than", "800000d", db=db_path)
    assert_clear_failure(done, "'800000d' is longer than 36500 days")


def test_deeply_nested_json_in_an_eval_file_is_a_clear_error(db_path: Path,
                                                             tmp_path: Path) -> None:
    cases = tmp_path / "deep.jsonl"
    cases.write_text("[" * 100_000 + "\n")
    for kind in ("decisions", "answers", "retrieval"):
        done = run("eval", kind, str(cases), db=db_path, **BM25_ONLY)
        assert_clear_failure(done, "line 1: JSON nested too deeply")
    nothing_stored(db_path)


def test_an_empty_cases_file_is_a_clear_error_and_no_run_is_stored(db_path: Path,
                                                                   tmp_path: Path) -> None:
    cases = tmp_path / "empty.jsonl"
    cases.write_text("\n\n")
    done = run("eval", "decisions", str(cases), "--json", db=db_path, **BM25_ONLY)
    assert_clear_failure(done, "no cases")
    assert "no cases" in one_json(done.stdout)["error"]
    nothing_stored(db_path)


def test_an_unknown_embedder_lists_the_embedders(db_path: Path) -> None:
    done = run("docs", db=db_path, DOCASSIST_EMBEDDER="sentence-bert")
    assert_clear_failure(done, "unknown embedder 'sentence-bert' (available: use, e5, none, "
                               "ollama:<model>, openai:<model>, replay:<file>)")


@pytest.mark.parametrize(("kind", "cases"), [
    ("decisions", "decisions_dev.jsonl"), ("answers", "answers_dev.jsonl"),
    ("retrieval", "retrieval_dev.jsonl")])
def test_an_evaluation_over_an_empty_catalog_is_refused(tmp_path: Path, kind: str,
                                                        cases: str) -> None:
    db = tmp_path / "empty.db"
    done = run("eval", kind, str(REPO / "samples" / cases), "--json", db=db, **BM25_ONLY)
    assert_clear_failure(done, "Nothing to evaluate against: the catalog is empty")
    assert one_json(done.stdout) == {"error": (
        "Nothing to evaluate against: the catalog is empty. Index the documents the cases "
        "ask about first: docassist index PATH (or docassist sync).")}
    nothing_stored(db)  # no run saved, no turn, no tool attempt


def test_an_answer_threshold_above_one_is_refused_at_configuration(db_path: Path) -> None:
    done = run("ask", "How do I renew the TLS certificate?", "--json", db=db_path,
               DOCASSIST_ANSWER_THRESHOLD="1.5")
    assert_clear_failure(done, "DOCASSIST_ANSWER_THRESHOLD='1.5'")
    assert one_json(done.stdout)["error"].endswith("Input should be less than or equal to 1")
    nothing_stored(db_path)  # no turn, no trace row, no tool attempt


@pytest.mark.parametrize("args", [["ask", "How do I renew the TLS certificate?", "--json"],
                                  ["doctor", "--json"], ["scopes", "--json"],
                                  ["db", "migrate", "--json"]],
                         ids=["ask", "doctor", "scopes", "db-migrate"])
@pytest.mark.parametrize(("variable", "value", "choices"), [
    ("DOCASSIST_RETRIEVER", "bm26", "ranked, hybrid, bm25, dense"),
    ("DOCASSIST_LANGUAGE", "de", "pl, en")])
def test_a_bad_choice_names_the_variable_its_value_and_the_choices(
        db_path: Path, args: list[str], variable: str, value: str, choices: str) -> None:
    """One reading of the settings for every command (config.load_settings)."""
    done = run(*args, db=db_path, **{variable: value})
    message = f"invalid configuration: {variable}={value!r} is not one of {choices}"
    assert_clear_failure(done, message)
    assert one_json(done.stdout) == {"error": message}
    nothing_stored(db_path)  # no turn, no trace row, no tool attempt
