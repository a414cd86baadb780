"""The index follows its folder: deleted symlinks leave, and a first-start indexing killed
midway is finished by the next start (a real process, SIGKILL)."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from docassist.storage import Bm25Retriever, Store, index_paths
from docassist_testkit.fakes.loopback import wait_until
from tests.cli_run import one_json, run
from tests.conftest import REPO

BM25_ONLY = {"DOCASSIST_EMBEDDER": "none", "DOCASSIST_RETRIEVER": "bm25"}


def test_a_deleted_symlinked_file_leaves_the_catalog_and_is_not_cited(tmp_path: Path) -> None:
    """A link inside the folder to a file inside it is indexed under the link's name (a link
    leading outside never is: tests/storage/test_folder_walls.py)."""
    folder = tmp_path / "docs"
    (folder / "archive").mkdir(parents=True)
    (folder / "archive" / "target.txt").write_text("Archive index of old rotas.\n")
    (folder / "kept.md").write_text("# Kept\nRotate the keys yearly.\n")
    (folder / "pelicans.md").write_text("# Pelican rota\nFeed the pelicans at noon.\n")
    (folder / "link.md").symlink_to(folder / "pelicans.md")
    store = Store(tmp_path / "d.db")
    assert sorted(index_paths(store, [folder]).indexed) == [
        "DOC-ARCHIVE_TARGET", "DOC-KEPT", "DOC-LINK", "DOC-PELICANS"]
    retriever = Bm25Retriever(store)
    assert sorted(hit.document.document_id for hit in retriever.search("feed pelicans", 3)) == [
        "DOC-LINK", "DOC-PELICANS"]

    (folder / "link.md").unlink()  # the target is still there
    report = index_paths(store, [folder])
    assert report.removed == ["DOC-LINK"]
    assert sorted(report.unchanged) == ["DOC-ARCHIVE_TARGET", "DOC-KEPT", "DOC-PELICANS"]
    assert [hit.document.document_id for hit in retriever.search("feed pelicans", 3)] == [
        "DOC-PELICANS"]
    store.close()


def test_a_file_catalogued_under_its_resolved_path_is_not_a_duplicate(tmp_path: Path) -> None:
    """A catalog written before symlinks were kept as links names the target instead."""
    real = tmp_path / "real"
    real.mkdir()
    (real / "guide.md").write_text("# Guide\nRotate the keys yearly.\n")
    (tmp_path / "alias").symlink_to(real)
    store = Store(tmp_path / "d.db")
    index_paths(store, [real])
    report = index_paths(store, [tmp_path / "alias"])
    assert report.indexed == ["DOC-GUIDE"] and report.notes == []
    store.close()


def corpus(folder: Path, count: int) -> None:
    folder.mkdir()
    for number in range(count):
        body = "".join(f"## Step {step}\nCheck item {number}-{step} and restart the unit.\n"
                       for step in range(20))
        (folder / f"doc-{number:03d}.md").write_text(f"# Procedure {number}\n{body}")


def documents_in(db: Path) -> int:
    try:
        connection = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=0.2)
        try:
            return int(connection.execute("SELECT count(*) FROM documents").fetchone()[0])
        finally:
            connection.close()
    except sqlite3.Error:
        return 0


def test_first_start_indexing_killed_midway_is_finished_by_the_next_start(
        tmp_path: Path) -> None:
    docs, db = tmp_path / "docs", tmp_path / "d.db"
    corpus(docs, 200)
    environment = {**os.environ, "DOCASSIST_DB": str(db), "DOCASSIST_DOCS": str(docs),
                   **BM25_ONLY}
    # First-start indexing happens only in `chat` and `ask` (issue 20).
    first = subprocess.Popen([sys.executable, "-m", "docassist", "ask", "restart", "--json"],
                             env=environment, cwd=REPO, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    try:
        assert wait_until(lambda: documents_in(db) >= 5, seconds=60)
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait(10)
    partial = documents_in(db)
    assert 5 <= partial < 200, partial

    doctor = run("doctor", "--json", db=db, DOCASSIST_DOCS=str(docs), **BM25_ONLY)
    assert doctor.returncode == 1
    [index_check] = [check for check in one_json(doctor.stdout)["checks"]
                     if check["role"] == "index"]
    assert not index_check["ok"] and f"{200 - partial} not indexed" in index_check["detail"]

    second = run("ask", "restart", "--json", db=db, DOCASSIST_DOCS=str(docs), **BM25_ONLY)
    assert second.returncode == 0, second.stderr
    listed = run("docs", "--json", db=db, DOCASSIST_DOCS=str(docs), **BM25_ONLY)
    assert len(one_json(listed.stdout)) == 200
    assert "indexing" in second.stderr  # said so, not silently
    doctor = run("doctor", "--json", db=db, DOCASSIST_DOCS=str(docs), **BM25_ONLY)
    [index_check] = [check for check in one_json(doctor.stdout)["checks"]
                     if check["role"] == "index"]
    assert index_check["ok"] and doctor.returncode == 0, index_check


def test_doctor_names_what_differs_between_the_index_and_its_folder(tmp_path: Path) -> None:
    from docassist.config import Settings
    from docassist.serving.doctor import IndexDrift, index_drift

    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_text("# A\nRotate the keys yearly.\n")
    (folder / "b.md").write_text("# B\nBack up nightly.\n")
    store = Store(tmp_path / "d.db")
    index_paths(store, [folder])
    store.close()
    settings = Settings(db=tmp_path / "d.db", docs=folder)
    assert index_drift(settings) == f"2 files in {folder}, all indexed"
    (folder / "a.md").write_text("# A\nRotate the keys monthly.\n")
    (folder / "b.md").unlink()
    (folder / "c.md").write_text("# C\nNew.\n")
    with pytest.raises(IndexDrift) as drift:
        index_drift(settings)
    assert str(drift.value) == (f"2 files in {folder}: 1 not indexed, 1 changed since indexed, "
                                f"1 gone from the folder; run `docassist index {folder}`")
    elsewhere = Settings(db=tmp_path / "d.db", docs=REPO / "samples" / "docs")
    assert index_drift(elsewhere).startswith("the catalog was not built from")
