"""What Confluence and SharePoint syncs share: an HTTP client with bounded retries and
credential errors, ids from the system's own item ids, and a ledger of the items a source
holds (their version markers, documents, and what left the source).

A credential the system rejects (401, 403, a token service's refusal) stops the sync with
a SourceAuthError: recorded on the source, and nothing is deleted, because a revoked token
must not read as "every page is gone".
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Final, TypeVar
from urllib.parse import urljoin, urlsplit

import httpx

from docassist.core.documents import (
    ParsedDocument,
    parse_document,
    redact_url,
    split_front_matter,
)
from docassist.core.errors import DocAssistError
from docassist.core.limits import MAX_CHUNKS_PER_DOCUMENT, MAX_DOCUMENT_BYTES, MAX_DOCUMENT_ID_CHARS
from docassist.core.sources import Source, SyncOutcome
from docassist.sources.bodies import BodyRefused, read_bounded
from docassist.sources.limits import (
    WEB_BACKOFF_SECONDS,
    WEB_MAX_RETRY_AFTER_SECONDS,
    WEB_REQUEST_ATTEMPTS,
)
from docassist.sources.walls import OffLimits, Origin
from docassist.storage.formats import SUPPORTED_SUFFIXES, format_of, read_bytes
from docassist.storage.roles import SourceItems
from docassist.storage.source_rows import WebItem

T = TypeVar("T")

logger = logging.getLogger(__name__)

AUTH_STATUSES: Final = frozenset({401, 403})
GONE_STATUSES: Final = frozenset({404, 410})


class SourceAuthError(DocAssistError):
    """The system refused the source's credentials (expired, revoked, not permitted)."""


class RemoteError(Exception):
    """A request that gave no usable answer after the bounded tries (fails one item, or the
    listing: then nothing is taken as gone)."""


class ItemGone(RemoteError):
    """404/410: the item is no longer there."""


MAX_LISTING_BYTES: Final = 20_000_000
"""A JSON answer (a listing page) larger than this is refused, read or inflated."""
Read = Callable[[httpx.Response], T]


@dataclass
class RemoteHttp:
    """httpx with the retry rules of web sources: 429 (Retry-After obeyed up to a cap) and
    5xx (doubling backoff) are tried again; 401/403 raise SourceAuthError. With an `origin`,
    a URL elsewhere (an absolute "next" or download link) is refused before any request, so
    the credentials never leave the configured host. Bodies are read within their limit."""

    client: httpx.Client
    system: str
    """Named in errors ("Confluence", "Microsoft Graph")."""
    origin: str | None = None
    """The configured base URL; None for pre-authenticated downloads (sent no credentials)."""
    sleep_cap: float = WEB_MAX_RETRY_AFTER_SECONDS
    backoff: float = WEB_BACKOFF_SECONDS

    def fetch(self, url: str, read: Read[T], params: dict[str, Any] | None = None) -> T:
        self._check_origin(url)
        reason = "no answer"
        for attempt in range(1, WEB_REQUEST_ATTEMPTS + 1):
            wait = self.backoff * 2 ** (attempt - 1)
            try:
                with self.client.stream("GET", url, params=params) as response:
                    status = response.status_code
                    if status < 400:
                        return read(response)
                    self._refuse(status)
                    reason = f"HTTP {status}"
                    wait = retry_wait(response, wait)
            except httpx.HTTPError as error:
                reason = type(error).__name__
            else:
                if wait > self.sleep_cap:
                    raise RemoteError(f"{reason}, Retry-After {wait:.0f} s is too long")
            if attempt < WEB_REQUEST_ATTEMPTS:
                logger.info("%s: retrying in %.1f s (%s)", self.system, wait, reason)
                time.sleep(wait)
        raise RemoteError(f"{reason} after {WEB_REQUEST_ATTEMPTS} tries")

    def _check_origin(self, url: str) -> None:
        if self.origin is None:
            return
        try:
            inside = Origin.of(url) == Origin.of(self.origin)
        except OffLimits:
            inside = False
        if not inside:
            raise RemoteError(f"{self.system} gave a link off {Origin.of(self.origin)} "
                              f"({redact_url(url)[:200]}); not followed")

    def _refuse(self, status: int) -> None:
        """Statuses that are not tried again."""
        if status in AUTH_STATUSES:
            raise SourceAuthError(
                f"{self.system} refused the credentials (HTTP {status}): the token "
                "may have expired or been revoked, or lacks read permission; nothing "
                "was removed")
        if status in GONE_STATUSES:
            raise ItemGone(f"HTTP {status}")
        if status != 429 and status < 500:
            raise RemoteError(f"HTTP {status}")

    def json(self, url: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        body = self.fetch(url, partial(read_bounded, limit=MAX_LISTING_BYTES), params)
        try:
            parsed = json.loads(body)
        except ValueError as error:
            raise RemoteError(f"not JSON from {self.system}") from error
        if not isinstance(parsed, dict):
            raise RemoteError(f"unexpected answer from {self.system}")
        return parsed

    def download(self, url: str) -> bytes:
        try:
            return self.fetch(url, partial(read_bounded, limit=MAX_DOCUMENT_BYTES))
        except BodyRefused as error:
            raise RemoteError(str(error)) from error

    def close(self) -> None:
        self.client.close()


def retry_wait(response: httpx.Response, default: float) -> float:
    value = response.headers.get("retry-after", "")
    try:
        return max(0.0, float(value)) if value else default
    except ValueError:
        return default  # an HTTP date: the backoff stands in


def resolve_link(base_url: str, link: str) -> str:
    """A `next`/download link of the system as an absolute URL. Links either include the
    base's path (Cloud v2: `/wiki/api/v2/…`) or are relative to the base (Data Center:
    `/rest/api/…` under `/confluence`); absolute links stay as they are."""
    if "://" in link:
        return link
    base_path = urlsplit(base_url).path.rstrip("/")
    if base_path and not link.startswith(base_path + "/"):
        return base_url.rstrip("/") + "/" + link.lstrip("/")
    return urljoin(base_url, link)


def _id_part(value: str) -> str:
    return re.sub(r"[^A-Z0-9]+", "-", value.upper()).strip("-")


def _short_hash(value: str) -> str:
    return hashlib.sha256(value.encode("utf-8")).hexdigest()[:6].upper()


def remote_document_id(source: str, item: str) -> str:
    """`DOC-<SOURCE>-<ITEM ID>`: the system's own id (stable across edits, renames and moves),
    prefixed by the source so two sites never collide. An id that upper-casing or cleaning
    would change (lower case) gets its hash appended; a too long one is cut and ends in a hash."""
    whole = f"DOC-{_id_part(source)}-{_id_part(item) or 'ITEM'}"
    if any(character.islower() for character in item):
        whole = f"{whole}-{_short_hash(item)}"
    if len(whole) > MAX_DOCUMENT_ID_CHARS:
        cut = whole[: MAX_DOCUMENT_ID_CHARS - 7].rstrip("-_")
        whole = f"{cut}-{_short_hash(source + '/' + item)}"
    return whole


def readable(name: str) -> bool:
    """A file of a format DocAssist reads (by its name's suffix)."""
    return format_of(name) in SUPPORTED_SUFFIXES


def read_file_bytes(name: str, data: bytes) -> str:
    """A downloaded file as text with `#` headings, like an indexed file; ValueError says why
    not."""
    return read_bytes(data, format_of(name))


def remote_document(text: str, *, name: str, document_id: str, url: str | None,
                    version: str | None = None, title: str | None = None) -> ParsedDocument:
    """A document read from a remote system: our id, its URL and (when the system numbers
    them) its version in the front matter; its own title unless it has none. The version
    hash covers all of it, so a moved page (new URL) is a new version too."""
    meta, body = split_front_matter(text)
    meta.pop("id", None)  # a remote item's id is the system's, never one written in the file
    overrides = {"id": document_id, "url": url, "version": version}
    meta.update({key: value for key, value in overrides.items() if value})
    if title and not meta.get("title"):
        meta["title"] = title
    lines = [f"{key}: {' '.join(value.split())}" for key, value in meta.items() if value]
    raw = "---\n" + "\n".join(lines) + "\n---\n" + body
    digest = hashlib.sha256(raw.encode("utf-8")).hexdigest()
    stem = name.rsplit(".", 1)[0] if "." in name else name
    parsed = parse_document(name, stem, raw, content_sha256=digest, default_id=document_id)
    if not parsed.chunks or len(parsed.chunks) > MAX_CHUNKS_PER_DOCUMENT:
        raise ValueError(f"{len(parsed.chunks)} chunks (1..{MAX_CHUNKS_PER_DOCUMENT})")
    return parsed


@dataclass
class ItemLedger:
    """The items one source holds (key → document and version marker), as the store keeps
    them, and this sync's outcome. Keys are the system's ids (`page:123`, a drive item id)."""

    store: SourceItems
    source: Source
    outcome: SyncOutcome
    items: dict[str, WebItem] = field(init=False)
    seen: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.items = self.store.web_items(self.source.name)

    def is_current(self, key: str, marker: str) -> bool:
        """The item is held at this marker (a version number, a content hash): unchanged,
        nothing fetched, parsed or embedded."""
        self.seen.add(key)
        known = self.items.get(key)
        if known is None or known.etag != marker or known.document_id is None:
            return False
        document = self.store.document(known.document_id)
        if document is None or not document.chunked_current:  # gone, or cut the old way
            return False
        self.outcome.unchanged.append(known.document_id)
        return True

    def keep(self, key: str, parsed: ParsedDocument, marker: str, location: str) -> None:
        """Store the item's document (a new version unless its text is the same)."""
        self.seen.add(key)
        document_id = parsed.info.document_id
        previous = self.store.document(document_id)
        if previous is not None and previous.source != self.source.name:
            raise ValueError(f"document id {document_id} belongs to source {previous.source}")
        if previous is not None and previous.content_sha256 == parsed.info.content_sha256 \
                and previous.chunked_current:
            self.outcome.unchanged.append(document_id)
        else:
            self.store.replace_document(parsed, location, source=self.source.name,
                                        collection=self.source.collection)
            (self.outcome.updated if previous is not None else self.outcome.added).append(
                document_id)
        item = WebItem(url=key, document_id=document_id, etag=marker, last_modified=None,
                       links=[])
        self.store.save_web_item(self.source.name, item)
        self.items[key] = item

    def fail(self, key: str, label: str, error: Exception | str) -> None:
        """The item could not be synced this time: what it had stays."""
        self.seen.add(key)
        self.outcome.failed.append(label)
        self.outcome.errors.append(f"{label}: {error}")

    def remove(self, key: str) -> None:
        """The item left the source: its document leaves the catalog, unless another item
        now holds it (an attachment moved to another page keeps its id)."""
        known = self.items.pop(key, None)
        if known is None:
            return
        held = any(item.document_id == known.document_id for item in self.items.values())
        if known.document_id is not None and not held and self.store.document(
                known.document_id):
            self.store.remove_document(known.document_id)
            self.outcome.deleted.append(known.document_id)
        self.store.forget_web_item(self.source.name, key)

    def remove_unseen(self, prefix: str = "") -> None:
        """Items (with keys starting with `prefix`) this sync did not meet left the source."""
        for key in sorted(self.items):
            if key.startswith(prefix) and key not in self.seen:
                self.remove(key)
