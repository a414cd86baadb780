"""Web source sync on a loopback site: first sync, unchanged re-sync (304s), one page edited.

Prints wall time, requests and chunk rows written per phase; no assertions.
    .venv/bin/python bench/sync_web.py [PAGES]
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from docassist.core.sources import Source, SourceKind
from docassist.sources.sync import sync_all
from docassist.storage import Store
from docassist_testkit.fakes.web_site import WebSite, page


def main(pages: int = 200) -> None:
    if pages < 1:
        sys.exit("the site needs at least one page")
    site = WebSite()
    for number in range(pages):
        site.state.pages[f"/docs/page-{number}.html"] = page(
            f"Procedure {number}", ("Steps", f"Step one of procedure {number}. " * 20),
            ("Checks", f"Verify procedure {number} with the health endpoint. " * 10))
    with tempfile.TemporaryDirectory() as folder:
        store = Store(Path(folder) / "bench.db")
        store.add_source(Source(name="site", kind=SourceKind.WEB,
                                settings={"url": f"{site.url}/sitemap.xml"}))

        def phase(name: str) -> None:
            requests = sum(site.state.hits.values())
            chunks = store.db.execute("SELECT count(*) FROM chunks").fetchone()[0]
            started = time.perf_counter()
            [outcome] = sync_all(store)
            elapsed = time.perf_counter() - started
            written = store.db.execute("SELECT count(*) FROM chunks").fetchone()[0] - chunks
            sent = sum(site.state.hits.values()) - requests
            print(f"{name:<18} {elapsed:6.2f} s  requests {sent:4d}  chunks written "
                  f"{written:4d}  {outcome.counts()}")

        phase("first sync")
        phase("unchanged re-sync")
        edited = min(7, pages - 1)  # a page the site has, whatever its size
        site.state.pages[f"/docs/page-{edited}.html"] = page(f"Procedure {edited}",
                                                              ("Steps", "Changed."))
        phase("one page edited")
        store.close()
    site.stop()


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
