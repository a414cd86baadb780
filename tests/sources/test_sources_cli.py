"""`docassist sources` and `sync` as real processes: the JSON contract, exit codes, no demo
indexing, and no secret in the database or the output."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from docassist.storage import Store
from docassist_testkit.fakes.web_site import WebSite, page
from tests.cli_run import one_json, run

BASE_ENV = {"DOCASSIST_EMBEDDER": "none", "DOCASSIST_RETRIEVER": "bm25"}
SECRET = "Bearer s3cr3t-token-value-20"


@pytest.fixture
def site() -> Iterator[WebSite]:
    web = WebSite()
    web.state.pages.update({
        "/a.html": page("Alpha", ("Steps", "Alpha procedure text.")),
        "/b.html": page("Beta", ("Steps", "Beta procedure text."))})
    yield web
    web.stop()


def test_sources_and_sync_never_index_the_demo_corpus(tmp_path: Path) -> None:
    db = tmp_path / "fresh.db"
    listed = run("sources", "--json", db=db, **BASE_ENV)
    assert listed.returncode == 0, listed.stderr
    assert one_json(listed.stdout) == {"sources": []}
    synced = run("sync", "--json", db=db, **BASE_ENV)
    assert synced.returncode == 0 and one_json(synced.stdout) == {"sources": []}
    (tmp_path / "empty").mkdir()
    added = run("sources", "add", "folder", "empty", "--path", str(tmp_path / "empty"), db=db,
                **BASE_ENV)
    assert added.returncode == 0, added.stderr
    store = Store(db)
    assert store.documents() == []
    store.close()
    # With a source configured, first-start demo indexing no longer happens anywhere.
    assert one_json(run("docs", "--json", db=db, **BASE_ENV).stdout) == []


def test_a_folder_source_syncs_the_folder_and_reports_it(tmp_path: Path) -> None:
    db = tmp_path / "f.db"
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "howto.md").write_text("# How to\n\n## Steps\n\nDo the thing.\n")
    assert run("sources", "add", "folder", "handbook", "--path", str(folder), "--collection",
               "hr", db=db, **BASE_ENV).returncode == 0
    synced = run("sync", "handbook", "--json", db=db, **BASE_ENV)
    assert synced.returncode == 0, synced.stderr
    assert one_json(synced.stdout) == {"sources": [
        {"name": "handbook", "kind": "folder", "added": 1, "updated": 0, "deleted": 0,
         "unchanged": 0, "failed": 0, "error": None, "skipped": 0, "skips": []}]}
    [status] = one_json(run("sources", "--json", db=db, **BASE_ENV).stdout)["sources"]
    assert status["collection"] == "hr" and status["documents"] == 1
    assert status["last_success"] and status["last_error"] is None
    assert set(status) == {"name", "kind", "collection", "documents", "last_success",
                           "last_error", "next_run", "last_run", "last_started"}
    assert status["last_started"] <= status["last_run"]  # ended: no sync running now


def test_a_failing_page_makes_sync_exit_1_and_shows_in_sources(tmp_path: Path,
                                                               site: WebSite) -> None:
    db = tmp_path / "w.db"
    added = run("sources", "add", "web", "wiki", "--url", f"{site.url}/sitemap.xml", "--json",
                db=db, **BASE_ENV)
    assert one_json(added.stdout)["source"]["kind"] == "web"
    site.state.failures["/b.html"] = [(503, {})] * 3
    synced = run("sync", "--json", db=db, **BASE_ENV)
    assert synced.returncode == 1
    [outcome] = one_json(synced.stdout)["sources"]
    assert (outcome["added"], outcome["failed"]) == (1, 1)
    assert "b.html: HTTP 503 after 3 tries" in outcome["error"]
    assert "wiki" in synced.stderr and "503" in synced.stderr
    [status] = one_json(run("sources", "--json", db=db, **BASE_ENV).stdout)["sources"]
    assert "b.html" in status["last_error"] and status["documents"] == 1
    assert status["last_success"] is None


def test_an_unknown_source_and_a_duplicate_name_are_clear_errors(tmp_path: Path) -> None:
    db = tmp_path / "e.db"
    missing = run("sync", "nope", "--json", db=db, **BASE_ENV)
    assert missing.returncode == 2
    assert "no source named 'nope'" in one_json(missing.stdout)["error"]
    assert run("sources", "add", "web", "w", "--url", "http://127.0.0.1:9/", db=db,
               **BASE_ENV).returncode == 0
    again = run("sources", "add", "web", "w", "--url", "http://127.0.0.1:9/", "--json", db=db,
                **BASE_ENV)
    assert again.returncode == 2 and "exists already" in one_json(again.stdout)["error"]
    bad = run("sources", "add", "web", "Bad Name", "--url", "http://x/", db=db, **BASE_ENV)
    assert bad.returncode == 2 and "invalid source: name" in bad.stderr


def test_the_authorization_secret_is_sent_but_never_stored_or_printed(
        tmp_path: Path, site: WebSite) -> None:
    db = tmp_path / "s.db"
    env = {**BASE_ENV, "DOCS_TOKEN": SECRET}
    assert run("sources", "add", "web", "wiki", "--url", f"{site.url}/sitemap.xml",
               "--auth-env", "DOCS_TOKEN", db=db, **env).returncode == 0
    site.state.failures["/a.html"] = [(500, {})] * 3  # an error path prints and stores more
    synced = run("sync", "--json", db=db, **env)
    assert synced.returncode == 1
    assert all(h.get("Authorization") == SECRET for h in site.state.headers_seen)
    listed = run("sources", "--json", db=db, **env)
    for text in (synced.stdout, synced.stderr, listed.stdout, listed.stderr):
        assert "s3cr3t" not in text
    stored = b"".join(p.read_bytes() for p in tmp_path.glob("s.db*"))
    assert b"s3cr3t" not in stored and b"DOCS_TOKEN" in stored
    unset = run("sync", "--json", db=db, **BASE_ENV)
    assert unset.returncode == 1
    assert "environment variable DOCS_TOKEN is not set" in one_json(unset.stdout)["sources"][0][
        "error"]
