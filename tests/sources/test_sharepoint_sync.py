"""SharePoint sources against loopback fakes of Entra ID (TLS, test CA, OIDC discovery) and
Microsoft Graph (driveItem delta): first sync, unchanged re-sync, edit, delete, move,
throttling, expired credentials, an expired delta link, and no secret stored or logged."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from docassist.core.sources import Source, SourceKind
from docassist.sources.sync import sync_all
from docassist.storage import Bm25Retriever, Store
from docassist_testkit.fakes.graph_site import (
    CLIENT_SECRET,
    DRIVE_ID,
    SITE_REF,
    TENANT,
    WEB,
    FakeGraph,
)
from docassist_testkit.fakes.web_site import WebSite

RESTART = b"# Restart\n\n## Steps\n\nRun systemctl restart docassist-api and check health.\n"
BACKUP = b"# Backup\n\n## Schedule\n\nLedger backups run nightly at two.\n"
KEYS = b"<html><body><h1>Keys</h1><h2>Rotation</h2><p>Rotate signing keys quarterly.</p>" \
       b"</body></html>"


@pytest.fixture
def graph(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGraph]:
    fake = FakeGraph(tmp_path)
    fake.state.put("01FOLDER", "Runbooks")
    fake.state.put("01RESTART", "restart.md", RESTART, parent="01FOLDER")
    fake.state.put("01BACKUP", "backup.txt", BACKUP)
    fake.state.put("01KEYS", "keys.html", KEYS, parent="01FOLDER")
    fake.state.put("01IMAGE", "diagram.png", b"\x89PNG")
    for name, value in fake.environment().items():
        monkeypatch.setenv(name, value)
    yield fake
    fake.stop()


@pytest.fixture
def library(tmp_path: Path, graph: FakeGraph) -> Iterator[Store]:
    store = Store(tmp_path / "sp.db")
    store.add_source(Source(name="sp", kind=SourceKind.SHAREPOINT, collection="ops",
                            settings={"site": "https://contoso.sharepoint.com/sites/ops"}))
    yield store
    store.close()


def chunk_count(store: Store) -> int:
    return int(store.db.execute("SELECT count(*) FROM chunks").fetchone()[0])


def downloads(graph: FakeGraph) -> list[str]:
    return [path for path in graph.state.graph_paths() if path.startswith("/download/")]


def test_first_sync_enumerates_the_drive_by_delta_with_an_msal_token_over_tls(
        library: Store, graph: FakeGraph) -> None:
    [outcome] = sync_all(library)
    assert outcome.ok, outcome.errors
    assert sorted(outcome.added) == ["DOC-SP-01BACKUP", "DOC-SP-01KEYS", "DOC-SP-01RESTART"]
    restart = library.document("DOC-SP-01RESTART")
    assert restart is not None and (restart.source, restart.collection) == ("sp", "ops")
    assert restart.url == f"{WEB}/Runbooks/restart.md"
    assert Bm25Retriever(library).search("restart docassist-api", 1)[0].chunk.document_id == (
        "DOC-SP-01RESTART")
    login = [path for server, path, _ in graph.state.requests if server == "login"]
    assert login == [f"/{TENANT}/v2.0/.well-known/openid-configuration",
                     f"/{TENANT}/oauth2/v2.0/token"]  # one token for the whole sync
    assert graph.state.token_forms[0]["grant_type"] == "client_credentials"
    assert graph.state.token_forms[0]["scope"] == "https://graph.microsoft.com/.default"
    paths = graph.state.graph_paths()
    assert paths[0].startswith(f"/v1.0/sites/{SITE_REF}")
    assert any("root/delta?page=2" in path for path in paths)  # followed @odata.nextLink
    assert not any("01IMAGE" in path for path in downloads(graph))
    assert all("Authorization" not in headers for server, path, headers in graph.state.requests
               if path.startswith("/download/"))  # the token stays with Graph
    state = library.source_sync_state("sp")
    assert state["drive_id"] == DRIVE_ID and "root/delta?token=" in state["delta_link"]


def test_an_unchanged_resync_asks_the_delta_link_and_downloads_nothing(
        library: Store, graph: FakeGraph) -> None:
    sync_all(library)
    chunks = chunk_count(library)
    link = library.source_sync_state("sp")["delta_link"]
    graph.state.requests.clear()
    [outcome] = sync_all(library)
    assert outcome.ok and outcome.counts() == {"added": 0, "updated": 0, "deleted": 0,
                                               "unchanged": 0, "failed": 0}
    assert link.removeprefix(graph.graph.base_url) in graph.state.graph_paths()
    assert downloads(graph) == [] and chunk_count(library) == chunks


def test_an_edited_file_is_a_new_version_and_only_it_is_downloaded(
        library: Store, graph: FakeGraph) -> None:
    sync_all(library)
    [old] = [c for c in library.current_chunks() if c.document_id == "DOC-SP-01BACKUP"]
    graph.state.put("01BACKUP", "backup.txt", BACKUP.replace(b"nightly at two", b"hourly"))
    graph.state.requests.clear()
    [outcome] = sync_all(library)
    assert outcome.updated == ["DOC-SP-01BACKUP"] and outcome.ok
    assert [path.split("?")[0] for path in downloads(graph)] == ["/download/01BACKUP"]
    assert library.is_superseded(old.chunk_id) and library.chunk(old.chunk_id) is not None
    assert "hourly" in Bm25Retriever(library).search("ledger backups", 1)[0].chunk.text


def test_a_deleted_file_leaves_and_a_moved_one_keeps_its_id(
        library: Store, graph: FakeGraph) -> None:
    sync_all(library)
    graph.state.delete("01KEYS")
    graph.state.put("01RESTART", "restart-api.md", RESTART)  # renamed and moved to the root
    [outcome] = sync_all(library)
    assert outcome.deleted == ["DOC-SP-01KEYS"] and outcome.updated == ["DOC-SP-01RESTART"]
    assert library.document("DOC-SP-01KEYS") is None
    moved = library.document("DOC-SP-01RESTART")
    assert moved is not None and moved.url == f"{WEB}/restart-api.md"


def test_throttling_is_waited_out_and_a_failed_download_holds_the_delta_link(
        library: Store, graph: FakeGraph) -> None:
    sync_all(library)
    link = library.source_sync_state("sp")["delta_link"]
    graph.state.put("01BACKUP", "backup.txt", BACKUP + b"\nAlso weekly.\n")
    graph.state.put("01RESTART", "restart.md", RESTART + b"\nTwice.\n", parent="01FOLDER")
    graph.state.failures[f"/v1.0/drives/{DRIVE_ID}/root/delta"] = [(429, {"Retry-After": "0"})]
    graph.state.failures["/download/01BACKUP"] = [(429, {"Retry-After": "0"})] * 3
    [outcome] = sync_all(library)
    assert outcome.updated == ["DOC-SP-01RESTART"]
    assert outcome.failed == [f"{WEB}/backup.txt"]
    assert "HTTP 429 after 3 tries" in (outcome.error or "")
    assert library.source_sync_state("sp")["delta_link"] == link  # not moved past a failure
    [outcome] = sync_all(library)
    assert outcome.ok and outcome.updated == ["DOC-SP-01BACKUP"]
    assert outcome.unchanged == ["DOC-SP-01RESTART"]


def test_an_expired_client_secret_is_a_clear_error_and_nothing_is_deleted(
        library: Store, graph: FakeGraph, caplog: pytest.LogCaptureFixture) -> None:
    sync_all(library)
    graph.state.secret_expired = True
    graph.state.delete("01KEYS")
    with caplog.at_level(logging.DEBUG):
        [outcome] = sync_all(library)
    assert outcome.error is not None and outcome.error.startswith(
        "Microsoft Entra ID refused the app's credentials (invalid_client: AADSTS7000222")
    assert outcome.deleted == [] and len(library.documents()) == 3
    [status] = library.source_statuses()
    assert status.last_error == outcome.error
    assert CLIENT_SECRET not in caplog.text and "graph-access-token" not in caplog.text
    stored = b"".join(path.read_bytes() for path in Path(library.path).parent.glob("sp.db*"))
    assert CLIENT_SECRET.encode() not in stored and b"graph-access-token" not in stored


def test_a_revoked_token_at_graph_is_a_clear_error_and_nothing_is_deleted(
        library: Store, graph: FakeGraph) -> None:
    sync_all(library)
    graph.state.revoked = True
    [outcome] = sync_all(library)
    assert "Microsoft Graph refused the credentials (HTTP 401)" in (outcome.error or "")
    assert len(library.documents()) == 3


def test_an_expired_delta_link_enumerates_again_and_drops_what_is_gone(
        library: Store, graph: FakeGraph) -> None:
    sync_all(library)
    graph.state.expired_delta = True
    graph.state.delete("01BACKUP")  # a full enumeration shows no tombstone: just absent
    [outcome] = sync_all(library)
    assert outcome.ok, outcome.errors
    assert outcome.deleted == ["DOC-SP-01BACKUP"]
    assert sorted(outcome.unchanged) == ["DOC-SP-01KEYS", "DOC-SP-01RESTART"]
    assert "delta link expired; enumerated the drive again" in outcome.notes


def test_a_named_library_is_found_among_the_site_drives(
        tmp_path: Path, graph: FakeGraph) -> None:
    store = Store(tmp_path / "named.db")
    store.add_source(Source(name="docs", kind=SourceKind.SHAREPOINT,
                            settings={"site": SITE_REF, "drive": "Documents"}))
    [outcome] = sync_all(store)
    assert outcome.ok and len(outcome.added) == 3
    store.add_source(Source(name="nope", kind=SourceKind.SHAREPOINT,
                            settings={"site": SITE_REF, "drive": "Missing"}))
    [failed] = sync_all(store, "nope")
    assert failed.error == f"{SITE_REF}: no document library 'Missing' on site {SITE_REF}"
    store.close()


def test_missing_graph_credentials_name_the_variables(
        library: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DOCASSIST_GRAPH_CLIENT_SECRET")
    monkeypatch.delenv("DOCASSIST_TEAMS_APP_PASSWORD", raising=False)
    [outcome] = sync_all(library)
    assert outcome.error == ("Microsoft Graph credentials incomplete: "
                             "DOCASSIST_GRAPH_CLIENT_SECRET (or the DOCASSIST_TEAMS_* ones)")


def test_an_unreachable_token_service_is_a_clear_error_and_removes_nothing(
        library: Store, graph: FakeGraph) -> None:
    sync_all(library)
    graph.state.delete("01KEYS")
    graph.login.stop()
    [outcome] = sync_all(library)
    assert outcome.error is not None and outcome.error.startswith(
        f"Microsoft Entra ID ({graph.authority_host}/{TENANT}) could not be reached")
    assert len(library.documents()) == 3


def test_a_next_link_off_graph_is_not_followed_and_the_token_stays_with_graph(
        library: Store, graph: FakeGraph) -> None:
    """Issue 39: `@odata.nextLink` on another host would have been sent the bearer token."""
    other = WebSite()
    try:
        graph.state.link_base = other.url
        [outcome] = sync_all(library)
        assert not outcome.ok and "gave a link off" in (outcome.error or "")
        assert sum(other.state.hits.values()) == 0
        assert library.documents() == [] and outcome.deleted == []
    finally:
        other.stop()
