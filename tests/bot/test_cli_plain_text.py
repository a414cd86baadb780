"""What the CLI prints is the text as written: square brackets in a path, a title or an
install hint are not Rich markup (a newcomer was told `pip install -e '.'` where the hint said
`'.[dev]'`), and a database in a folder that does not exist is named as such."""

from __future__ import annotations

from pathlib import Path

from tests.cli_run import one_json, run


def test_an_error_keeps_the_brackets_of_the_path_it_names(tmp_path: Path) -> None:
    missing = tmp_path / "drafts [old]" / "leave.md"
    done = run("index", str(missing), db=tmp_path / "docs.db")
    assert done.returncode == 2
    assert f"error: no such file or folder: {missing}" in done.stderr
    assert done.stdout == ""
    assert not (tmp_path / "docs.db").exists()  # nothing was opened, let alone indexed
    as_json = run("index", str(missing), "--json", db=tmp_path / "docs.db")
    assert one_json(as_json.stdout) == {"error": f"no such file or folder: {missing}"}


def test_a_title_with_brackets_is_listed_as_written(tmp_path: Path) -> None:
    page = tmp_path / "notes.md"
    page.write_text("# Release [beta] notes\n\nThe beta opens on Monday for the [ops] team.\n",
                    encoding="utf-8")
    db = tmp_path / "docs.db"
    assert run("index", str(page), "--json", db=db).returncode == 0
    listed = run("docs", db=db)
    assert listed.returncode == 0, listed.stderr
    assert "Release [beta] notes" in listed.stdout


def test_a_database_in_a_missing_folder_is_named_and_not_created(tmp_path: Path) -> None:
    db = tmp_path / "no-such-folder" / "docassist.db"
    done = run("docs", db=db)
    assert done.returncode == 2
    assert (f"error: cannot open database {db}: the folder {db.parent} does not exist; "
            "create it, or point DOCASSIST_DB at a file in a folder that does") in done.stderr
    assert not db.parent.exists()
    as_json = run("docs", "--json", db=db)
    assert as_json.returncode == 2
    assert "does not exist" in one_json(as_json.stdout)["error"]
