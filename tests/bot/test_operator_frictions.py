"""What a new operator met in the first hour over a real handbook (a trial on NHS Digital's
quality framework): `traces export --out -` wrote a file named "-", `ask` took
`--collections` where `index` takes `--collection`, and `gaps` listed the same hash twice
with no word on why the questions were hashes."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli_run import one_json, run

UNANSWERABLE = "What is the parking allowance for contractors on weekends?"


def test_traces_export_to_dash_writes_the_rows_to_stdout(db_path: Path, tmp_path: Path) -> None:
    assert run("ask", "How do I report an incident?", db=db_path).returncode == 0
    done = run("traces", "export", "--out", "-", db=db_path, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(rows) == 1 and rows[0]["status"] == "answered"
    assert "exported 1 turn(s) (jsonl)" in done.stderr
    assert not (tmp_path / "-").exists()
    as_csv = run("traces", "export", "--out", "-", "--format", "csv", db=db_path, cwd=tmp_path)
    assert as_csv.stdout.splitlines()[0].startswith("result_id,")


def test_traces_export_to_dash_with_json_is_refused_and_writes_nothing(
        db_path: Path, tmp_path: Path) -> None:
    done = run("traces", "export", "--out", "-", "--json", db=db_path, cwd=tmp_path)
    assert done.returncode == 2
    assert one_json(done.stdout) == {
        "error": "--out - writes the export to stdout; leave out --json"}
    assert not (tmp_path / "-").exists()


def test_ask_takes_collection_as_index_spells_it(db_path: Path) -> None:
    one = run("ask", "How do I report an incident?", "--collection", "default", "--json",
              db=db_path)
    assert one.returncode == 0, one.stderr
    assert one_json(one.stdout)["status"] == "answered"
    unknown = run("ask", "How do I report an incident?", "--collection", "hr", db=db_path)
    assert unknown.returncode == 2
    assert "unknown collection: hr" in unknown.stderr


def test_gaps_lists_each_hash_once_and_says_why_they_are_hashes(db_path: Path) -> None:
    for _ in range(2):
        asked = run("ask", UNANSWERABLE, "--json", db=db_path)
        assert one_json(asked.stdout)["status"] == "no_answer"
    done = run("gaps", db=db_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("sha256:") == 1
    assert "set DOCASSIST_SAVE_RAW=true to keep the text of new ones" in done.stdout


def test_eval_answers_shows_whether_the_section_is_an_expected_one(db_path: Path,
                                                                   tmp_path: Path) -> None:
    """A right page's wrong section read as "right" in the table: the section is a column."""
    cases = tmp_path / "cases.jsonl"
    cases.write_text(
        '{"id": "tls", "question": "How do I renew the TLS certificate?", '
        '"expected_documents": ["DOC-TLS"], "expected_sections": ["No such section"]}\n'
        '{"id": "off", "question": "' + UNANSWERABLE + '", "expected_documents": []}\n')
    done = run("eval", "answers", str(cases), db=db_path)
    assert done.returncode == 0, done.stderr
    rows = {line.split("│")[1].strip(): [cell.strip() for cell in line.split("│")[2:-1]]
            for line in done.stdout.splitlines() if line.startswith("│")}
    assert rows["tls"][:2] == ["right", "✗"] and rows["off"][1] == "-"


def test_an_unknown_collection_is_not_told_an_empty_default_exists(tmp_path: Path) -> None:
    """A handbook indexed into its own collection: the error named `default`, which held
    nothing, beside it (`docs --json` listed only the handbook's pages)."""
    handbook, db = tmp_path / "handbook", tmp_path / "d.db"
    handbook.mkdir()
    (handbook / "leave.md").write_text("# Leave\nBook leave in the HR portal.\n")
    assert run("index", str(handbook), "--collection", "hb", db=db).returncode == 0
    unknown = run("ask", "How do I book leave?", "--collection", "nope", "--json", db=db)
    assert unknown.returncode == 2
    assert one_json(unknown.stdout) == {"error": "unknown collection: nope (known: hb)"}
    report = run("report", "--out", str(tmp_path / "r.html"), "--collection", "nope", db=db)
    assert report.returncode == 2 and "(known: hb)" in report.stderr
    assert not (tmp_path / "r.html").exists()
    empty_default = run("ask", "How do I book leave?", "--collection", "default", db=db)
    assert empty_default.returncode == 0, empty_default.stderr  # it exists: nothing to answer
