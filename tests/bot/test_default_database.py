"""One default database per user, in the platform's data folder; DOCASSIST_DB overrides it.
A `docassist.db` in the working folder (the old default) stays in use, with a note on
stderr saying where the database lives now and how to keep or move the old one (issue 42,
item 2). The suite's data folder is a throwaway one (tests/conftest.py)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.cli_run import one_json, run
from tests.conftest import USER_DATA_VARIABLE

BM25_ONLY = {"DOCASSIST_EMBEDDER": "none", "DOCASSIST_RETRIEVER": "bm25"}


@pytest.fixture
def data_home(tmp_path: Path) -> Path:
    return tmp_path / "data"


def user_db(data_home: Path) -> Path:
    return data_home / "docassist" / "docassist.db"


def in_folder(folder: Path, data_home: Path, *args: str, **env: str) -> tuple[int, str, str]:
    folder.mkdir(exist_ok=True)
    done = run(*args, db=None, cwd=folder, **{USER_DATA_VARIABLE: str(data_home)}, **env)
    return done.returncode, done.stdout, done.stderr


def test_ask_from_any_folder_uses_the_users_database_and_indexes_the_demo_there(
        tmp_path: Path, data_home: Path) -> None:
    code, stdout, stderr = in_folder(tmp_path / "elsewhere", data_home, "ask",
                                     "How do I renew the TLS certificate?", "--json",
                                     **BM25_ONLY)
    assert code == 0, stderr
    assert one_json(stdout)["status"] == "answered"
    assert "indexing the demo corpus" in stderr  # an empty per-user database: first start
    assert user_db(data_home).is_file()
    assert not (tmp_path / "elsewhere" / "docassist.db").exists()  # nothing in the folder
    code, stdout, _ = in_folder(tmp_path / "another", data_home, "docs", "--json")
    assert code == 0 and "DOC-TLS" in {d["document_id"] for d in one_json(stdout)}
    assert os.listdir(tmp_path / "another") == []


def test_a_database_in_the_working_folder_stays_in_use_and_the_move_is_explained(
        tmp_path: Path, data_home: Path, db_path: Path) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    shutil.copy(db_path, folder / "docassist.db")
    code, stdout, stderr = in_folder(folder, data_home, "docs", "--json")
    assert code == 0, stderr
    assert "DOC-TLS" in {d["document_id"] for d in one_json(stdout)}  # the old one, in use
    target = user_db(data_home)
    assert f"DocAssist now keeps its database in {target}" in stderr
    assert "export DOCASSIST_DB=./docassist.db" in stderr
    assert f"mkdir -p {target.parent} && mv docassist.db {target.parent}/" in stderr
    assert not target.exists()  # nothing was moved or made behind the user's back


def test_with_both_databases_the_folders_stays_and_the_note_names_the_other(
        tmp_path: Path, data_home: Path, db_path: Path) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    shutil.copy(db_path, folder / "docassist.db")
    in_folder(tmp_path / "elsewhere", data_home, "db", "migrate")  # makes the user's one
    code, stdout, stderr = in_folder(folder, data_home, "docs", "--json")
    assert code == 0 and len(one_json(stdout)) >= 5  # still the folder's, with the demo
    assert f"To use that one:  export DOCASSIST_DB={user_db(data_home)}" in stderr
    assert "mv docassist.db" not in stderr  # a move would overwrite the other one


def test_docassist_db_overrides_both_and_silences_the_note(
        tmp_path: Path, data_home: Path, db_path: Path) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "docassist.db").write_bytes(b"")  # the old default, left alone
    done = run("docs", "--json", db=db_path, cwd=folder,
               **{USER_DATA_VARIABLE: str(data_home)})
    assert done.returncode == 0 and len(one_json(done.stdout)) >= 5
    assert "DOCASSIST_DB" not in done.stderr
    assert not data_home.exists()
