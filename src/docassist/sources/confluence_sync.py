"""One incremental sync of a Confluence source.

A page is unchanged while its Confluence version number and URL are the ones stored: no
body is parsed and nothing is embedded. A changed page becomes a new version (its Confluence
version number is the document's version). A page moved to another configured space keeps
its id (its URL changes, so it is a new version); a page deleted, archived or moved out of
the configured spaces leaves the catalog in that sync. Attachments of the formats DocAssist
reads are documents of their own, versioned by their attachment version, listed per space.

A space whose listing fails removes nothing (a half-read listing must not read as
deletions); an attachment listing that fails keeps every attachment.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html import escape

from docassist.core.sources import Source, SyncOutcome
from docassist.sources.confluence import ConfluenceApi, ConfluenceAttachment, ConfluencePage
from docassist.sources.limits import REMOTE_MAX_ITEMS
from docassist.sources.remote import (
    ItemLedger,
    RemoteError,
    read_file_bytes,
    readable,
    remote_document,
    remote_document_id,
)
from docassist.sources.web_sync import OnItem
from docassist.storage.formats import read_html
from docassist.storage.roles import SourceItems


def page_key(page_id: str) -> str:
    return f"page:{page_id}"


ATTACHMENT_PREFIX = "attachment:"


def attachment_key(page_id: str, attachment_id: str) -> str:
    return f"{ATTACHMENT_PREFIX}{page_id}:{attachment_id}"


def page_text(page: ConfluencePage) -> str:
    """The storage-format body as the HTML reader's text, under the page title."""
    title = escape(page.title)
    return read_html((f"<html><head><title>{title}</title></head><body><h1>{title}</h1>"
                      f"{page.storage}</body></html>").encode())


@dataclass
class ConfluenceSync:
    store: SourceItems
    source: Source
    api: ConfluenceApi
    on_item: OnItem | None = None
    outcome: SyncOutcome = field(init=False)
    ledger: ItemLedger = field(init=False)
    count: int = 0
    truncated: bool = False
    """More than REMOTE_MAX_ITEMS: the rest left out, and nothing taken as gone."""

    def __post_init__(self) -> None:
        self.outcome = SyncOutcome(self.source.name, self.source.kind)
        self.ledger = ItemLedger(self.store, self.source, self.outcome)

    def run(self) -> SyncOutcome:
        listed_all = True
        for space in self.source.confluence().spaces:
            try:
                pages = self._sync_pages(space)
            except RemoteError as error:
                self.outcome.errors.append(f"space {space}: {error}")
                listed_all = False
                continue
            try:
                attachments = [a for a in self.api.attachments(space)
                               if a.page_id in pages and readable(a.title)]
            except RemoteError as error:  # keep every attachment this source holds
                self.outcome.failed.append(f"space {space} (attachments)")
                self.outcome.errors.append(f"space {space} (attachments): {error}")
                self.ledger.seen.update(k for k in self.ledger.items
                                        if k.startswith(ATTACHMENT_PREFIX))
                continue
            for attachment in attachments:
                self._sync_attachment(attachment)
        if listed_all and not self.truncated:
            self.ledger.remove_unseen()
        return self.outcome

    def _sync_pages(self, space: str) -> set[str]:
        """Sync the space's pages; their ids."""
        pages: set[str] = set()
        for page in self.api.pages(space):
            if self._full():
                break
            self._sync_page(page)
            pages.add(page.page_id)
        return pages

    def _sync_page(self, page: ConfluencePage) -> None:
        self.count += 1
        if self.on_item is not None:
            self.on_item(page.url)
        key = page_key(page.page_id)
        marker = f"{page.version}|{page.url}"
        if self.ledger.is_current(key, marker):
            return
        try:
            parsed = remote_document(
                page_text(page), name=page.title, url=page.url, version=str(page.version),
                document_id=remote_document_id(self.source.name, page.page_id))
            self.ledger.keep(key, parsed, marker, page.url)
        except ValueError as error:
            self.ledger.fail(key, page.url, error)

    def _full(self) -> bool:
        if self.count >= REMOTE_MAX_ITEMS and not self.truncated:
            self.outcome.notes.append(f"more than {REMOTE_MAX_ITEMS} items, the rest left out")
            self.truncated = True
        return self.truncated

    def _sync_attachment(self, attachment: ConfluenceAttachment) -> None:
        if self._full():
            return
        self.count += 1
        key = attachment_key(attachment.page_id, attachment.attachment_id)
        marker = str(attachment.version)
        if self.ledger.is_current(key, marker):
            return
        number = attachment.attachment_id.lower().removeprefix("att")
        try:
            text = read_file_bytes(attachment.title, self.api.download(attachment))
            parsed = remote_document(
                text, name=attachment.title, url=attachment.url,
                version=str(attachment.version), title=attachment.title,
                document_id=remote_document_id(self.source.name, f"ATT{number}"))
            self.ledger.keep(key, parsed, marker, attachment.download_url)
        except (RemoteError, ValueError) as error:
            self.ledger.fail(key, attachment.url, error)
