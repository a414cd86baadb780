"""Web sources against a loopback web site: incremental syncs, versions, deletions, failures,
robots.txt, leases, and no secret stored."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from docassist.core.sources import Source, SourceKind
from docassist.sources.sync import HOLDER, lease_name, sync_all
from docassist.storage import Bm25Retriever, Store
from docassist.storage.postgres import PostgresStore
from docassist_testkit.fakes.web_site import WebSite, page
from tests.conftest import STORES

EitherStore = Store | PostgresStore
"""Either store: these tests also reach into its own database."""

RESTART = page("Restart", ("Steps", "Run systemctl restart docassist-api and check health."))
BACKUP = page("Backup", ("Schedule", "Backups of the ledger run nightly at two."))
ROTATE = page("Rotate keys", ("Rotation", "Rotate the signing keys every quarter."))


@pytest.fixture
def site() -> Iterator[WebSite]:
    web = WebSite()
    web.state.pages.update({"/ops/restart.html": RESTART, "/ops/backup.html": BACKUP,
                            "/keys.html": ROTATE})
    yield web
    web.stop()


@pytest.fixture(params=STORES)
def web_store(request: pytest.FixtureRequest, tmp_path: Path, site: WebSite
              ) -> Iterator[EitherStore]:
    """An empty store of each kind with the web source configured."""
    store: EitherStore = (PostgresStore(request.getfixturevalue("pg_url"))
                       if request.param == "postgresql" else Store(tmp_path / "web.db"))
    store.add_source(Source(name="wiki", kind=SourceKind.WEB, collection="ops",
                            settings={"url": f"{site.url}/sitemap.xml"}))
    yield store
    store.close()


def chunk_count(store: EitherStore) -> int:
    """Every chunk ever stored (a superseded version's too), read beside the store."""
    if isinstance(store, PostgresStore):
        with psycopg.connect(store.url) as connection:
            row = connection.execute("SELECT count(*) FROM chunks").fetchone()
        return int(row[0]) if row else 0
    return int(store.db.execute("SELECT count(*) FROM chunks").fetchone()[0])


def test_first_sync_indexes_every_listed_page_with_ids_from_the_url_path(
        web_store: EitherStore, site: WebSite) -> None:
    [outcome] = sync_all(web_store)
    assert outcome.ok, outcome.errors
    assert sorted(outcome.added) == ["DOC-KEYS", "DOC-OPS_BACKUP", "DOC-OPS_RESTART"]
    document = web_store.document("DOC-OPS_RESTART")
    assert document is not None
    assert (document.source, document.collection) == ("wiki", "ops")
    assert document.url == f"{site.url}/ops/restart.html"
    assert document.indexed_at is not None
    hits = Bm25Retriever(web_store).search("restart docassist-api", 1)
    assert hits[0].chunk.document_id == "DOC-OPS_RESTART"
    [status] = web_store.source_statuses()
    assert status.documents == 3 and status.last_success and status.last_error is None


def test_an_unchanged_resync_costs_one_conditional_request_and_embeds_nothing(
        web_store: EitherStore, site: WebSite) -> None:
    sync_all(web_store)
    chunks = chunk_count(web_store)
    indexed_at = web_store.document("DOC-KEYS").indexed_at  # type: ignore[union-attr]
    site.state.headers_seen.clear()
    [outcome] = sync_all(web_store)
    assert outcome.counts() == {"added": 0, "updated": 0, "deleted": 0, "unchanged": 3,
                                "failed": 0}
    page_requests = [h for h in site.state.headers_seen if "If-None-Match" in h]
    assert len(page_requests) == 3  # every page asked conditionally, answered 304
    assert chunk_count(web_store) == chunks
    assert web_store.document("DOC-KEYS").indexed_at == indexed_at  # type: ignore[union-attr]


def test_a_byte_only_change_is_not_a_new_version(web_store: EitherStore, site: WebSite) -> None:
    sync_all(web_store)
    chunks = chunk_count(web_store)
    site.state.pages["/keys.html"] = page(
        "Rotate keys", ("Rotation", "Rotate the signing keys every quarter."),
        stamp="2026-11-30 17:00", links="<a href='/new-menu'>Menu</a>")
    [outcome] = sync_all(web_store)
    assert "DOC-KEYS" in outcome.unchanged and not outcome.updated
    assert chunk_count(web_store) == chunks


def test_an_edited_page_is_a_new_version_and_old_chunk_ids_still_resolve(
        web_store: EitherStore, site: WebSite) -> None:
    sync_all(web_store)
    [old] = [c for c in web_store.current_chunks() if c.document_id == "DOC-OPS_BACKUP"]
    site.state.pages["/ops/backup.html"] = page(
        "Backup", ("Schedule", "Backups of the ledger now run hourly."))
    [outcome] = sync_all(web_store)
    assert outcome.updated == ["DOC-OPS_BACKUP"]
    [new] = [c for c in web_store.current_chunks() if c.document_id == "DOC-OPS_BACKUP"]
    assert new.chunk_id != old.chunk_id
    resolved = web_store.chunk(old.chunk_id)
    assert resolved is not None and "nightly" in resolved.text
    assert web_store.is_superseded(old.chunk_id)
    hits = Bm25Retriever(web_store).search("ledger backups hourly", 1)
    assert hits[0].chunk.chunk_id == new.chunk_id


def test_a_deleted_page_leaves_search_and_the_catalog_in_that_sync(
        web_store: EitherStore, site: WebSite) -> None:
    sync_all(web_store)
    del site.state.pages["/keys.html"]
    [outcome] = sync_all(web_store)
    assert outcome.deleted == ["DOC-KEYS"] and outcome.ok
    assert web_store.document("DOC-KEYS") is None
    hits = Bm25Retriever(web_store).search("rotate signing keys quarter", 3)
    assert all(hit.chunk.document_id != "DOC-KEYS" for hit in hits)
    assert f"{site.url}/keys.html" not in web_store.web_items("wiki")


def test_a_page_answering_404_while_still_listed_leaves_the_catalog(
        web_store: EitherStore, site: WebSite) -> None:
    sync_all(web_store)
    site.state.failures["/keys.html"] = [(410, {})]
    [outcome] = sync_all(web_store)
    assert outcome.deleted == ["DOC-KEYS"]
    assert web_store.document("DOC-KEYS") is None


def test_429_and_5xx_mid_sync_keep_what_succeeded_and_say_what_did_not(
        web_store: EitherStore, site: WebSite) -> None:
    sync_all(web_store)
    site.state.pages["/ops/restart.html"] = page("Restart", ("Steps", "Restart twice now."))
    site.state.pages["/ops/backup.html"] = page("Backup", ("Schedule", "Backups weekly."))
    site.state.failures["/ops/restart.html"] = [(429, {"Retry-After": "0"})] * 3
    site.state.failures["/ops/backup.html"] = [(503, {})]  # recovers on the next try
    [outcome] = sync_all(web_store)
    assert outcome.failed == [f"{site.url}/ops/restart.html"]
    assert "HTTP 429 after 3 tries" in (outcome.error or "")
    assert outcome.updated == ["DOC-OPS_BACKUP"]
    kept = web_store.document("DOC-OPS_RESTART")
    assert kept is not None  # the failed page keeps its last version
    assert "systemctl" in Bm25Retriever(web_store).search("restart", 1)[0].chunk.text
    [status] = web_store.source_statuses()
    assert status.last_error and "restart.html" in status.last_error
    assert site.state.hits["/ops/restart.html"] == 1 + 3


def test_a_sitemap_that_fails_removes_nothing(web_store: EitherStore, site: WebSite) -> None:
    sync_all(web_store)
    site.state.failures["/sitemap.xml"] = [(500, {})] * 3
    [outcome] = sync_all(web_store)
    assert not outcome.ok and outcome.deleted == []
    assert len(web_store.documents()) == 3


def test_robots_txt_exclusions_are_respected(web_store: EitherStore, site: WebSite) -> None:
    site.state.robots = "User-agent: *\nDisallow: /ops/\n"
    [outcome] = sync_all(web_store)
    assert outcome.added == ["DOC-KEYS"]
    assert site.state.hits["/ops/restart.html"] == 0
    assert any("robots.txt" in note for note in outcome.notes)


def test_a_start_page_is_crawled_through_same_site_links(tmp_path: Path, site: WebSite) -> None:
    site.state.sitemap = False
    site.state.pages["/"] = page("Home", ("Index", "Operations handbook."),
                                 links="<a href='/ops/restart.html'>r</a>"
                                       "<a href='/notes.txt'>notes</a>"
                                       "<a href='/bundle.zip'>zip</a>"
                                       "<a href='https://example.org/x'>out</a>")
    site.state.files["/notes.txt"] = ("text/plain", b"On-call notes: page the lead.")
    site.state.files["/bundle.zip"] = ("application/zip", b"PK\x03\x04")
    store = Store(tmp_path / "crawl.db")
    store.add_source(Source(name="site", kind=SourceKind.WEB, settings={"url": site.url + "/"}))
    [outcome] = sync_all(store)
    assert outcome.ok, outcome.errors
    assert sorted(outcome.added) == ["DOC-INDEX", "DOC-NOTES", "DOC-OPS_RESTART"]
    assert site.state.hits["/keys.html"] == 0  # not linked
    assert any("bundle.zip: skipped: unsupported content type application/zip" in note
               for note in outcome.notes)
    store.close()


def test_one_sync_of_a_source_at_a_time_across_processes(web_store: EitherStore) -> None:
    assert web_store.claim_lease(lease_name("wiki"), "other-process:1", 60)
    [outcome] = sync_all(web_store)
    assert outcome.error == "a sync of this source is running in another process"
    assert web_store.documents() == []
    assert not web_store.claim_lease(lease_name("wiki"), HOLDER, 60)
    web_store.release_lease(lease_name("wiki"), "other-process:1")
    [outcome] = sync_all(web_store)
    assert outcome.ok and len(outcome.added) == 3


def test_an_expired_lease_is_taken_over(web_store: EitherStore) -> None:
    assert web_store.claim_lease(lease_name("wiki"), "dead-process:1", -1)
    [outcome] = sync_all(web_store)
    assert outcome.ok and len(outcome.added) == 3
