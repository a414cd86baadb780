"""What a newcomer reads at the command line (issue 42, items 6–8): tables at 80 columns keep
every id whole, a document without a version shows "—", `--version` answers, a file whose
name is not UTF-8 is named clearly, and the writer lock beside a database is not committed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

from tests.cli_run import one_json, run
from tests.conftest import DEMO_DOCS, REPO

NARROW = {"COLUMNS": "80"}
BM25_ONLY = {"DOCASSIST_EMBEDDER": "none", "DOCASSIST_RETRIEVER": "bm25"}
VERSIONLESS = "DOC-ONBOARDING-FAQ"
"""The demo document whose front matter declares no version (its version is its hash)."""
NOT_UTF8 = b"na\xffme.md"


def first_cells(table: str) -> list[str]:
    """The first column of each body row of a rich table (continuation rows give "")."""
    body = table.split("╇", 1)[1].splitlines()[1:-1] if "╇" in table else []
    return [line.split("│")[1].strip() for line in body if line.startswith("│")]


def test_docs_at_80_columns_keeps_every_id_whole_and_shows_no_hash(db_path: Path) -> None:
    documents = one_json(run("docs", "--json", db=db_path).stdout)
    hashed = next(d for d in documents if d["document_id"] == VERSIONLESS)["version"]
    done = run("docs", db=db_path, **NARROW)
    assert done.returncode == 0, done.stderr
    assert max(len(line) for line in done.stdout.splitlines()) <= 80
    ids = [cell for cell in first_cells(done.stdout) if cell]
    assert ids == sorted(d["document_id"] for d in documents)
    row = next(line for line in done.stdout.splitlines() if VERSIONLESS in line)
    assert "│ —" in row and hashed not in done.stdout  # JSON keeps the hash, people see "—"


def test_docs_with_a_handbooks_long_ids_at_80_columns_lists_records_not_cut_words(
        tmp_path: Path) -> None:
    """A real tree's path ids (50 characters and more) left the other columns a few
    characters each ("A…", "s…"): each document is then a record, its id whole on a line."""
    nested = tmp_path / "handbook" / "departments" / "people-operations" / "tools-and-faq"
    nested.mkdir(parents=True)
    for name in ("requesting-equipment-for-a-new-starter.md", "expenses-and-travel.md"):
        (nested / name).write_text(f"# {name[:-3].replace('-', ' ').title()}\n\nText.\n")
    db = tmp_path / "long.db"
    assert run("index", str(tmp_path / "handbook"), "--json", db=db).returncode == 0
    documents = one_json(run("docs", "--json", db=db).stdout)
    done = run("docs", db=db, cwd=tmp_path, **NARROW)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80 and "…" not in done.stdout
    unwrapped = "".join(done.stdout.split())
    for document in documents:
        assert document["document_id"] in lines  # whole, alone on its line
        assert f"title: {document['title']}" in done.stdout
        # The file it came from, relative to the folder `docs` ran in: its id ends in a hash.
        path = Path(document["source_path"]).relative_to(tmp_path)
        assert f"path:{path}" in unwrapped and path.parts[0] == "handbook"


def test_gaps_and_doctor_at_80_columns_keep_ids_and_paths_whole(tmp_path: Path) -> None:
    """`gaps` cut every long id to the same "DOC-CODE-WITH-ENGINEERING-PLA…" and `doctor`
    the database's path to "/tmp/trial113-data/d…"."""
    nested = tmp_path / "handbook" / "departments" / "people-operations" / "tools-and-faq"
    nested.mkdir(parents=True)
    for name in ("requesting-equipment-for-a-new-starter.md", "expenses-and-travel-claims.md"):
        (nested / name).write_text(f"# {name[:-3].replace('-', ' ').title()}\n\nAsk your "
                                   "manager, then file the form in the portal.\n")
    db = tmp_path / "a-rather-long-folder-name-for-the-database" / "docassist.db"
    db.parent.mkdir()
    assert run("index", str(tmp_path / "handbook"), "--json", db=db).returncode == 0
    asked = one_json(run("ask", "What is the salary band for a senior engineer?", "--json",
                         db=db).stdout)
    assert asked["status"] == "no_answer"
    report = one_json(run("gaps", "--json", db=db).stdout)
    ids = {d["document_id"] for group in report["groups"] for d in group["documents"]}
    shown = run("gaps", db=db, **NARROW)
    assert ids and "…" not in shown.stdout
    assert ids <= {line.split(" (")[0] for line in shown.stdout.splitlines()}
    doctor = run("doctor", db=db, **NARROW)
    lines = doctor.stdout.splitlines()
    assert str(db) in lines  # on a line of its own, whole, though longer than the terminal
    assert max(len(line) for line in lines if line != str(db)) <= 80


def test_index_names_ten_ids_and_counts_the_rest(tmp_path: Path) -> None:
    """Indexing a 175-page handbook printed every id on one 12 KB line."""
    (tmp_path / "pages").mkdir()
    for number in range(12):
        (tmp_path / "pages" / f"page-{number:02d}.md").write_text(f"# Page {number}\n\nText.\n")
    done = run("index", str(tmp_path / "pages"), db=tmp_path / "x.db")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (
        "indexed 12, unchanged 0, removed 0: "
        + ", ".join(f"DOC-PAGE-{number:02d}" for number in range(10))
        + " and 2 more (`docassist docs` lists them)")
    listed = one_json(run("index", str(tmp_path / "pages"), "--json", db=tmp_path / "y.db").stdout)
    assert len(listed["indexed"]) == 12  # JSON keeps every id


def test_eval_shadow_with_nothing_shadowed_says_how_to_start(db_path: Path) -> None:
    """Without DOCASSIST_SHADOW_MODEL it printed "agreement 0.0%", read as a verdict."""
    done = run("eval", "shadow", db=db_path)
    assert done.returncode == 0 and "agreement" not in done.stdout
    assert "set DOCASSIST_SHADOW_MODEL" in done.stdout
    report = one_json(run("eval", "shadow", "--json", db=db_path).stdout)
    assert report["total"] == 0  # the JSON keeps its keys


def test_only_an_answer_can_be_rated_in_the_terminal_chat(db_path: Path) -> None:
    """`/bad` after the reply to a greeting was thanked, and listed among the gaps."""
    done = run("chat", db=db_path, stdin="hello\n/bad\n/quit\n")
    assert done.returncode == 0, done.stderr
    assert "There is no answer to rate yet." in done.stdout
    assert "Thanks for the feedback." not in done.stdout
    assert one_json(run("gaps", "--json", db=db_path).stdout)["groups"] == []


def test_piped_output_is_not_wrapped_at_80_columns(db_path: Path) -> None:
    """Into a pipe with no COLUMNS, Rich wrapped at 80 and cut commands in two."""
    done = run("ask", "Jak odnowić certyfikat TLS?", db=db_path, COLUMNS="")
    assert done.returncode == 0, done.stderr
    assert max(len(line) for line in done.stdout.splitlines()) > 80
    wide = run("docs", db=db_path, COLUMNS="")
    assert "indexed" in wide.stdout.splitlines()[1]  # every column: none was dropped
    assert "path" in wide.stdout.splitlines()[1]


def test_trace_warnings_show_only_with_debug(db_path: Path) -> None:
    """`! unstated_money` under a refusal read as an internal code leaking to employees."""
    question = "How much does the TLS certificate cost?"
    [warning] = one_json(run("ask", question, "--json", db=db_path).stdout)["warnings"]
    plain = run("ask", question, db=db_path)
    assert plain.returncode == 0 and warning not in plain.stdout
    debug = run("ask", question, "--debug", db=db_path)
    assert f"! {warning}" in debug.stdout


def test_sources_and_eval_runs_at_80_columns_keep_their_ids_whole(
        db_path: Path, tmp_path: Path) -> None:
    name = "handbook-of-the-platform-team-on-call"
    added = run("sources", "add", "folder", name, "--path", str(DEMO_DOCS), db=db_path)
    assert added.returncode == 0, added.stderr
    shown = run("sources", db=db_path, **NARROW)
    assert shown.returncode == 0 and name in shown.stdout.splitlines()  # a record: id alone
    assert "…" not in shown.stdout  # no column cut to "fold…", "defa…"
    assert max(len(line) for line in shown.stdout.splitlines()) <= 80
    cases = tmp_path / "cases.jsonl"
    cases.write_text((REPO / "samples" / "decisions_dev.jsonl").read_text().splitlines()[0])
    assert run("eval", "decisions", str(cases), db=db_path, **BM25_ONLY).returncode == 0
    [stored] = one_json(run("eval", "runs", "--json", db=db_path).stdout)
    runs = run("eval", "runs", db=db_path, **NARROW)
    assert first_cells(runs.stdout) == [stored["run_id"]]
    assert max(len(line) for line in runs.stdout.splitlines()) <= 80


def test_version_prints_the_installed_version(tmp_path: Path) -> None:
    done = run("--version", db=tmp_path / "unused.db")
    assert done.returncode == 0 and done.stdout == f"docassist {version('docassist')}\n"
    assert not (tmp_path / "unused.db").exists()  # nothing is opened to answer it


def test_a_file_name_that_is_not_utf8_is_named_not_a_codec_error(
        tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "good.md").write_text("# Good\n\nPlain text.\n")
    bad = os.fsdecode(os.fsencode(folder) + b"/" + NOT_UTF8)
    Path(bad).write_text("# Bad\n\nText.\n")
    db = tmp_path / "index.db"
    environment = {**os.environ, "DOCASSIST_DB": str(db), "COLUMNS": "200", **BM25_ONLY}
    folder_run = subprocess.run([sys.executable, "-m", "docassist", "index", str(folder),
                                 "--json"], capture_output=True, text=True, timeout=120,
                                env=environment, check=False)
    assert folder_run.returncode == 0, folder_run.stderr
    assert "codec" not in folder_run.stderr and "Traceback" not in folder_run.stderr
    report = one_json(folder_run.stdout)
    assert any("na\\xffme.md" in note and "not valid UTF-8" in note
               for note in report["notes"]), report
    file_run = subprocess.run([sys.executable, "-m", "docassist", "index", bad, "--json"],
                              capture_output=True, text=True, timeout=120, env=environment,
                              check=False)
    assert file_run.returncode == 2
    assert json.loads(file_run.stdout)["error"].endswith(
        "na\\xffme.md: the name is not valid UTF-8 text (rename it)")


def test_the_writer_lock_beside_the_default_database_is_ignored_by_git() -> None:
    for name in ("docassist.db", "docassist.db-writer", "docassist.db-wal"):
        done = subprocess.run(["git", "check-ignore", "--no-index", "-q", name], cwd=REPO,
                              check=False)
        assert done.returncode == 0, f"{name} is not in .gitignore"


def test_a_folder_source_that_does_not_exist_is_a_usage_error_naming_it(
        db_path: Path, tmp_path: Path) -> None:
    missing = tmp_path / "not-mounted"
    done = run("sources", "add", "folder", "handbook", "--path", str(missing), "--json",
               db=db_path)
    assert done.returncode == 2
    assert one_json(done.stdout) == {"error": f"no such folder: {missing}"}
    assert one_json(run("sources", "--json", db=db_path).stdout) == {"sources": []}


def test_a_record_too_wide_for_one_line_puts_each_field_on_its_own(tmp_path: Path) -> None:
    """At 100 columns "indexed: " ended one line and its date began the next, with trailing
    spaces: a field is never cut between its name and its value."""
    nested = tmp_path / "handbook" / "departments" / "people-operations" / "tools-and-faq"
    nested.mkdir(parents=True)
    (nested / "requesting-equipment-for-a-new-starter.md").write_text("# Equipment\n\nText.\n")
    db = tmp_path / "long.db"
    assert run("index", str(tmp_path / "handbook"), "--json", db=db).returncode == 0
    done = run("docs", db=db, COLUMNS="100")
    lines = done.stdout.splitlines()
    assert all(line == line.rstrip() for line in lines)
    fields = [line.strip() for line in lines if line.startswith("  ")]
    assert "collection: default" in fields and any(f.startswith("indexed: 20") for f in fields)
