"""One incremental sync of a SharePoint document library (or a OneDrive) through Graph.

The first sync enumerates the drive with `GET /drives/{id}/root/delta`, following
`@odata.nextLink`; the `@odata.deltaLink` of the last page is kept in the source's sync
state, and the next sync asks it for what changed since. Items are tracked by their drive
item id (delta gives no paths), which is also the document id: a renamed or moved file keeps
its id and gets a new version for its new URL. An item with the `deleted` facet leaves the
catalog. A file whose content hash and URL are the ones stored is unchanged: not downloaded,
parsed or embedded.

The delta link only moves forward when every change was applied: after a partial failure
the next sync reads the same changes again (what was applied is then unchanged). A 410 from
an old delta link starts a full enumeration, after which files not met are gone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlsplit

from docassist.core.sources import SharePointSettings, Source, SyncOutcome
from docassist.sources.graph import GraphClient
from docassist.sources.limits import REMOTE_MAX_ITEMS
from docassist.sources.remote import (
    ItemGone,
    ItemLedger,
    RemoteError,
    read_file_bytes,
    readable,
    remote_document,
    remote_document_id,
)
from docassist.sources.web_sync import OnItem
from docassist.storage.roles import SourceItems

DELTA_LINK = "delta_link"
DRIVE_ID = "drive_id"


def graph_client() -> GraphClient:
    return GraphClient()


def site_path(site: str) -> str:
    """`sites/{ref}` for a site URL (https://HOST/sites/NAME → HOST:/sites/NAME), a
    `HOST:/path` reference or a site id."""
    if "://" in site:
        parts = urlsplit(site)
        path = parts.path.rstrip("/")
        return f"sites/{parts.netloc}:{quote(path)}" if path else f"sites/{parts.netloc}"
    return f"sites/{site}"


def resolve_drive(graph: GraphClient, settings: SharePointSettings) -> str:
    site_id = graph.json(site_path(settings.site), {"$select": "id"})["id"]
    if settings.drive is None:
        return str(graph.json(f"sites/{site_id}/drive", {"$select": "id"})["id"])
    for drive in graph.paged(f"sites/{site_id}/drives", {"$select": "id,name"}):
        if settings.drive in (drive.get("id"), drive.get("name")):
            return str(drive["id"])
    raise RemoteError(f"no document library {settings.drive!r} on site {settings.site}")


def content_marker(item: dict[str, Any]) -> str:
    """What changes when the file's content or place changes: its content hash (quickXor on
    SharePoint, sha256/sha1 elsewhere; the eTag when none is given) and its URL."""
    hashes = (item.get("file") or {}).get("hashes") or {}
    content = (hashes.get("quickXorHash") or hashes.get("sha256Hash") or
               hashes.get("sha1Hash") or item.get("eTag") or "")
    return f"{content}|{item.get('webUrl', '')}"


@dataclass
class SharePointSync:
    store: SourceItems
    source: Source
    graph: GraphClient
    on_item: OnItem | None = None
    outcome: SyncOutcome = field(init=False)
    ledger: ItemLedger = field(init=False)

    def __post_init__(self) -> None:
        self.outcome = SyncOutcome(self.source.name, self.source.kind)
        self.ledger = ItemLedger(self.store, self.source, self.outcome)

    def run(self) -> SyncOutcome:
        state = self.store.source_sync_state(self.source.name)
        try:
            drive_id = resolve_drive(self.graph, self.source.sharepoint())
            link = state.get(DELTA_LINK) if state.get(DRIVE_ID) == drive_id else None
            changes, next_link, full = self._changes(drive_id, link)
        except RemoteError as error:  # the listing failed: nothing is taken as gone
            self.outcome.errors.append(f"{self.source.sharepoint().site}: {error}")
            return self.outcome
        for count, item in enumerate(changes.values()):
            if count >= REMOTE_MAX_ITEMS:
                self.outcome.notes.append(f"more than {REMOTE_MAX_ITEMS} changes, the rest "
                                          "next time")
                return self.outcome
            self._apply(drive_id, item)
        if full and not self.outcome.failed:
            self.ledger.remove_unseen()
        if not self.outcome.failed and next_link:
            self.store.save_source_sync_state(self.source.name,
                                              {DRIVE_ID: drive_id, DELTA_LINK: next_link})
        return self.outcome

    def _changes(self, drive_id: str, link: str | None
                 ) -> tuple[dict[str, dict[str, Any]], str | None, bool]:
        """Changed items by id (the last occurrence wins), the new delta link, and whether
        this was a full enumeration."""
        start = f"drives/{drive_id}/root/delta"
        url, full = link or start, link is None
        changes: dict[str, dict[str, Any]] = {}
        while True:
            try:
                body = self.graph.json(url)
            except ItemGone:
                if full:
                    raise
                url, full = start, True  # 410: the delta link expired; enumerate afresh
                changes.clear()
                self.outcome.notes.append("delta link expired; enumerated the drive again")
                continue
            for item in body.get("value") or []:
                if isinstance(item, dict) and item.get("id"):
                    changes[str(item["id"])] = item
            if body.get("@odata.nextLink"):
                url = str(body["@odata.nextLink"])
                continue
            delta = body.get("@odata.deltaLink")
            return changes, str(delta) if delta else None, full

    def _apply(self, drive_id: str, item: dict[str, Any]) -> None:
        key = str(item["id"])
        name = str(item.get("name") or "")
        if "deleted" in item or "file" not in item or not readable(name):
            self.ledger.remove(key)  # deleted, or renamed to a format we do not read
            return
        url = str(item.get("webUrl") or name)
        if self.on_item is not None:
            self.on_item(url)
        marker = content_marker(item)
        if self.ledger.is_current(key, marker):
            return
        try:
            download = item.get("@microsoft.graph.downloadUrl")
            data = (self.graph.files.download(str(download)) if download else
                    self.graph.http.download(self.graph.url(
                        f"drives/{drive_id}/items/{key}/content")))
            parsed = remote_document(read_file_bytes(name, data), name=name, url=url,
                                     title=name,
                                     document_id=remote_document_id(self.source.name, key))
            self.ledger.keep(key, parsed, marker, url)
        except (RemoteError, ValueError) as error:
            self.ledger.fail(key, url, error)
