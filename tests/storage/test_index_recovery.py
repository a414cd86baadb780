"""The index follows its folder: deleted symlinks leave, and a first-start indexing killed
midway is finished by the next start (a real process, SIGKILL)."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

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
    assert index_drift(settings) == ("2 documents (default 2); 2 indexed files unchanged; "
                                     f"every file in {folder} indexed")
    (folder / "a.md").write_text("# A\nRotate the keys monthly.\n")
    (folder / "b.md").unlink()
    (folder / "c.md").write_text("# C\nNew.\n")
    with pytest.raises(IndexDrift) as drift:
        index_drift(settings)
    assert str(drift.value) == (
        f"2 documents (default 2): 1 not indexed in {folder}; 1 changed since indexed "
        f"({folder / 'a.md'}); 1 gone ({folder / 'b.md'}); run `docassist index {folder}`")
    elsewhere = Settings(db=tmp_path / "d.db", docs=REPO / "samples" / "docs")
    with pytest.raises(IndexDrift) as drift:  # its files are checked wherever they are
        index_drift(elsewhere)
    assert str(drift.value).endswith("run `docassist index PATH` on their folders "
                                     "(`docassist sync` for a configured source)")


def index_check(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    [check] = [check for check in one_json(done.stdout)["checks"] if check["role"] == "index"]
    return dict(check)


def test_doctor_fails_on_an_empty_index_naming_the_command_that_fills_it(
        tmp_path: Path) -> None:
    """Nothing indexed, nothing can be answered: not a healthy service (it passed before)."""
    db = tmp_path / "empty.db"
    done = run("doctor", "--json", db=db, **BM25_ONLY)
    assert done.returncode == 1, done.stdout + done.stderr
    assert one_json(done.stdout)["ok"] is False
    assert index_check(done) == {
        "role": "index", "spec": "catalog", "ok": False, "latency_ms": None,
        "detail": "the index is empty (0 documents): no question can be answered; run "
                  "`docassist index PATH` (or `docassist sync` for configured sources)"}
    plain = run("doctor", db=db, COLUMNS="300", **BM25_ONLY)
    assert plain.returncode == 1 and "`docassist index PATH`" in plain.stdout


def test_doctor_checks_what_the_catalog_holds_not_only_the_demo_folder(tmp_path: Path) -> None:
    """The catalog built from folders other than DOCASSIST_DOCS (the demo, by default): its
    documents are counted by collection, and its files checked wherever they are."""
    guides, people = tmp_path / "guides", tmp_path / "people"
    for folder, name in ((guides, "keys"), (guides, "backups"), (people, "leave")):
        folder.mkdir(exist_ok=True)
        (folder / f"{name}.md").write_text(f"# {name}\nThe {name} procedure.\n")
    db = tmp_path / "d.db"
    assert run("index", str(guides), db=db, **BM25_ONLY).returncode == 0
    assert run("index", str(people), "--collection", "hr", db=db, **BM25_ONLY).returncode == 0
    healthy = run("doctor", "--json", db=db, **BM25_ONLY)
    assert healthy.returncode == 0, healthy.stdout
    assert index_check(healthy)["detail"] == "3 documents (default 2, hr 1); 3 indexed files " \
                                            "unchanged"
    (guides / "keys.md").write_text("# keys\nRotated monthly now.\n")
    (people / "leave.md").unlink()
    drifted = run("doctor", "--json", db=db, **BM25_ONLY)
    assert drifted.returncode == 1
    assert index_check(drifted)["detail"] == (
        f"3 documents (default 2, hr 1): 1 changed since indexed ({guides / 'keys.md'}); "
        f"1 gone ({people / 'leave.md'}); run `docassist index PATH` on their folders "
        "(`docassist sync` for a configured source)")


def test_doctor_names_an_index_run_that_did_not_finish(tmp_path: Path) -> None:
    """`docassist index` leaves its mark while it runs (runtime.INDEX_RUN_KEY): a run killed
    midway left a partial catalog that looks healthy file by file."""
    from docassist.config import Settings
    from docassist.runtime import INDEX_RUN_KEY
    from docassist.serving.doctor import IndexDrift, index_drift

    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_text("# A\nRotate the keys yearly.\n")
    store = Store(tmp_path / "d.db")
    index_paths(store, [folder])
    store.set_meta_value(INDEX_RUN_KEY, json.dumps([str(folder)]))
    store.close()
    with pytest.raises(IndexDrift) as drift:
        index_drift(Settings(db=tmp_path / "d.db"))
    assert str(drift.value) == (f"1 document (default 1): `docassist index {folder}` did not "
                                "finish: run it again")
