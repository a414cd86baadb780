"""The stores' part for document sources: configuration, sync state, web items, leases.

A mixin of both stores (written once over dialect.py), kept in its own file so the catalog
and conversation code stays readable. Settings hold no secrets (an environment variable's
name at most; see core.sources.WebSettings).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from docassist.core.errors import ConfigurationError
from docassist.core.sources import (
    Source,
    SourceKind,
    SourceStatus,
    SyncOutcome,
    SyncTimes,
    next_run_after,
)
from docassist.storage.connection import iso_text, now_iso
from docassist.storage.dialect import SqlStore


@dataclass(frozen=True)
class WebItem:
    """What a web source last saw at one URL: its document and the validators to send."""

    url: str
    document_id: str | None
    etag: str | None
    last_modified: str | None
    links: list[str]


class SourceRows:
    """Sources, their items and sync leases (mixed into Store and PostgresStore). Items are
    what any remote kind last saw: a web page by URL, a Confluence page or a drive item by its
    id, with a version marker in `etag`."""

    def add_source(self: SqlStore, source: Source) -> None:
        with self._write() as connection:
            if connection.execute("SELECT 1 FROM sources WHERE name = ?",
                                  [source.name]).fetchone():
                raise ConfigurationError(f"a source named {source.name!r} exists already")
            added = connection.execute(
                self.dialect.insert_ignoring("sources", ["name", "kind", "collection",
                                                         "settings", "created_at"]),
                [source.name, str(source.kind), source.collection,
                 json.dumps(source.settings), now_iso()]).rowcount
            if added != 1:  # another replica added it meanwhile (the name is the only key)
                raise ConfigurationError(f"a source named {source.name!r} exists already")

    def sources(self: SqlStore) -> list[Source]:
        rows = self._read("SELECT name, kind, collection, settings FROM sources ORDER BY name")
        return [Source(name=row["name"], kind=SourceKind(row["kind"]),
                       collection=row["collection"], settings=json.loads(row["settings"]))
                for row in rows]

    def source_statuses(self: SqlStore) -> list[SourceStatus]:
        rows = self._read(
            "SELECT s.*, (SELECT count(*) FROM documents d WHERE d.source = s.name) AS docs "
            "FROM sources s ORDER BY s.name")
        return [SourceStatus(name=row["name"], kind=SourceKind(row["kind"]),
                             collection=row["collection"], documents=row["docs"],
                             last_success=row["last_success"], last_error=row["last_error"],
                             next_run=row["next_run"], last_run=row["last_run"],
                             last_started=row["sync_started"])
                for row in rows]

    def sync_times(self: SqlStore, source: str) -> SyncTimes | None:
        """When the source's latest sync began and ended; None for an unknown source."""
        rows = self._read("SELECT sync_started, last_run FROM sources WHERE name = ?",
                          [source])
        return SyncTimes(started=rows[0]["sync_started"], finished=rows[0]["last_run"]
                         ) if rows else None

    def record_sync_started(self: SqlStore, source: str) -> None:
        """A sync of the source begins (under its lease)."""
        with self._write() as connection:
            connection.execute("UPDATE sources SET sync_started = ? WHERE name = ?",
                               [now_iso(), source])

    def record_sync(self: SqlStore, outcome: SyncOutcome,
                    every_seconds: float | None) -> None:
        """A finished sync: a success clears the last error, a failure keeps the last success;
        the next run is `every_seconds` after this end (none without a schedule)."""
        ended = datetime.now(UTC)
        now, next_run = iso_text(ended), next_run_after(ended, every_seconds)
        with self._write() as connection:
            connection.execute(
                "UPDATE sources SET last_run = ?, counts = ?, next_run = ?, last_error = ?, "
                "last_success = CASE WHEN ? THEN ? ELSE last_success END WHERE name = ?",
                [now, json.dumps(outcome.counts()), next_run, outcome.error, outcome.ok, now,
                 outcome.name])

    def source_sync_state(self: SqlStore, source: str) -> dict[str, str]:
        """What the source's kind keeps between syncs (a delta link), {} before the first."""
        rows = self._read("SELECT sync_state FROM sources WHERE name = ?", [source])
        value = rows[0]["sync_state"] if rows else None
        return dict(json.loads(value)) if value else {}

    def save_source_sync_state(self: SqlStore, source: str, state: dict[str, str]) -> None:
        with self._write() as connection:
            connection.execute("UPDATE sources SET sync_state = ? WHERE name = ?",
                               [json.dumps(state), source])

    def web_items(self: SqlStore, source: str) -> dict[str, WebItem]:
        rows = self._read("SELECT * FROM source_items WHERE source = ?", [source])
        return {row["item"]: WebItem(url=row["item"], document_id=row["document_id"],
                                     etag=row["etag"], last_modified=row["last_modified"],
                                     links=json.loads(row["links"] or "[]"))
                for row in rows}

    def save_web_item(self: SqlStore, source: str, item: WebItem) -> None:
        with self._write() as connection:
            connection.execute(self.dialect.upsert(
                "source_items", ["source", "item", "document_id", "etag", "last_modified",
                                 "links", "seen_at"], ["source", "item"]),
                [source, item.url, item.document_id, item.etag, item.last_modified,
                 json.dumps(item.links), now_iso()])

    def forget_web_item(self: SqlStore, source: str, url: str) -> None:
        with self._write() as connection:
            connection.execute("DELETE FROM source_items WHERE source = ? AND item = ?",
                               [source, url])

    def source_document_ids(self: SqlStore, source: str) -> dict[str, str]:
        """The source's documents: source path (URL or file) → document id."""
        rows = self._read("SELECT source_path, document_id FROM documents WHERE source = ?",
                          [source])
        return {str(row["source_path"]): str(row["document_id"]) for row in rows}

    def claim_lease(self: SqlStore, name: str, holder: str, seconds: float) -> bool:
        """Take the named lease unless another holder has it and it has not expired: one
        sync of a source at a time across processes sharing this database."""
        now = datetime.now(UTC)
        expires = iso_text(now + timedelta(seconds=seconds))
        with self._write() as connection:
            connection.execute(self.dialect.insert_ignoring(
                "leases", ["name", "holder", "expires_at"]), [name, "", ""])
            cursor = connection.execute(
                "UPDATE leases SET holder = ?, expires_at = ? WHERE name = ? "
                "AND (holder = '' OR holder = ? OR expires_at < ?)",
                [holder, expires, name, holder, iso_text(now)])
            return cursor.rowcount == 1

    def release_lease(self: SqlStore, name: str, holder: str) -> None:
        with self._write() as connection:
            connection.execute("UPDATE leases SET holder = '', expires_at = '' "
                               "WHERE name = ? AND holder = ?", [name, holder])

    def lease_rows(self: SqlStore) -> Iterator[dict[str, Any]]:
        yield from self._read("SELECT * FROM leases ORDER BY name")
