"""Web bodies are read within the limit while streaming and while inflating (issue 39): a
200 MB page and a gzip bomb are skipped by name, never truncated and indexed, and the sync's
peak memory stays within a constant of syncing a one-page site."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from docassist.core.limits import MAX_DOCUMENT_BYTES
from docassist.core.sources import Source, SourceKind
from docassist.sources.sync import sync_all
from docassist.storage import Store
from docassist_testkit.fakes.web_site import WebSite, gzip_bomb, page
from tests.conftest import REPO

HUGE_PAGE = 200 << 20
BOMB_INFLATED = 300 << 20
RSS_MARGIN_KB = 50 * 1024
GOOD = page("Restart", ("Steps", "Run systemctl restart docassist-api and check health."))


@pytest.fixture(scope="module")
def bomb() -> bytes:
    return gzip_bomb(BOMB_INFLATED)


@pytest.fixture
def site(bomb: bytes) -> Iterator[WebSite]:
    web = WebSite()
    web.state.pages["/restart.html"] = GOOD
    yield web
    web.stop()


def _hostile(site: WebSite, bomb: bytes) -> None:
    site.state.streams["/huge.html"] = HUGE_PAGE
    site.state.encoded["/bomb.html"] = ("gzip", bomb)
    site.state.pages["/huge.html"] = site.state.pages["/bomb.html"] = ""  # listed in the sitemap


def test_a_huge_page_and_a_gzip_bomb_are_skipped_by_name_and_the_rest_synced(
        tmp_path: Path, site: WebSite, bomb: bytes) -> None:
    _hostile(site, bomb)
    store = Store(tmp_path / "bodies.db")
    store.add_source(Source(name="wiki", kind=SourceKind.WEB,
                            settings={"url": f"{site.url}/sitemap.xml"}))
    [outcome] = sync_all(store)
    assert outcome.ok, outcome.errors
    assert outcome.added == ["DOC-RESTART"]
    skipped = dict(outcome.skipped)
    assert sorted(skipped) == [f"{site.url}/bomb.html", f"{site.url}/huge.html"]
    assert f"over {MAX_DOCUMENT_BYTES} bytes, inflated" in skipped[f"{site.url}/bomb.html"]
    assert f"over {MAX_DOCUMENT_BYTES} bytes" in skipped[f"{site.url}/huge.html"]
    assert [d.document_id for d in store.documents()] == ["DOC-RESTART"]
    store.close()


def test_a_gzip_page_within_the_limit_is_inflated_and_indexed_whole(
        tmp_path: Path, site: WebSite) -> None:
    import gzip

    words = " ".join(f"step{number}" for number in range(60_000))  # ~530 kB inflated
    html = page("Long", ("Body", f"Rotate the keys. {words} Last line: call the lead."))
    site.state.encoded["/long.html"] = ("gzip", gzip.compress(html.encode()))
    site.state.pages["/long.html"] = ""
    store = Store(tmp_path / "long.db")
    store.add_source(Source(name="wiki", kind=SourceKind.WEB,
                            settings={"url": f"{site.url}/sitemap.xml"}))
    [outcome] = sync_all(store)
    assert outcome.ok and not outcome.skipped, outcome.errors
    text = " ".join(chunk.text for chunk in store.current_chunks()
                    if chunk.document_id == "DOC-LONG")
    assert "step59999" in text and "call the lead" in text
    store.close()


def _peak_rss_kb(tmp_path: Path, site: WebSite, name: str) -> tuple[int, dict[str, Any]]:
    """`docassist sync --json` in a fresh interpreter: its peak RSS and its JSON."""
    db = tmp_path / f"{name}.db"
    store = Store(db)
    store.add_source(Source(name="wiki", kind=SourceKind.WEB,
                            settings={"url": f"{site.url}/sitemap.xml"}))
    store.close()
    code = ("import resource, subprocess, sys\n"
            "done = subprocess.run([sys.executable, '-m', 'docassist', 'sync', '--json'],"
            " capture_output=True, text=True)\n"
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
            "print(done.stdout)")
    env = {**os.environ, "DOCASSIST_DB": str(db), "DOCASSIST_EMBEDDER": "none",
           "DOCASSIST_RETRIEVER": "bm25"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, cwd=REPO, timeout=120, check=True)
    peak, report = done.stdout.split("\n", 1)
    return int(peak), json.loads(report)


def test_syncing_the_hostile_site_peaks_within_50_mb_of_a_one_page_site(
        tmp_path: Path, site: WebSite, bomb: bytes) -> None:
    one_page_kb, one_page = _peak_rss_kb(tmp_path, site, "one-page")
    _hostile(site, bomb)
    hostile_kb, hostile = _peak_rss_kb(tmp_path, site, "hostile")
    [plain] = one_page["sources"]
    [report] = hostile["sources"]
    assert (plain["added"], report["added"], report["skipped"]) == (1, 1, 2)
    assert {skip["item"] for skip in report["skips"]} == {f"{site.url}/huge.html",
                                                          f"{site.url}/bomb.html"}
    assert hostile_kb - one_page_kb < RSS_MARGIN_KB, (hostile_kb, one_page_kb)
