"""Confluence sources against a loopback Confluence (Cloud REST v2 and Data Center REST):
first sync, unchanged re-sync, edit, delete, move, throttling, an expired token, paging, and
no secret in logs or the database."""

from __future__ import annotations

import base64
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from docassist.core.sources import Source, SourceKind
from docassist.sources.confluence import EMAIL_ENV, TOKEN_ENV
from docassist.sources.sync import sync_all
from docassist.storage import Bm25Retriever, Store
from docassist_testkit.fakes.confluence_site import FakeConfluence, FakePage
from docassist_testkit.fakes.web_site import WebSite

EMAIL = "bot@example.com"
TOKEN = "confluence-s3cr3t-api-token"
RUNBOOK = b"# Runbook\n\n## Failover\n\nPromote the replica with pg_ctl promote.\n"


def restart(version: int = 1, text: str = "Run systemctl restart docassist-api.") -> FakePage:
    return FakePage("Restart API", f"<h2>Steps</h2><p>{text}</p>"
                    "<ac:structured-macro ac:name='info'><ac:rich-text-body><p>Check health "
                    "afterwards.</p></ac:rich-text-body></ac:structured-macro>", version)


@pytest.fixture
def confluence(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeConfluence]:
    site = FakeConfluence()
    site.add_space("OPS", {
        "1001": restart(3),
        "1002": FakePage("Backups", "<h2>Schedule</h2><p>Ledger backups run nightly.</p>",
                         attachments={"att5001": ("runbook.md", RUNBOOK, 2),
                                      "att5002": ("diagram.png", b"\x89PNG", 1)}),
        "1003": FakePage("Keys", "<h2>Rotation</h2><p>Rotate signing keys quarterly.</p>")})
    site.add_space("HR", {"2001": FakePage("Leave", "<p>Request leave in the portal.</p>")})
    site.add_space("ARCHIVE", {})
    site.state.authorization = "Basic " + base64.b64encode(f"{EMAIL}:{TOKEN}".encode()).decode()
    monkeypatch.setenv(EMAIL_ENV, EMAIL)
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    yield site
    site.stop()


@pytest.fixture
def wiki(tmp_path: Path, confluence: FakeConfluence) -> Iterator[Store]:
    store = Store(tmp_path / "wiki.db")
    store.add_source(Source(name="wiki", kind=SourceKind.CONFLUENCE, collection="ops",
                            settings={"url": confluence.cloud_url, "spaces": ["OPS", "HR"],
                                      "deployment": "cloud"}))
    yield store
    store.close()


def chunk_count(store: Store) -> int:
    return int(store.db.execute("SELECT count(*) FROM chunks").fetchone()[0])


def test_first_sync_indexes_pages_and_readable_attachments_of_every_space(
        wiki: Store, confluence: FakeConfluence) -> None:
    [outcome] = sync_all(wiki)
    assert outcome.ok, outcome.errors
    assert sorted(outcome.added) == ["DOC-WIKI-1001", "DOC-WIKI-1002", "DOC-WIKI-1003",
                                     "DOC-WIKI-2001", "DOC-WIKI-ATT5001"]
    page = wiki.document("DOC-WIKI-1001")
    assert page is not None
    assert (page.version, page.title, page.source, page.collection) == (
        "3", "Restart API", "wiki", "ops")
    assert page.url == f"{confluence.cloud_url}/spaces/OPS/pages/1001/Restart+API"
    hits = Bm25Retriever(wiki).search("check health after restart docassist-api", 1)
    assert hits[0].chunk.document_id == "DOC-WIKI-1001"
    assert "version=3" in hits[0].chunk.header
    attachment = wiki.document("DOC-WIKI-ATT5001")
    assert attachment is not None and attachment.version == "2"
    paths = confluence.state.paths()
    assert any("cursor=2" in path for path in paths)  # three OPS pages, two per listing
    assert not any("diagram.png" in path for path in paths)  # a format we do not read
    assert all("body-format=storage" in path for path in paths if path.endswith("pages")
               or "/pages?" in path)


def test_an_unchanged_resync_lists_but_downloads_parses_and_embeds_nothing(
        wiki: Store, confluence: FakeConfluence) -> None:
    sync_all(wiki)
    chunks = chunk_count(wiki)
    indexed_at = wiki.document("DOC-WIKI-1002").indexed_at  # type: ignore[union-attr]
    confluence.state.requests.clear()
    [outcome] = sync_all(wiki)
    assert outcome.counts() == {"added": 0, "updated": 0, "deleted": 0, "unchanged": 5,
                                "failed": 0}
    assert chunk_count(wiki) == chunks
    assert wiki.document("DOC-WIKI-1002").indexed_at == indexed_at  # type: ignore[union-attr]
    assert not any("/download/" in path for path in confluence.state.paths())
    # per space: its id, its pages (3 OPS pages need two listings), one attachment search
    assert len(confluence.state.paths()) == 2 + 3 + 2


def test_an_attachment_added_without_a_page_edit_is_found(
        wiki: Store, confluence: FakeConfluence) -> None:
    sync_all(wiki)
    confluence.state.spaces["HR"]["2001"].attachments["att6001"] = (
        "policy.md", b"# Policy\n\n## Leave\n\nTwenty-six days a year.\n", 1)
    [outcome] = sync_all(wiki)
    assert outcome.added == ["DOC-WIKI-ATT6001"] and len(outcome.unchanged) == 5


def test_an_edited_page_is_a_new_version_numbered_by_confluence(
        wiki: Store, confluence: FakeConfluence) -> None:
    sync_all(wiki)
    [old] = [c for c in wiki.current_chunks() if c.document_id == "DOC-WIKI-1001"][:1]
    confluence.state.spaces["OPS"]["1001"] = restart(4, "Run systemctl reload docassist-api.")
    [outcome] = sync_all(wiki)
    assert outcome.updated == ["DOC-WIKI-1001"] and outcome.ok
    assert wiki.document("DOC-WIKI-1001").version == "4"  # type: ignore[union-attr]
    assert wiki.is_superseded(old.chunk_id) and wiki.chunk(old.chunk_id) is not None
    hits = Bm25Retriever(wiki).search("systemctl reload docassist-api", 1)
    assert hits[0].chunk.document_id == "DOC-WIKI-1001" and "reload" in hits[0].chunk.text


def test_a_deleted_page_leaves_with_its_attachments(
        wiki: Store, confluence: FakeConfluence) -> None:
    sync_all(wiki)
    del confluence.state.spaces["OPS"]["1002"]
    [outcome] = sync_all(wiki)
    assert sorted(outcome.deleted) == ["DOC-WIKI-1002", "DOC-WIKI-ATT5001"]
    assert wiki.document("DOC-WIKI-1002") is None
    assert all(hit.chunk.document_id != "DOC-WIKI-ATT5001"
               for hit in Bm25Retriever(wiki).search("promote the replica", 3))


def test_a_page_moved_between_spaces_keeps_its_id_and_one_moved_out_leaves(
        wiki: Store, confluence: FakeConfluence) -> None:
    sync_all(wiki)
    confluence.state.spaces["HR"]["1003"] = confluence.state.spaces["OPS"].pop("1003")
    confluence.state.spaces["ARCHIVE"]["2001"] = confluence.state.spaces["HR"].pop("2001")
    [outcome] = sync_all(wiki)
    assert outcome.updated == ["DOC-WIKI-1003"] and outcome.deleted == ["DOC-WIKI-2001"]
    moved = wiki.document("DOC-WIKI-1003")
    assert moved is not None and "/spaces/HR/pages/1003/" in (moved.url or "")
    assert moved.version == "1"  # Confluence's number; the URL made it a new version


def test_throttling_is_waited_out_and_a_page_that_stays_throttled_fails_alone(
        wiki: Store, confluence: FakeConfluence) -> None:
    sync_all(wiki)
    confluence.state.spaces["OPS"]["1001"] = restart(5, "Restart twice now.")
    confluence.state.spaces["OPS"]["1003"].version = 2
    confluence.state.spaces["OPS"]["1003"].body = "<p>Rotate keys monthly.</p>"
    confluence.state.failures["/wiki/api/v2/spaces"] = [(429, {"Retry-After": "0"})]
    confluence.state.failures["/wiki/rest/api/content/search"] = [
        (429, {"Retry-After": "0"})] * 3
    [outcome] = sync_all(wiki)
    assert sorted(outcome.updated) == ["DOC-WIKI-1001", "DOC-WIKI-1003"]
    assert outcome.failed == ["space OPS (attachments)"]
    assert "HTTP 429 after 3 tries" in (outcome.error or "")
    assert outcome.deleted == [] and wiki.document("DOC-WIKI-ATT5001") is not None
    [status] = wiki.source_statuses()
    assert status.last_error and "429" in status.last_error and status.documents == 5


def test_an_expired_token_is_a_clear_error_and_nothing_is_deleted(
        wiki: Store, confluence: FakeConfluence, caplog: pytest.LogCaptureFixture) -> None:
    sync_all(wiki)
    confluence.state.authorization = "Basic rotated"
    with caplog.at_level(logging.DEBUG):
        [outcome] = sync_all(wiki)
    assert not outcome.ok and outcome.deleted == []
    assert "Confluence refused the credentials (HTTP 401)" in (outcome.error or "")
    assert len(wiki.documents()) == 5
    [status] = wiki.source_statuses()
    assert status.last_error == outcome.error and status.last_success is not None
    assert TOKEN not in caplog.text and EMAIL not in caplog.text
    stored = b"".join(path.read_bytes() for path in Path(wiki.path).parent.glob("wiki.db*"))
    assert TOKEN.encode() not in stored and EMAIL.encode() not in stored


def test_a_missing_space_removes_nothing(wiki: Store, confluence: FakeConfluence) -> None:
    sync_all(wiki)
    del confluence.state.spaces["HR"]
    [outcome] = sync_all(wiki)
    assert outcome.error == "space HR: space HR not found or not visible"
    assert outcome.deleted == [] and wiki.document("DOC-WIKI-2001") is not None


def test_data_center_pages_by_start_with_a_personal_access_token(
        tmp_path: Path, confluence: FakeConfluence, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(EMAIL_ENV)
    confluence.state.authorization = f"Bearer {TOKEN}"
    store = Store(tmp_path / "dc.db")
    store.add_source(Source(name="dc", kind=SourceKind.CONFLUENCE,
                            settings={"url": confluence.datacenter_url, "spaces": ["OPS"]}))
    [outcome] = sync_all(store)
    assert outcome.ok, outcome.errors
    assert sorted(outcome.added) == ["DOC-DC-1001", "DOC-DC-1002", "DOC-DC-1003",
                                     "DOC-DC-ATT5001"]
    assert store.document("DOC-DC-1001").url == (  # type: ignore[union-attr]
        f"{confluence.datacenter_url}/display/OPS/Restart+API")
    assert any("start=2" in path and "expand=body.storage" in path
               for path in confluence.state.paths())
    confluence.state.spaces["OPS"]["1002"].version = 2
    confluence.state.spaces["OPS"]["1002"].body = "<p>Backups run hourly.</p>"
    [outcome] = sync_all(store)
    assert outcome.updated == ["DOC-DC-1002"] and len(outcome.unchanged) == 3
    store.close()


def test_missing_credentials_name_the_variable(wiki: Store,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(TOKEN_ENV)
    [outcome] = sync_all(wiki)
    assert outcome.error == f"environment variable {TOKEN_ENV} is not set"


def test_a_next_link_to_another_host_is_not_followed_and_nothing_is_removed(
        wiki: Store, confluence: FakeConfluence) -> None:
    """Issue 39: an absolute `_links.next` elsewhere would carry the token there."""
    [first] = sync_all(wiki)
    assert first.ok, first.errors
    held = sorted(d.document_id for d in wiki.documents())
    other = WebSite()
    try:
        confluence.state.link_host = other.url
        [outcome] = sync_all(wiki)
        assert not outcome.ok and "gave a link off" in (outcome.error or "")
        assert sum(other.state.hits.values()) == 0
        assert sorted(d.document_id for d in wiki.documents()) == held
        assert outcome.deleted == []
    finally:
        other.stop()
