"""Confluence and SharePoint source syncs on the loopback fakes: first sync, unchanged
re-sync, one item edited. Prints wall time, requests and chunk rows written per phase; no
assertions.
    .venv/bin/python bench/sync_remote.py [ITEMS]
"""

from __future__ import annotations

import base64
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from docassist.core.sources import Source, SourceKind
from docassist.sources.confluence import EMAIL_ENV, TOKEN_ENV
from docassist.sources.sync import sync_all
from docassist.storage import Store
from docassist_testkit.fakes.confluence_site import FakeConfluence, FakePage
from docassist_testkit.fakes.graph_site import FakeGraph


def body(number: int) -> str:
    return (f"<h2>Steps</h2><p>{f'Step one of procedure {number}. ' * 20}</p>"
            f"<h2>Checks</h2><p>{f'Verify procedure {number} with the health endpoint. ' * 10}"
            "</p>")


def phases(store: Store, requests: Callable[[], int], edit: Callable[[], None]) -> None:
    def phase(name: str) -> None:
        sent = requests()
        chunks = store.db.execute("SELECT count(*) FROM chunks").fetchone()[0]
        started = time.perf_counter()
        [outcome] = sync_all(store)
        elapsed = time.perf_counter() - started
        written = store.db.execute("SELECT count(*) FROM chunks").fetchone()[0] - chunks
        print(f"  {name:<18} {elapsed:6.2f} s  requests {requests() - sent:4d}  chunks "
              f"written {written:4d}  {outcome.counts()}")

    phase("first sync")
    phase("unchanged re-sync")
    edit()
    phase("one item edited")


def confluence(items: int, folder: Path) -> None:
    site = FakeConfluence()
    site.state.page_size = 100
    site.add_space("OPS", {str(1000 + n): FakePage(f"Procedure {n}", body(n))
                           for n in range(items)})
    os.environ[EMAIL_ENV], os.environ[TOKEN_ENV] = "bench@example.com", "bench-token"
    site.state.authorization = "Basic " + base64.b64encode(
        b"bench@example.com:bench-token").decode()
    store = Store(folder / "confluence.db")
    store.add_source(Source(name="wiki", kind=SourceKind.CONFLUENCE,
                            settings={"url": site.cloud_url, "spaces": ["OPS"],
                                      "deployment": "cloud"}))

    def edit() -> None:
        site.state.spaces["OPS"]["1007"] = FakePage("Procedure 7", "<p>Changed.</p>", 2)

    print(f"confluence (Cloud v2, {items} pages, 100 per listing; attachments by one CQL "
          "search):")
    phases(store, lambda: len(site.state.requests), edit)
    store.close()
    site.stop()


def sharepoint(items: int, folder: Path) -> None:
    graph = FakeGraph(folder)
    graph.state.page_size = 200
    for n in range(items):
        graph.state.put(f"01F{n:05d}", f"procedure-{n}.html",
                        f"<html><body><h1>Procedure {n}</h1>{body(n)}</body></html>".encode())
    os.environ.update(graph.environment())
    store = Store(folder / "sharepoint.db")
    store.add_source(Source(name="sp", kind=SourceKind.SHAREPOINT,
                            settings={"site": "contoso.sharepoint.com:/sites/ops"}))

    def edit() -> None:
        graph.state.put("01F00007", "procedure-7.html", b"<html><h1>P7</h1><p>Changed.</p>")

    print(f"sharepoint (Graph delta, {items} files, 200 per page):")
    phases(store, lambda: len(graph.state.requests), edit)
    store.close()
    graph.stop()


def main(items: int = 200) -> None:
    with tempfile.TemporaryDirectory() as folder:
        confluence(items, Path(folder))
        sharepoint(items, Path(folder))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
