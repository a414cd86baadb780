"""Issue 14 through the `docassist` process: the TLS demo over `ask --thread --json`, the
held-out split of `eval decisions`, and `eval answers` with expected sections."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli_run import one_json, run
from tests.conftest import REPO
from tests.helpers import SCORES_HELDOUT_TEST


def test_the_tls_demo_over_ask_thread_json(db_path: Path) -> None:
    first = one_json(run("ask", "Jak odnowić certyfikat TLS?", "--thread", "tls", "--json",
                         db=db_path).stdout)
    assert first["status"] == "answered"
    answer = first["answer"]
    positions = [answer.find(section) for section in (
        "Requesting a new certificate", "Installing the certificate",
        "Reloading docassist-gateway")]
    assert -1 not in positions and positions == sorted(positions)
    assert answer.splitlines()[1].startswith("1. ")
    follow = one_json(run("ask", "a co jeśli wygasł już wczoraj?", "--thread", "tls", "--json",
                          db=db_path).stdout)
    assert follow["status"] == "answered"
    assert {source["document_id"] for source in follow["sources"]} == {"DOC-TLS"}
    assert "If a certificate actually expires" in follow["answer"]


@SCORES_HELDOUT_TEST
def test_eval_decisions_on_the_held_out_test_split(db_path: Path) -> None:
    done = run("eval", "decisions", str(REPO / "samples" / "public" / "decisions_heldout.jsonl"),
               "--split", "test", "--json", db=db_path)
    assert done.returncode == 0, done.stderr
    report = one_json(done.stdout)
    assert {"total", "correct", "accuracy", "macro_f1", "by_status", "cases"} <= set(report)
    assert report["total"] == 228 and report["model"].startswith("learned-")
    assert set(report["by_language"]) == {"pl", "en"}
    assert report["by_kind"]["procedure"]["total"] == 50
    assert {case["kind"] for case in report["cases"]} >= {"injection", "ambiguous_followup"}


def test_eval_answers_reports_the_expected_section(db_path: Path, tmp_path: Path) -> None:
    cases = tmp_path / "answers.jsonl"
    cases.write_text("\n".join(json.dumps(case) for case in [
        {"id": "csr", "question": "How do I generate a CSR for the gateway certificate?",
         "expected_documents": ["DOC-TLS"], "expected_sections": ["Requesting a new certificate"]},
        {"id": "wrong", "question": "How long are database backups kept?",
         "expected_documents": ["DOC-DB"], "expected_sections": ["Rollback"]},
        {"id": "plain", "question": "How do I renew the TLS certificate?",
         "expected_documents": ["DOC-TLS"]},
    ]) + "\n")
    report = one_json(run("eval", "answers", str(cases), "--json", db=db_path).stdout)
    by_id = {case["id"]: case for case in report["cases"]}
    assert by_id["csr"]["cites_expected_section"] is True
    assert by_id["wrong"]["cites_expected_section"] is False
    assert by_id["plain"]["cites_expected_section"] is None
    assert (report["cites_expected_section"], report["section_cases"]) == (0.5, 2)
