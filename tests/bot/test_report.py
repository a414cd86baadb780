"""`docassist report` renders a self-contained dashboard, checked in headless Chromium."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from docassist.storage import Store
from tests.cli_run import one_json, run
from tests.conftest import REPO

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update"]


def chromium() -> str:
    path = shutil.which("chromium")
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed (scripts/test installs it with apt as root)")
        pytest.skip("chromium is not installed")
    return path


@pytest.fixture(scope="module")
def report_file(module_db: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The report of three turns and an eval run, once per store: its tests only read it."""
    run("ask", "How do I renew the TLS certificate?", "--thread", "A", db=module_db)
    run("ask", "What is the dress code for client visits?", "--thread", "B", db=module_db)
    run("ask", "Restart docassist-api now", "--thread", "C", db=module_db)
    run("eval", "decisions", str(REPO / "samples" / "decisions_dev.jsonl"), "--json",
        db=module_db)
    out = tmp_path_factory.mktemp("report") / "report.html"
    done = run("report", "--out", str(out), "--json", db=module_db)
    assert done.returncode == 0, done.stderr
    assert one_json(done.stdout) == {"out": str(out)}
    return out


def test_the_report_is_self_contained(report_file: Path) -> None:
    text = report_file.read_text()
    assert not re.search(r"""(src|href)=["']?https?:""", text)  # no external requests
    assert "<script" not in text and text.count("<svg") == 4


def test_chromium_renders_the_charts_and_numbers(report_file: Path, tmp_path: Path) -> None:
    browser = chromium()
    profile = tmp_path / "profile"
    dom = subprocess.run(
        [browser, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--dump-dom",
         report_file.as_uri()], capture_output=True, text=True, timeout=90, check=True).stdout
    for chart in ("chart-days", "chart-status", "chart-tools", "chart-cited"):
        assert f'id="{chart}"' in dom
    assert re.search(r'id="card-turns">3<', dom)
    assert re.search(r'id="card-unanswered">1<', dom)
    # The dev set's figure as `eval decisions` stored it (the rules scored 1.000 on it).
    assert "DOC-TLS" in dom and re.search(r"macro-F1 (?:0\.9\d\d|1\.000)", dom)
    assert '<table class="confusion">' in dom
    # Top gaps: the unanswered question, grouped, with its closest documents and owners.
    assert re.search(r'<table class="gaps" id="gaps">.*?<td>1</td><td>no_answer 1</td>'
                     r'<td>DOC-[A-Z-]+ \([^)]+\)', dom, re.S)
    assert 'id="canary"' in dom
    screenshot = tmp_path / "report.png"
    subprocess.run([browser, *CHROMIUM_FLAGS, f"--user-data-dir={profile}",
                    "--window-size=1100,1400", f"--screenshot={screenshot}",
                    report_file.as_uri()], capture_output=True, timeout=90, check=True)
    assert screenshot.stat().st_size > 10_000


def test_report_to_an_unwritable_path_is_a_clear_error(db_path: Path) -> None:
    done = run("report", "--out", "/nonexistent-dir/r.html", "--json", db=db_path)
    assert done.returncode == 2
    assert "cannot write /nonexistent-dir/r.html" in one_json(done.stdout)["error"]


def test_an_unknown_collection_is_refused_and_nothing_is_written(db_path: Path,
                                                                 tmp_path: Path) -> None:
    """As `ask --collections`: a misspelt name would chart no turn and look like a report."""
    out = tmp_path / "r.html"
    done = run("report", "--out", str(out), "--collection", "nosuch", "--json", db=db_path)
    assert done.returncode == 2
    assert one_json(done.stdout) == {"error": "unknown collection: nosuch (known: default)"}
    assert "error: unknown collection: nosuch (known: default)" in done.stderr
    assert not out.exists()


def test_the_reasons_for_bad_votes_are_charted(db_path: Path, tmp_path: Path) -> None:
    run("ask", "How do I renew the TLS certificate?", "--thread", "A", db=db_path)
    store = Store(db_path)
    try:
        result_id = store.turns()[0]["result_id"]
        store.record_feedback_reason(result_id, "u1", "outdated", "words nobody keeps")
        store.record_feedback_reason(result_id, "u2", "outdated", None)
    finally:
        store.close()
    out = tmp_path / "report.html"
    assert run("report", "--out", str(out), "--json", db=db_path).returncode == 0
    text = out.read_text()
    assert 'id="chart-reasons"' in text and "words nobody keeps" not in text
    assert re.search(r'class="label">outdated</text>.*class="value">2</text>', text)
    browser = chromium()
    dom = subprocess.run(
        [browser, *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom",
         out.as_uri()], capture_output=True, text=True, timeout=90, check=True).stdout
    assert 'id="chart-reasons"' in dom and "Why answers did not help" in dom
