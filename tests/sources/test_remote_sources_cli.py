"""`docassist sources add confluence|sharepoint`, `sync` and `sources` as real processes
against the loopback Confluence and Graph: the JSON contract, exit codes, and no secret in
the output or the database. Also: only `chat` and `ask` index the demo corpus."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path

import pytest

from docassist_testkit.fakes.confluence_site import FakeConfluence, FakePage
from docassist_testkit.fakes.graph_site import CLIENT_SECRET, FakeGraph
from tests.cli_run import one_json, run

BASE_ENV = {"DOCASSIST_EMBEDDER": "none", "DOCASSIST_RETRIEVER": "bm25"}
TOKEN = "confluence-s3cr3t-api-token"
STATUS_KEYS = {"name", "kind", "collection", "documents", "last_success", "last_error",
               "next_run", "last_run", "last_started"}


@pytest.fixture
def confluence() -> Iterator[FakeConfluence]:
    site = FakeConfluence()
    site.add_space("OPS", {"7": FakePage("Restart", "<p>Restart the API service.</p>", 2)})
    site.add_space("HR", {"8": FakePage("Leave", "<p>Request leave in the portal.</p>")})
    site.state.authorization = "Basic " + base64.b64encode(
        f"bot@example.com:{TOKEN}".encode()).decode()
    yield site
    site.stop()


def test_a_confluence_source_is_added_synced_and_listed(tmp_path: Path,
                                                        confluence: FakeConfluence) -> None:
    db = tmp_path / "c.db"
    env = {**BASE_ENV, "DOCASSIST_CONFLUENCE_EMAIL": "bot@example.com",
           "DOCASSIST_CONFLUENCE_TOKEN": TOKEN}
    added = run("sources", "add", "confluence", "wiki", "--url", confluence.cloud_url,
                "--space", "OPS", "--space", "HR", "--deployment", "cloud", "--collection",
                "ops", "--json", db=db, **env)
    assert added.returncode == 0, added.stderr
    assert one_json(added.stdout)["source"]["settings"]["spaces"] == ["OPS", "HR"]
    synced = run("sync", "--json", db=db, **env)
    assert synced.returncode == 0, synced.stderr
    assert one_json(synced.stdout) == {"sources": [
        {"name": "wiki", "kind": "confluence", "added": 2, "updated": 0, "deleted": 0,
         "unchanged": 0, "failed": 0, "error": None, "skipped": 0, "skips": []}]}
    [status] = one_json(run("sources", "--json", db=db, **env).stdout)["sources"]
    assert set(status) == STATUS_KEYS
    assert (status["kind"], status["collection"], status["documents"]) == (
        "confluence", "ops", 2)
    confluence.state.authorization = "Basic revoked"
    failed = run("sync", "--json", db=db, **env)
    assert failed.returncode == 1
    [outcome] = one_json(failed.stdout)["sources"]
    assert "Confluence refused the credentials (HTTP 401)" in outcome["error"]
    assert "wiki" in failed.stderr and "401" in failed.stderr
    for text in (added.stdout, added.stderr, synced.stdout, synced.stderr, failed.stderr):
        assert TOKEN not in text
    stored = b"".join(path.read_bytes() for path in tmp_path.glob("c.db*"))
    assert TOKEN.encode() not in stored and b"bot@example.com" not in stored


def test_a_confluence_source_needs_a_space_and_a_valid_url(tmp_path: Path) -> None:
    db = tmp_path / "bad.db"
    no_space = run("sources", "add", "confluence", "wiki", "--url", "https://x.atlassian.net/"
                   "wiki", db=db, **BASE_ENV)
    assert no_space.returncode == 2 and "--space" in no_space.stderr
    bad_url = run("sources", "add", "confluence", "wiki", "--url", "x.atlassian.net",
                  "--space", "OPS", "--json", db=db, **BASE_ENV)
    assert bad_url.returncode == 2
    assert "invalid source: url" in one_json(bad_url.stdout)["error"]


def test_a_sharepoint_source_is_added_synced_and_listed(tmp_path: Path) -> None:
    graph = FakeGraph(tmp_path)
    try:
        graph.state.put("01GUIDE", "guide.md", b"# Guide\n\n## Steps\n\nOpen the portal.\n")
        db = tmp_path / "s.db"
        env = {**BASE_ENV, **graph.environment()}
        added = run("sources", "add", "sharepoint", "sp", "--site",
                    "https://contoso.sharepoint.com/sites/ops", "--drive", "Documents",
                    "--json", db=db, **env)
        assert added.returncode == 0, added.stderr
        synced = run("sync", "sp", "--json", db=db, **env)
        assert synced.returncode == 0, synced.stderr
        assert one_json(synced.stdout)["sources"] == [
            {"name": "sp", "kind": "sharepoint", "added": 1, "updated": 0, "deleted": 0,
             "unchanged": 0, "failed": 0, "error": None, "skipped": 0, "skips": []}]
        [status] = one_json(run("sources", "--json", db=db, **env).stdout)["sources"]
        assert set(status) == STATUS_KEYS and status["documents"] == 1
        graph.state.secret_expired = True
        graph.state.delete("01GUIDE")
        failed = run("sync", "--json", db=db, **env)
        assert failed.returncode == 1
        assert "refused the app's credentials" in one_json(failed.stdout)["sources"][0]["error"]
        docs = one_json(run("docs", "--json", db=db, **env).stdout)
        assert [d["document_id"] for d in docs] == ["DOC-SP-01GUIDE"]  # nothing deleted
        for text in (synced.stdout, synced.stderr, failed.stdout, failed.stderr):
            assert CLIENT_SECRET not in text and "graph-access-token" not in text
        stored = b"".join(path.read_bytes() for path in tmp_path.glob("s.db*"))
        assert CLIENT_SECRET.encode() not in stored and b"graph-access-token" not in stored
    finally:
        graph.stop()


def test_only_chat_and_ask_index_the_demo_corpus_on_first_start(tmp_path: Path) -> None:
    db = tmp_path / "fresh.db"
    listed = run("docs", "--json", db=db, **BASE_ENV)
    assert listed.returncode == 0 and one_json(listed.stdout) == []
    assert "indexing" not in listed.stderr
    asked = run("ask", "How do I restart docassist-api?", "--json", db=db, **BASE_ENV)
    assert asked.returncode == 0, asked.stderr
    assert len(one_json(run("docs", "--json", db=db, **BASE_ENV).stdout)) >= 5
