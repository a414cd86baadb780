"""A web source stays inside its walls (issue 39): its origin, an upgrade to https, and the
hosts the operator allowed; every redirect hop and sitemap child checked again; addresses
checked as resolved when connecting; credentials to the origin only; a redirect loop cut
short. Another loopback port stands in for another host."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from docassist.core.errors import ConfigurationError
from docassist.core.sources import Source, SourceKind, WebSettings
from docassist.sources.sync import sync_all
from docassist.sources.walls import MAX_REDIRECTS, OffLimits, Space, Walls, parse_ip, space_of
from docassist.sources.web import WebFetcher
from docassist.storage import Store
from docassist_testkit.fakes.web_site import WebSite, page

SECRET = "Bearer wall-secret-0451"
GOOD = page("Restart", ("Steps", "Run systemctl restart docassist-api and check health."))
PLANTED = page("Metadata", ("Keys", "AWS_SECRET_ACCESS_KEY=planted-key-do-not-quote"))


@pytest.fixture
def origin() -> Iterator[WebSite]:
    site = WebSite()
    site.state.pages["/restart.html"] = GOOD
    yield site
    site.stop()


@pytest.fixture
def elsewhere() -> Iterator[WebSite]:
    """Another host, as far as the walls can tell (another port)."""
    site = WebSite()
    site.state.pages["/latest/meta-data.html"] = PLANTED
    yield site
    site.stop()


def _store(tmp_path: Path, **settings: str | list[str]) -> Store:
    store = Store(tmp_path / "walls.db")
    store.add_source(Source(name="wiki", kind=SourceKind.WEB, settings=settings))
    return store


def _authorization_headers(site: WebSite) -> list[str]:
    return [h["Authorization"] for h in site.state.headers_seen if "Authorization" in h]


def _sitemap(*urls: str) -> bytes:
    entries = "".join(f"<url><loc>{url}</loc></url>" for url in urls)
    return ('<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            f"{entries}</urlset>").encode()


def test_a_sitemap_pointing_off_the_origin_syncs_only_the_origin_and_names_each_skip(
        tmp_path: Path, origin: WebSite, elsewhere: WebSite,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WIKI_TOKEN", SECRET)
    port = elsewhere.url.rsplit(":", 1)[1]
    hostile = [f"{elsewhere.url}/latest/meta-data.html",
               "http://169.254.169.254/latest/meta-data/",
               f"http://localhost:{port}/latest/meta-data.html",
               f"http://2130706433:{port}/latest/meta-data.html",
               f"http://[::ffff:127.0.0.1]:{port}/latest/meta-data.html"]
    origin.state.sitemap_xml = _sitemap(f"{origin.url}/restart.html", *hostile)
    store = _store(tmp_path, url=f"{origin.url}/sitemap.xml", auth_env="WIKI_TOKEN")
    [outcome] = sync_all(store)
    assert outcome.ok, outcome.errors
    assert outcome.added == ["DOC-RESTART"]
    assert [item for item, _reason in outcome.skipped] == hostile
    assert all("off the source's origin" in reason for _item, reason in outcome.skipped)
    assert outcome.as_json()["skipped"] == len(hostile)
    assert sum(elsewhere.state.hits.values()) == 0
    assert set(_authorization_headers(origin)) == {SECRET}
    assert [d.document_id for d in store.documents()] == ["DOC-RESTART"]
    store.close()


def test_a_redirect_off_the_origin_is_not_followed_and_a_resync_drops_a_planted_page(
        tmp_path: Path, origin: WebSite, elsewhere: WebSite,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WIKI_TOKEN", SECRET)
    origin.state.pages["/meta.html"] = PLANTED  # indexed while it was still served here
    store = _store(tmp_path, url=f"{origin.url}/sitemap.xml", auth_env="WIKI_TOKEN")
    [first] = sync_all(store)
    assert sorted(first.added) == ["DOC-META", "DOC-RESTART"]
    del origin.state.pages["/meta.html"]
    origin.state.sitemap_xml = _sitemap(f"{origin.url}/restart.html", f"{origin.url}/meta.html")
    origin.state.redirects["/meta.html"] = f"{elsewhere.url}/latest/meta-data.html"
    [outcome] = sync_all(store)
    assert [item for item, _ in outcome.skipped] == [f"{origin.url}/meta.html"]
    assert outcome.deleted == ["DOC-META"]
    assert sum(elsewhere.state.hits.values()) == 0
    assert store.document("DOC-META") is None
    store.close()


def test_an_allowed_host_is_followed_without_the_credentials(
        tmp_path: Path, origin: WebSite, elsewhere: WebSite,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WIKI_TOKEN", SECRET)
    elsewhere.state.pages["/moved.html"] = page("Moved", ("Steps", "Rotate keys quarterly."))
    origin.state.redirects["/old.html"] = f"{elsewhere.url}/moved.html"
    origin.state.sitemap_xml = _sitemap(f"{origin.url}/restart.html", f"{origin.url}/old.html")
    allowed = elsewhere.url.split("://", 1)[1]
    store = _store(tmp_path, url=f"{origin.url}/sitemap.xml", auth_env="WIKI_TOKEN",
                   allow_hosts=[allowed])
    [outcome] = sync_all(store)
    assert outcome.ok and not outcome.skipped, outcome.errors
    assert sorted(outcome.added) == ["DOC-OLD", "DOC-RESTART"]
    assert elsewhere.state.hits["/moved.html"] == 1
    assert _authorization_headers(elsewhere) == []
    assert set(_authorization_headers(origin)) == {SECRET}
    store.close()


def test_a_redirect_loop_costs_a_few_requests_and_fails_that_page_only(
        tmp_path: Path, origin: WebSite) -> None:
    origin.state.redirects.update({"/a.html": "/b.html", "/b.html": "/a.html"})
    origin.state.sitemap_xml = _sitemap(f"{origin.url}/restart.html", f"{origin.url}/a.html")
    store = _store(tmp_path, url=f"{origin.url}/sitemap.xml")
    [outcome] = sync_all(store)
    assert outcome.failed == [f"{origin.url}/a.html"]
    assert "redirect loop" in (outcome.error or "")
    assert origin.state.hits["/a.html"] + origin.state.hits["/b.html"] == 2
    assert outcome.added == ["DOC-RESTART"]
    store.close()


def test_a_long_redirect_chain_stops_after_the_limit(tmp_path: Path, origin: WebSite) -> None:
    for hop in range(10):
        origin.state.redirects[f"/r{hop}.html"] = f"/r{hop + 1}.html"
    origin.state.sitemap_xml = _sitemap(f"{origin.url}/r0.html")
    store = _store(tmp_path, url=f"{origin.url}/sitemap.xml")
    [outcome] = sync_all(store)
    assert f"more than {MAX_REDIRECTS} redirects" in (outcome.error or "")
    assert sum(origin.state.hits[f"/r{hop}.html"] for hop in range(10)) == MAX_REDIRECTS + 1
    store.close()


def test_sitemap_index_children_off_the_origin_are_skipped_unfetched(
        tmp_path: Path, origin: WebSite, elsewhere: WebSite) -> None:
    elsewhere.state.sitemap_xml = _sitemap(f"{elsewhere.url}/latest/meta-data.html")
    ns = "http://www.sitemaps.org/schemas/sitemap/0.9"
    origin.state.files["/pages.xml"] = ("application/xml",
                                        _sitemap(f"{origin.url}/restart.html"))
    origin.state.sitemap_xml = (
        f'<?xml version="1.0"?><sitemapindex xmlns="{ns}">'
        f"<sitemap><loc>{origin.url}/pages.xml</loc></sitemap>"
        f"<sitemap><loc>{elsewhere.url}/sitemap.xml</loc></sitemap></sitemapindex>").encode()
    store = _store(tmp_path, url=f"{origin.url}/sitemap.xml")
    [outcome] = sync_all(store)
    assert outcome.added == ["DOC-RESTART"]
    assert [item for item, _ in outcome.skipped] == [f"{elsewhere.url}/sitemap.xml"]
    assert sum(elsewhere.state.hits.values()) == 0
    store.close()


def test_a_sitemap_with_entities_is_refused_without_expanding_them(
        tmp_path: Path, origin: WebSite) -> None:
    laughs = "".join(f'<!ENTITY l{i} "&l{i - 1};&l{i - 1};&l{i - 1};&l{i - 1};">'
                     for i in range(1, 12))
    origin.state.sitemap_xml = (
        f'<?xml version="1.0"?><!DOCTYPE urlset [<!ENTITY l0 "ha">{laughs}]>'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"<url><loc>{origin.url}/restart.html&l11;</loc></url></urlset>").encode()
    store = _store(tmp_path, url=f"{origin.url}/sitemap.xml")
    [outcome] = sync_all(store)
    assert not outcome.ok and "not plain XML" in (outcome.error or "")
    assert store.documents() == []
    store.close()


def test_a_crawl_follows_only_links_inside_the_walls(
        tmp_path: Path, origin: WebSite, elsewhere: WebSite) -> None:
    origin.state.sitemap = False
    origin.state.pages["/"] = page("Home", ("Index", "Handbook."), links=(
        "<a href='/restart.html'>r</a>"
        f"<a href='{elsewhere.url}/latest/meta-data.html'>other host</a>"
        "<a href='http://169.254.169.254/latest/'>metadata</a>"))
    store = _store(tmp_path, url=f"{origin.url}/")
    [outcome] = sync_all(store)
    assert sorted(outcome.added) == ["DOC-INDEX", "DOC-RESTART"]
    assert sum(elsewhere.state.hits.values()) == 0
    store.close()


def _resolver(table: dict[str, list[str]]) -> object:
    def resolve(host: str, port: int) -> list[str]:
        return table[host]
    return resolve


def test_a_name_is_judged_by_the_addresses_it_resolves_to_when_connecting(
        origin: WebSite, elsewhere: WebSite) -> None:
    """The origin by name (resolving to loopback) works; an allowed host whose name resolves
    to a private network is refused at connect time: the origin is loopback, not 10.x."""
    port = origin.url.rsplit(":", 1)[1]
    other_port = elsewhere.url.rsplit(":", 1)[1]
    resolve = _resolver({"docs.test": ["127.0.0.1"], "files.test": ["10.20.30.40"],
                         "meta.test": ["169.254.169.254"]})
    settings = WebSettings(url=f"http://docs.test:{port}/sitemap.xml",
                           allow_hosts=[f"files.test:{other_port}", f"meta.test:{other_port}"])
    fetcher = WebFetcher(settings, resolve=resolve)  # type: ignore[arg-type]
    try:
        assert fetcher.get(f"http://docs.test:{port}/restart.html").status == 200
        for host in ("files.test", "meta.test"):
            with pytest.raises(OffLimits, match="where this source may not fetch"):
                fetcher.get(f"http://{host}:{other_port}/latest/meta-data.html")
    finally:
        fetcher.close()
    assert sum(elsewhere.state.hits.values()) == 0


def test_address_spaces_and_spellings() -> None:
    for spelling in ("2130706433", "0x7f000001", "0177.0.0.1", "127.1", "::ffff:127.0.0.1",
                     "[::ffff:7f00:1]"):
        assert str(parse_ip(spelling)) == "127.0.0.1", spelling
    spaces = {"127.0.0.1": Space.LOOPBACK, "::1": Space.LOOPBACK, "10.1.2.3": Space.PRIVATE,
              "192.168.0.7": Space.PRIVATE, "fd12::1": Space.PRIVATE,
              "169.254.169.254": Space.FORBIDDEN, "fe80::1": Space.FORBIDDEN,
              "fd00:ec2::254": Space.FORBIDDEN, "0.0.0.0": Space.FORBIDDEN,
              "93.184.216.34": Space.PUBLIC}
    for text, space in spaces.items():
        address = parse_ip(text)
        assert address is not None and space_of(address) is space, text


def test_a_public_origin_never_reaches_loopback_or_private_space_by_name() -> None:
    """DNS rebinding: a public site's own name (or an allowed one) that resolves to
    loopback or 10.x is refused; an intranet source on 10.x reaches 10.x but not loopback."""
    resolve = _resolver({"docs.example.com": ["93.184.216.34"], "rebind.example.com":
                         ["127.0.0.1"], "wiki.corp": ["10.0.0.5"], "db.corp": ["10.0.0.9"]})
    public = Walls.for_source("https://docs.example.com/", ["rebind.example.com"],
                              resolve)  # type: ignore[arg-type]
    with pytest.raises(OffLimits):
        public.addresses("rebind.example.com", 443)
    intranet = Walls.for_source("http://wiki.corp/", ["db.corp"], resolve)  # type: ignore[arg-type]
    assert intranet.addresses("db.corp", 80) == ["10.0.0.9"]
    with pytest.raises(OffLimits):
        intranet.addresses("127.0.0.1", 80)
    with pytest.raises(OffLimits, match="link-local"):
        Walls.for_source("http://169.254.169.254/latest/")


def test_the_origin_upgraded_to_https_is_the_origin_and_gets_the_credentials() -> None:
    walls = Walls.for_source("http://127.0.0.1:8080/docs/")
    assert walls.credentials_for("https://127.0.0.1/docs/a.html")
    assert walls.credentials_for("https://127.0.0.1:8080/docs/a.html")
    assert not walls.credentials_for("http://127.0.0.1:8081/docs/a.html")
    with pytest.raises(OffLimits):
        walls.check_url("https://127.0.0.2/docs/")
    downgrade = Walls.for_source("https://127.0.0.1/")
    with pytest.raises(OffLimits):
        downgrade.check_url("http://127.0.0.1/")


def test_a_source_url_in_link_local_space_cannot_be_synced(tmp_path: Path) -> None:
    store = _store(tmp_path, url="http://169.254.169.254/latest/sitemap.xml")
    [outcome] = sync_all(store)
    assert not outcome.ok and "link-local" in (outcome.error or "")
    store.close()


def test_a_stored_url_with_credentials_is_refused_at_sync_and_never_printed(
        tmp_path: Path, origin: WebSite) -> None:
    host = origin.url.split("://", 1)[1]
    store = _store(tmp_path, url=f"http://admin:hunter2@{host}/sitemap.xml")
    [outcome] = sync_all(store)
    assert not outcome.ok
    assert "--auth-env" in (outcome.error or "")
    assert "hunter2" not in repr(outcome)
    assert sum(origin.state.hits.values()) == 0
    store.close()


def test_a_url_with_credentials_is_refused_when_configured() -> None:
    with pytest.raises(ValueError, match="--auth-env"):
        WebSettings(url="https://bob:pw@wiki.example.com/sitemap.xml")
    with pytest.raises(ValueError, match="host or host:port"):
        WebSettings(url="https://wiki.example.com/", allow_hosts=["https://cdn.example.com/x"])


def test_a_missing_secret_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NOPE_TOKEN", raising=False)
    with pytest.raises(ConfigurationError, match="NOPE_TOKEN"):
        WebFetcher(WebSettings(url="http://127.0.0.1:9/", auth_env="NOPE_TOKEN"))
