"""The `docassist` command as a real process: clean --json stdout, chat over stdin."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from docassist.storage.backends import open_store
from tests.cli_run import one_json, run
from tests.conftest import REPO


def test_ask_json_on_a_fresh_database_indexes_the_demo_corpus(tmp_path: Path) -> None:
    done = run("ask", "Co zrobić po zmianie konfiguracji docassist-api?", "--json",
               db=tmp_path / "fresh.db")
    assert done.returncode == 0, done.stderr
    result = one_json(done.stdout)
    assert result["status"] == "answered"
    assert result["decision"]["status"] == "action_proposed"
    assert result["tool"]["status"] == "tool_completed"
    source = result["sources"][0]
    assert set(source) >= {"chunk_id", "document_id", "title", "version", "section", "score",
                           "snippet"}
    assert source["document_id"] == "DOC-INSTR"
    assert f"[{source['chunk_id']}]" in result["answer"] or any(
        f"[{s['chunk_id']}]" in result["answer"] for s in result["sources"])


def test_ask_continues_a_named_thread(any_db: str) -> None:
    run("ask", "I changed the docassist-api config.", "--thread", "T9", "--json", db=any_db)
    done = run("ask", "How do I check its status?", "--thread", "T9", "--json", db=any_db)
    result = one_json(done.stdout)
    # The resolver's rewrite, searched with the thread's last question beside it (issue 41).
    assert result["conversation"]["standalone_question"] == (
        "How do I check the status of the docassist-api service? (I changed the docassist-api "
        "config.)")
    alone = one_json(run("ask", "How do I check its status?", "--json", db=any_db).stdout)
    assert alone["status"] == "clarification_needed"


@pytest.mark.parametrize(("text", "status"), [("", "empty_message"), ("  ", "empty_message"),
                                              ("x" * 2001, "message_too_long"),
                                              ("bell\x07", "invalid_message")])
def test_ask_invalid_messages_exit_zero_with_a_status(db_path: Path, text: str,
                                                      status: str) -> None:
    done = run("ask", text, "--json", db=db_path)
    assert done.returncode == 0
    result = one_json(done.stdout)
    assert result["status"] == status and result["tool"]["status"] is None
    assert result["answer"]


def test_ask_plain_output_shows_the_answer_and_sources(any_db: str) -> None:
    done = run("ask", "How do I renew the TLS certificate?", db=any_db)
    assert done.returncode == 0
    assert "According to the documents:" in done.stdout
    assert "Sources:" in done.stdout and "DOC-TLS-" in done.stdout
    assert "https://intranet.example.com/docs/DOC-TLS" in done.stdout


def test_an_operator_answer_threshold_trades_answers_for_refusals(db_path: Path) -> None:
    question = "Jakie są priorytety incydentów?"
    usual = one_json(run("ask", question, "--json", db=db_path).stdout)
    assert usual["status"] == "answered"  # its best page passes the calibrated default
    strict = one_json(run("ask", question, "--json", db=db_path,
                          DOCASSIST_ANSWER_THRESHOLD="0.99").stdout)
    assert strict["status"] == "no_answer" and strict["tool"]["status"] == "tool_completed"
    assert strict["answer"].startswith("Nie znalazłem tego w dokumentach.")
    assert "DOC-INCIDENT" in strict["answer"] and strict["sources"] == []


def test_docs_json_lists_the_catalog(any_db: str) -> None:
    documents = one_json(run("docs", "--json", db=any_db).stdout)
    by_id = {d["document_id"]: d for d in documents}
    assert {"DOC-INSTR", "DOC-TLS", "DOC-DB", "DOC-ACCESS", "DOC-INCIDENT"} <= set(by_id)
    assert by_id["DOC-INSTR"]["version"] == "1.4"
    assert by_id["DOC-INSTR"]["source_path"].endswith("instrukcja.txt")
    assert {d["language"] for d in documents} >= {"pl", "en"}


def test_index_notes_go_to_stderr_and_json_stays_clean(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "ok.md").write_text("# Ok\n## Part\nSome procedure text.\n")
    (docs / "bad.bin").write_bytes(b"\x00\x01")
    done = run("index", str(docs), "--json", db=tmp_path / "i.db")
    assert done.returncode == 0
    assert one_json(done.stdout)["indexed"] == ["DOC-OK"]
    assert "bad.bin: skipped: unsupported format" in done.stderr
    nothing = run("index", str(docs / "bad.bin"), db=tmp_path / "i.db")
    assert nothing.returncode == 1 and "skipped" in nothing.stderr


def test_unknown_backend_is_a_clear_error(db_path: Path) -> None:
    done = run("ask", "hi", "--json", db=db_path, DOCASSIST_MODEL="gpt9000:big")
    assert done.returncode == 2
    assert "unknown model backend 'gpt9000'" in done.stderr
    assert "unknown model backend" in one_json(done.stdout)["error"]


def test_eval_decisions_reaches_95_percent_on_the_dev_set(any_db: str) -> None:
    done = run("eval", "decisions", str(REPO / "samples" / "decisions_dev.jsonl"), "--json",
               db=any_db)
    assert done.returncode == 0, done.stderr
    report = one_json(done.stdout)
    assert report["total"] >= 50
    assert report["accuracy"] >= 0.95, [c["id"] for c in report["cases"] if not c["ok"]]
    case = report["cases"][0]
    assert set(case) >= {"id", "expected", "got", "ok"}


def test_eval_decisions_rejects_a_broken_file(db_path: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"id": "a", "message": "hi", "expected": {"status": "rejected"}}\n{oops\n')
    done = run("eval", "decisions", str(broken), "--json", db=db_path)
    assert done.returncode == 2
    assert "line 2" in one_json(done.stdout)["error"]


def test_terminal_chat_session(any_db: str) -> None:
    script = "\n".join([
        "Co zrobić po zmianie konfiguracji docassist-api?",
        "Jak sprawdzić jej stan?",
        "/sources",
        "/meta DOC-TLS",
        "/debug",
        "Restart docassist-api now.",
        "/clear",
        "/sources",
        "/bogus",
        "/help",
        "How do I renew the TLS certificate?",
        "/bad",
        "/quit",
        "this line is never read",
    ]) + "\n"
    done = run("chat", db=any_db, stdin=script)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "Według dokumentacji:" in out
    assert "Źródła poprzedniej odpowiedzi (tura 2)" in out or "(turn 2)" in out
    assert "DOC-TLS: TLS certificate renewal" in out
    assert "status=rejected" in out and "tool=None:None" in out
    assert "This thread is cleared" in out
    assert "no answer from the documents yet" in out
    assert "Unknown command /bogus" in out and "Available: /help" in out
    assert "/meta ID   a document's details" in out  # /help explains each command
    assert "Thanks for the feedback." in out
    assert "never read" not in out
    store = open_store(any_db)
    [vote] = store.feedback()
    assert vote["value"] == -1 and vote["result_id"] == store.turns()[-1]["result_id"]
    assert len(store.turns()) == 8  # the messages and /clear /sources /meta; /help is no turn
    assert len(vote["user_sha256"]) == 64
    store.close()


def test_eval_retrieval_reports_every_retriever_and_the_default(any_db: str) -> None:
    done = run("eval", "retrieval", str(REPO / "samples" / "retrieval_dev.jsonl"), "--json",
               db=any_db)
    assert done.returncode == 0, done.stderr
    report = one_json(done.stdout)
    assert report["default"] == "ranked"  # the learned second stage (issue 40)
    assert set(report["retrievers"]) == {"bm25", "dense", "hybrid", "ranked"}
    for scores in report["retrievers"].values():
        assert set(scores) == {"recall_at_1", "recall_at_3", "recall_at_5", "mrr"}
        assert 0 <= scores["recall_at_1"] <= scores["recall_at_3"] <= scores["recall_at_5"] <= 1
    assert report["total"] >= 40
    assert report["retrievers"]["hybrid"]["recall_at_5"] >= 0.9
    assert report["retrievers"]["ranked"]["recall_at_5"] >= 0.9
    assert {"id", "ranks"} <= set(report["cases"][0])


def test_bm25_only_configuration(db_path: Path) -> None:
    done = run("ask", "Jak odtworzyć bazę danych z kopii?", "--json", db=db_path,
               DOCASSIST_EMBEDDER="none", DOCASSIST_RETRIEVER="bm25")
    result = one_json(done.stdout)
    assert result["status"] == "answered" and result["sources"][0]["document_id"] == "DOC-DB"
    assert 0 <= result["sources"][0]["score"] <= 1  # the BM25 scale
    bad = run("ask", "hi", "--json", db=db_path, DOCASSIST_EMBEDDER="none")
    assert bad.returncode == 2 and "needs an embedder" in one_json(bad.stdout)["error"]


def test_eval_runs_are_stored_and_compared(any_db: str, tmp_path: Path) -> None:
    first = tmp_path / "a.jsonl"
    first.write_text(
        '{"id": "x", "message": "Restart docassist-api now", "expected": {"status": "rejected"}}\n'
        '{"id": "y", "message": "How do I renew TLS?", "expected": {"status": "rejected"}}\n')
    second = tmp_path / "b.jsonl"
    second.write_text(first.read_text().replace('"status": "rejected"}}\n{"id": "y"',
                                                '"status": "no_suitable_tool"}}\n{"id": "y"'))
    run_a = one_json(run("eval", "decisions", str(first), "--json", db=any_db).stdout)
    run_b = one_json(run("eval", "decisions", str(second), "--json", db=any_db).stdout)
    assert run_a["macro_f1"] >= 0 and "confusion" in run_a and "errors" in run_a
    runs = one_json(run("eval", "runs", "--json", db=any_db).stdout)
    assert [r["run_id"] for r in runs] == [run_a["run_id"], run_b["run_id"]]
    comparison = one_json(run("eval", "compare", run_a["run_id"], run_b["run_id"], "--json",
                              db=any_db).stdout)
    assert [c["id"] for c in comparison["broken"]] == ["x"]
    assert comparison["accuracy_a"] == 0.5 and comparison["accuracy_b"] == 0.0
    missing = run("eval", "compare", run_a["run_id"], "nope", "--json", db=any_db)
    assert missing.returncode == 2 and "no decisions or answers run 'nope'" in one_json(
        missing.stdout)["error"]


TWO_ANSWER_CASES = (
    '{"id": "tls", "question": "How do I renew the TLS certificate?", '
    '"expected_documents": ["DOC-TLS"]}\n'
    '{"id": "off", "question": "What is the dress code for client visits?", '
    '"expected_documents": []}\n')


def test_eval_answers_end_to_end(any_db: str, tmp_path: Path) -> None:
    cases = tmp_path / "answers.jsonl"
    cases.write_text(TWO_ANSWER_CASES)
    report = one_json(run("eval", "answers", str(cases), "--json", db=any_db).stdout)
    by_id = {case["id"]: case for case in report["cases"]}
    assert by_id["tls"]["status"] == "answered" and by_id["tls"]["cites_expected"] is True
    assert by_id["off"]["status"] == "no_answer" and by_id["off"]["answered_as_expected"]
    assert report["answered_as_expected"] == 1.0 and report["invalid_citations"] == 0
    assert one_json(run("traces", "export", "--out", str(tmp_path / "t.jsonl"), "--json",
                        db=any_db).stdout)["rows"] == 0  # eval turns stay out of the traces
    _answer_runs_are_stored_and_compared(report, cases, any_db)


def _answer_runs_are_stored_and_compared(before: dict[str, Any], cases: Path, db: str) -> None:
    """An operator who changes a setting sees which questions it fixed or broke: `eval
    answers` stores its run, `eval compare` pairs two by case id; runs of two kinds are not
    compared (exit 2, nothing stored)."""
    # The same questions, with the TLS one now expected from another page: broken.
    cases.write_text(cases.read_text().replace('["DOC-TLS"]', '["DOC-DB"]'))
    after = one_json(run("eval", "answers", str(cases), "--json", db=db).stdout)
    assert before["run_id"].startswith("answers-") and after["run_id"] != before["run_id"]
    runs = one_json(run("eval", "runs", "--json", db=db).stdout)
    assert [(r["run_id"], r["kind"], r["total"], r["accuracy"]) for r in runs] == [
        (before["run_id"], "answers", 2, 1.0), (after["run_id"], "answers", 2, 0.5)]
    assert runs[0]["backend"] == "rules" and before["retriever"]  # the model-free default
    comparison = one_json(run("eval", "compare", before["run_id"], after["run_id"], "--json",
                              db=db).stdout)
    assert [(c["id"], c["before"], c["after"], c["page_after"]) for c in comparison["broken"]
            ] == [("tls", "right", "wrong", "DOC-TLS")]
    assert comparison["fixed"] == comparison["changed"] == []
    decisions = cases.with_name("decisions.jsonl")
    decisions.write_text('{"id": "x", "message": "Restart docassist-api now", '
                         '"expected": {"status": "rejected"}}\n')
    other = one_json(run("eval", "decisions", str(decisions), "--json", db=db).stdout)
    mixed = run("eval", "compare", before["run_id"], other["run_id"], "--json", db=db)
    assert mixed.returncode == 2 and one_json(mixed.stdout)["error"] == (
        f"'{before['run_id']}' is from `eval answers` and '{other['run_id']}' from `eval "
        "decisions`: compare two runs of one kind")
    assert len(one_json(run("eval", "runs", "--json", db=db).stdout)) == 3


def test_one_held_out_file_serves_both_evals_per_set_into_the_page(db_path: Path,
                                                                    tmp_path: Path) -> None:
    """A held-out file mixes sets and unanswerable cases: `--set` picks one set, retrieval
    leaves out the unanswerable case, and each writes its own block into the page, stamped
    with the commit of the code that measured, wherever it was run from."""
    cases = tmp_path / "heldout.jsonl"
    cases.write_text(
        '{"id": "a1", "set": "demo", "split": "test", "lang": "en", '
        '"question": "How do I renew the TLS certificate?", "expected_documents": ["DOC-TLS"]}\n'
        '{"id": "a2", "set": "demo", "split": "test", "lang": "en", '
        '"question": "What is the dress code for client visits?", "expected_documents": []}\n'
        '{"id": "b1", "set": "other", "split": "test", "question": "Who owns the coffee '
        'machine?", "expected_documents": ["DOC-NOT-HERE"]}\n')
    page = tmp_path / "evaluation.md"
    for kind in ("answers", "retrieval"):
        done = run("eval", kind, str(cases), "--set", "demo", "--split", "test", "--page",
                   str(page), "--json", db=db_path, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        report = one_json(done.stdout)
        assert [case["id"] for case in report["cases"]] == (
            ["a1", "a2"] if kind == "answers" else ["a1"])
    text = page.read_text()
    head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True, check=True).stdout.strip()
    assert text.count(f"on commit `{head}") == 2  # marked when the tree has changes
    assert "<!-- begin answers heldout.jsonl demo test -->" in text
    assert "<!-- begin retrieval heldout.jsonl demo test -->" in text
    assert "| bm25s |" in text and "| ranked (default) |" in text


def test_eval_decisions_writes_its_figures_into_a_page_block_replaced_when_run_again(
        db_path: Path, tmp_path: Path) -> None:
    cases = tmp_path / "fresh.jsonl"
    cases.write_text(
        '{"id": "d1", "language": "en", "kind": "procedure", "message": "How do I renew the '
        'TLS certificate?", "expected": {"status": "action_proposed", "action": '
        '"answer_from_documents"}}\n'
        '{"id": "d2", "language": "pl", "kind": "sources_without_answer", "message": '
        '"pokaz zrodla", "expected": {"status": "clarification_needed"}}\n')
    page = tmp_path / "selector-evaluation.md"
    for _ in range(2):
        done = run("eval", "decisions", str(cases), "--page", str(page), "--json", db=db_path)
        assert done.returncode == 0, done.stderr
    report = one_json(done.stdout)
    text = page.read_text()
    assert text.startswith("# Selector evaluation")
    assert text.count("<!-- begin decisions fresh.jsonl all all -->") == 1
    assert f"({report['correct']}/2)" in text
    assert "| language pl | 1 |" in text and "| kind procedure | 1 |" in text
    assert "| action_proposed:answer_from_documents | 1 |" in text


def test_harvest_drafts_with_and_without_raw_text(db_path: Path, tmp_path: Path) -> None:
    run("ask", "What is the dress code for client visits?", db=db_path)
    run("ask", "What is the parental leave policy for contractors?", db=db_path,
        DOCASSIST_SAVE_RAW="true")
    run("ask", "How do I renew the TLS certificate?", db=db_path)
    out = tmp_path / "drafts.jsonl"
    done = run("eval", "harvest", "--out", str(out), "--json", db=db_path)
    assert one_json(done.stdout) == {"drafts": 2, "text_unavailable": 1, "out": str(out)}
    assert "text unavailable for 1 of 2" in done.stderr
    hashed, raw = [json.loads(line) for line in out.read_text().splitlines()]
    assert hashed["text_unavailable"] is True and hashed["question"] is None
    assert raw["question"] == "What is the parental leave policy for contractors?"
    assert raw["expected_documents"] == []


def test_harvest_and_eval_answers_bad_arguments(db_path: Path, tmp_path: Path) -> None:
    unwritable = run("eval", "harvest", "--out", "/nonexistent-dir/d.jsonl", "--json",
                     db=db_path)
    assert unwritable.returncode == 2
    assert "cannot write /nonexistent-dir/d.jsonl" in one_json(unwritable.stdout)["error"]
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"id": "a"}\n')
    done = run("eval", "answers", str(broken), "--json", db=db_path)
    assert done.returncode == 2 and "line 1" in one_json(done.stdout)["error"]
