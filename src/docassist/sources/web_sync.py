"""One incremental sync of a web source.

A page is a new version only when its extracted sections change: the version hash is taken
over the text the HTML reader extracts, so a new timestamp in a footer or a reordered menu
(both dropped by the reader) leaves the document as it was. A 304 costs one request and no
parsing. A page that answers 404/410, or that the sitemap no longer lists, leaves the catalog
in the same sync; a page that failed (429, 5xx, broken) keeps what it had.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from urllib.parse import unquote, urlsplit

from docassist.core.documents import document_id_from_path, parse_document, path_hash, redact_url
from docassist.core.limits import MAX_CHUNKS_PER_DOCUMENT
from docassist.core.sources import Source, SyncOutcome
from docassist.sources.bodies import BodyRefused
from docassist.sources.limits import WEB_MAX_DEPTH, WEB_MAX_PAGES
from docassist.sources.walls import OffLimits
from docassist.sources.web import FetchError, Page, WebFetcher, links_within
from docassist.storage.formats import read_html, read_pdf, read_text_file
from docassist.storage.roles import SourceItems
from docassist.storage.source_rows import WebItem

OnItem = Callable[[str], None]


def url_relative_path(url: str) -> PurePosixPath:
    """The path a page's id comes from, by the files' rule: `/guides/restart.html` →
    `guides/restart.html` (→ DOC-GUIDES_RESTART); the site root is `index`."""
    path = unquote(urlsplit(url).path).strip("/")
    return PurePosixPath(path or "index")


class UnsupportedPage(ValueError):
    """A linked file DocAssist does not read (an image, an archive): skipped with a note."""


def _page_text(page: Page) -> str:
    kind = page.content_type.split(";", 1)[0].strip().lower()
    if kind in ("text/html", "application/xhtml+xml"):
        return read_html(page.body)
    if kind == "application/pdf":
        return read_pdf(page.body)
    if kind in ("text/plain", "text/markdown"):
        return read_text_file(page.body)
    raise UnsupportedPage(f"unsupported content type {kind or '(none)'}")


@dataclass
class WebSync:
    store: SourceItems
    source: Source
    fetcher: WebFetcher
    on_item: OnItem | None = None
    outcome: SyncOutcome = field(init=False)
    items: dict[str, WebItem] = field(init=False)
    documents: dict[str, str] = field(init=False)
    seen: set[str] = field(default_factory=set)
    refused: set[str] = field(default_factory=set)
    """Pages off the walls or over the limit: skipped, and their old documents removed."""
    crawling: bool = False
    """Following links (a start page), so each page's links are read and kept."""

    def __post_init__(self) -> None:
        self.outcome = SyncOutcome(self.source.name, self.source.kind)
        self.items = self.store.web_items(self.source.name)
        self.documents = self.store.source_document_ids(self.source.name)

    def run(self) -> SyncOutcome:
        settings = self.source.web()
        try:
            self.fetcher.load_robots(settings.url)
            if settings.is_sitemap:
                listing = self.fetcher.sitemap_urls(settings.url)
                for url, reason in listing.refused:
                    self.outcome.skip(url, reason)
                self._sync_listed(listing.urls)
            else:
                self.crawling = True
                self._crawl(settings.url)
        except (FetchError, OffLimits, BodyRefused) as error:
            # the listing itself failed: nothing is taken as gone
            self.outcome.errors.append(f"{redact_url(settings.url)}: {error}")
            return self.outcome
        if not self.outcome.failed or settings.is_sitemap:
            self._remove_unseen()
        return self.outcome

    def _sync_listed(self, urls: list[str]) -> None:
        if len(urls) > WEB_MAX_PAGES:
            self.outcome.notes.append(f"{len(urls)} pages listed, first {WEB_MAX_PAGES} kept")
        for url in urls[:WEB_MAX_PAGES]:
            self._sync_page(url)
            if url not in self.refused:
                self.seen.add(url)  # a failed page stays; unlisted and refused ones go

    def _crawl(self, start: str) -> None:
        frontier = [start]
        for _depth in range(WEB_MAX_DEPTH + 1):
            following: list[str] = []
            for url in frontier:
                if url in self.seen or len(self.seen) >= WEB_MAX_PAGES:
                    continue
                self.seen.add(url)
                following.extend(self._sync_page(url))
            frontier = following

    def _sync_page(self, url: str) -> list[str]:
        """Sync one page; returns its same-site links (for the crawl)."""
        if self.on_item is not None:
            self.on_item(url)
        if not self.fetcher.allowed(url):
            self.outcome.notes.append(f"{url}: excluded by robots.txt")
            self.seen.discard(url)
            return []
        known = self.items.get(url)
        if known is not None and not self._chunked_current(known.document_id):
            known = WebItem(url, known.document_id, None, None, known.links)  # fetch it whole
        try:
            page = self.fetcher.get(url, known.etag if known else None,
                                    known.last_modified if known else None)
            if page.gone:
                self.seen.discard(url)
                self._remove(url)
                return []
            if page.not_modified and known is not None:
                self._unchanged(url, known.document_id)
                return known.links
            crawled = self.crawling and "html" in page.content_type
            links = links_within(self.fetcher.walls, url, page.body) if crawled else []
            document_id = self._store_page(page)
        except UnsupportedPage as error:
            self.outcome.notes.append(f"{url}: skipped: {error}")
            self.seen.discard(url)
            return []
        except (OffLimits, BodyRefused) as error:  # never fetched, or never indexed whole
            self.outcome.skip(url, str(error))
            self.refused.add(url)
            self.seen.discard(url)
            return []
        except (FetchError, ValueError) as error:
            self.outcome.failed.append(url)
            self.outcome.errors.append(f"{url}: {error}")
            return known.links if known else []
        self.store.save_web_item(self.source.name, WebItem(
            url, document_id, page.etag, page.last_modified, links))
        return links

    def _chunked_current(self, document_id: str | None) -> bool:
        """False for a page stored with an older chunking: fetched and parsed again."""
        document = self.store.document(document_id) if document_id else None
        return document is None or document.chunked_current

    def _unchanged(self, url: str, document_id: str | None) -> None:
        if document_id is not None:
            self.outcome.unchanged.append(document_id)

    def _store_page(self, page: Page) -> str:
        text = _page_text(page)
        if not text.strip():
            raise ValueError("no text on the page")
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        previous = self.store.document_at(page.url)
        if previous is not None and previous.content_sha256 == digest \
                and previous.chunked_current:
            self.outcome.unchanged.append(previous.document_id)
            return previous.document_id
        relative = url_relative_path(page.url)
        document_id = self._free_id(document_id_from_path(relative), relative, page.url)
        parsed = parse_document(page.url, relative.stem, text, content_sha256=digest,
                                default_id=document_id)
        if not parsed.chunks or len(parsed.chunks) > MAX_CHUNKS_PER_DOCUMENT:
            raise ValueError(f"{len(parsed.chunks)} chunks (1..{MAX_CHUNKS_PER_DOCUMENT})")
        if parsed.info.url is None:
            parsed = type(parsed)(parsed.info.model_copy(update={"url": page.url}),
                                  parsed.chunks, parsed.declared_id)
        if previous is not None and previous.document_id != parsed.info.document_id:
            self.store.remove_document(previous.document_id)
        self.store.replace_document(parsed, page.url, source=self.source.name,
                                    collection=self.source.collection)
        changed = self.outcome.updated if previous is not None else self.outcome.added
        changed.append(parsed.info.document_id)
        return parsed.info.document_id

    def _free_id(self, path_id: str, relative: PurePosixPath, url: str) -> str:
        """The path's id unless another page or file holds it; then the id plus the path's
        hash (as for files); a page keeps the id it had."""
        suffixed = f"{path_id}-{path_hash(relative)}"
        holders = []
        for candidate in (path_id, suffixed):
            holder = self.store.document(candidate)
            if holder is None or holder.source_path == url:
                return candidate
            holders.append(holder.source_path)
        raise ValueError(f"duplicate document id {suffixed} (also in {holders[-1]})")

    def _remove(self, url: str) -> None:
        document_id = self.documents.pop(url, None)
        if document_id is not None and self.store.document(document_id) is not None:
            self.store.remove_document(document_id)
            self.outcome.deleted.append(document_id)
        if self.items.pop(url, None) is not None:
            self.store.forget_web_item(self.source.name, url)

    def _remove_unseen(self) -> None:
        for url in sorted(set(self.documents) | set(self.items)):
            if url not in self.seen:
                self._remove(url)
