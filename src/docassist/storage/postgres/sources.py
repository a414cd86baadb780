"""The PostgreSQL store's sources (configuration, sync state, web items, leases). Same
semantics as storage/source_rows.py."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from docassist.core.errors import ConfigurationError
from docassist.core.sources import (
    Source,
    SourceKind,
    SourceStatus,
    SyncOutcome,
    SyncTimes,
    next_run_after,
)
from docassist.storage.connection import iso_text
from docassist.storage.postgres.connection import now_iso, upsert_sql
from docassist.storage.source_rows import WebItem


class _Base(Protocol):
    def _transaction(self) -> Any: ...

    def _rows(self, sql: str, params: Any = ()) -> list[dict[str, Any]]: ...

    def _value(self, sql: str, params: Any = ()) -> Any: ...


class SourceRowsPg:
    """Sources, their items and leases (mixed into PostgresStore)."""

    def add_source(self: _Base, source: Source) -> None:
        with self._transaction() as connection:
            added = connection.execute(
                "INSERT INTO sources (name, kind, collection, settings, created_at) "
                "VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                [source.name, str(source.kind), source.collection, json.dumps(source.settings),
                 now_iso()]).rowcount
            if added != 1:
                raise ConfigurationError(f"a source named {source.name!r} exists already")

    def sources(self: _Base) -> list[Source]:
        return [Source(name=row["name"], kind=SourceKind(row["kind"]),
                       collection=row["collection"], settings=json.loads(row["settings"]))
                for row in self._rows('SELECT name, kind, collection, settings FROM sources '
                                      'ORDER BY name')]

    def source_statuses(self: _Base) -> list[SourceStatus]:
        rows = self._rows(
            "SELECT s.*, (SELECT count(*) FROM documents d WHERE d.source = s.name) AS docs "
            "FROM sources s ORDER BY s.name")
        return [SourceStatus(name=row["name"], kind=SourceKind(row["kind"]),
                             collection=row["collection"], documents=row["docs"],
                             last_success=row["last_success"], last_error=row["last_error"],
                             next_run=row["next_run"], last_run=row["last_run"],
                             last_started=row["sync_started"])
                for row in rows]

    def sync_times(self: _Base, source: str) -> SyncTimes | None:
        """When the source's latest sync began and ended; None for an unknown source."""
        rows = self._rows("SELECT sync_started, last_run FROM sources WHERE name = %s",
                          [source])
        return SyncTimes(started=rows[0]["sync_started"], finished=rows[0]["last_run"]
                         ) if rows else None

    def record_sync_started(self: _Base, source: str) -> None:
        """A sync of the source begins (under its lease)."""
        with self._transaction() as connection:
            connection.execute("UPDATE sources SET sync_started = %s WHERE name = %s",
                               [now_iso(), source])

    def record_sync(self: _Base, outcome: SyncOutcome, every_seconds: float | None) -> None:
        ended = datetime.now(UTC)
        now, next_run = iso_text(ended), next_run_after(ended, every_seconds)
        with self._transaction() as connection:
            connection.execute(
                "UPDATE sources SET last_run = %s, counts = %s, next_run = %s, last_error = %s, "
                "last_success = CASE WHEN %s THEN %s ELSE last_success END WHERE name = %s",
                [now, json.dumps(outcome.counts()), next_run, outcome.error, outcome.ok, now,
                 outcome.name])

    def source_sync_state(self: _Base, source: str) -> dict[str, str]:
        """What the source's kind keeps between syncs (a delta link), {} before the first."""
        value = self._value("SELECT sync_state FROM sources WHERE name = %s", [source])
        return dict(json.loads(value)) if value else {}

    def save_source_sync_state(self: _Base, source: str, state: dict[str, str]) -> None:
        with self._transaction() as connection:
            connection.execute("UPDATE sources SET sync_state = %s WHERE name = %s",
                               [json.dumps(state), source])

    def web_items(self: _Base, source: str) -> dict[str, WebItem]:
        return {row["item"]: WebItem(url=row["item"], document_id=row["document_id"],
                                     etag=row["etag"], last_modified=row["last_modified"],
                                     links=json.loads(row["links"] or "[]"))
                for row in self._rows("SELECT * FROM source_items WHERE source = %s", [source])}

    def save_web_item(self: _Base, source: str, item: WebItem) -> None:
        with self._transaction() as connection:
            connection.execute(*upsert_sql("source_items", {
                "source": source, "item": item.url, "document_id": item.document_id,
                "etag": item.etag, "last_modified": item.last_modified,
                "links": json.dumps(item.links), "seen_at": now_iso()}, ["source", "item"]))

    def forget_web_item(self: _Base, source: str, url: str) -> None:
        with self._transaction() as connection:
            connection.execute("DELETE FROM source_items WHERE source = %s AND item = %s",
                               [source, url])

    def source_document_ids(self: _Base, source: str) -> dict[str, str]:
        return {str(row["source_path"]): str(row["document_id"]) for row in self._rows(
            "SELECT source_path, document_id FROM documents WHERE source = %s", [source])}

    def claim_lease(self: _Base, name: str, holder: str, seconds: float) -> bool:
        """Take the named lease unless another holder has it and it has not expired."""
        now = datetime.now(UTC)
        with self._transaction() as connection:
            connection.execute("INSERT INTO leases (name, holder, expires_at) "
                               "VALUES (%s, '', '') ON CONFLICT DO NOTHING", [name])
            cursor = connection.execute(
                "UPDATE leases SET holder = %s, expires_at = %s WHERE name = %s "
                "AND (holder = '' OR holder = %s OR expires_at < %s)",
                [holder, iso_text(now + timedelta(seconds=seconds)), name, holder, iso_text(now)])
            return bool(cursor.rowcount == 1)

    def release_lease(self: _Base, name: str, holder: str) -> None:
        with self._transaction() as connection:
            connection.execute("UPDATE leases SET holder = '', expires_at = '' "
                               "WHERE name = %s AND holder = %s", [name, holder])

    def lease_rows(self: _Base) -> Iterator[dict[str, Any]]:
        yield from self._rows("SELECT * FROM leases ORDER BY name")
