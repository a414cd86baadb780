"""The PostgreSQL store's sources (configuration, sync state, web items, leases), stale-answer
notes and Teams addresses. Same semantics as storage/source_rows.py and stale_rows.py; claims
take rows with FOR UPDATE SKIP LOCKED, so replicas claiming together never get one note twice.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from docassist.core.errors import ConfigurationError
from docassist.core.messages import ConversationKey
from docassist.core.sources import (
    Source,
    SourceKind,
    SourceStatus,
    SyncOutcome,
    SyncTimes,
    next_run_after,
)
from docassist.core.stale import (
    DocumentChange,
    StaleNote,
    cited_sources,
    note_collection,
    version_of,
)
from docassist.core.state import ConversationState
from docassist.storage.connection import iso_text
from docassist.storage.limits import STALE_NOTE_ATTEMPTS
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


class StaleRowsPg:
    """Stale-answer notes and Teams conversation addresses (mixed into PostgresStore)."""

    def record_stale_notes(self: _Base, changes: dict[str, DocumentChange],
                           titles: dict[str, str], active_days: int,
                           collections: dict[str, str] | None = None) -> int:
        if not changes:
            return 0
        now = datetime.now(UTC)
        added = 0
        with self._transaction() as connection:
            rows = connection.execute(
                "SELECT conversation_id, platform, workspace, channel, thread, state "
                "FROM conversations WHERE updated_at >= %s",
                [iso_text(now - timedelta(days=active_days))]).fetchall()
            for conversation_id, platform, workspace, channel, thread, state_json in rows:
                state = ConversationState.model_validate_json(state_json)
                for source in cited_sources(state):
                    change = changes.get(source.document_id)
                    if change is None or connection.execute(
                            "SELECT 1 FROM chunks WHERE chunk_id = %s AND superseded_at IS NULL",
                            [source.chunk_id]).fetchone():
                        continue
                    added += connection.execute(
                        "INSERT INTO stale_notes (conversation_id, platform, workspace, channel, "
                        "thread, document_id, cited_version, title, change, changed_at, "
                        "collection, status, attempts) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, "
                        "%s, %s, %s, 'pending', 0) ON CONFLICT DO NOTHING",
                        [conversation_id, platform, workspace, channel, thread,
                         source.document_id, version_of(source.chunk_id),
                         titles.get(source.document_id, source.title), str(change),
                         iso_text(now), note_collection(source, collections)]).rowcount
        return added

    def claim_stale_notes(self: _Base, platform: str, holder: str, seconds: float,
                          limit: int) -> list[StaleNote]:
        now = datetime.now(UTC)
        with self._transaction() as connection:
            rows = connection.execute(
                "UPDATE stale_notes SET status = 'claimed', claimed_by = %s, claim_expires = %s "
                "WHERE id IN (SELECT id FROM stale_notes WHERE platform = %s AND "
                "(status = 'pending' OR (status = 'claimed' AND claim_expires < %s)) "
                "ORDER BY id LIMIT %s FOR UPDATE SKIP LOCKED) RETURNING id, platform, "
                "workspace, channel, thread, document_id, title, change, changed_at, collection",
                [holder, iso_text(now + timedelta(seconds=seconds)), platform, iso_text(now), limit]
                ).fetchall()
        return [StaleNote(note_id=row[0], key=ConversationKey(
                    platform=row[1], workspace=row[2], channel=row[3], thread=row[4]),
                    document_id=row[5], title=row[6], change=DocumentChange(row[7]),
                    changed_at=row[8], collection=row[9]) for row in sorted(rows)]

    def note_delivered(self: _Base, note_id: int) -> None:
        with self._transaction() as connection:
            connection.execute("UPDATE stale_notes SET status = 'delivered', delivered_at = %s "
                               "WHERE id = %s", [now_iso(), note_id])

    def note_failed(self: _Base, note_id: int, error: str) -> None:
        with self._transaction() as connection:
            connection.execute(
                "UPDATE stale_notes SET attempts = attempts + 1, error = %s, status = CASE WHEN "
                "attempts + 1 >= %s THEN 'failed' ELSE 'pending' END WHERE id = %s",
                [error[:500], STALE_NOTE_ATTEMPTS, note_id])

    def stale_note(self: _Base, note_id: int) -> dict[str, Any] | None:
        rows = self._rows("SELECT * FROM stale_notes WHERE id = %s", [note_id])
        return rows[0] if rows else None

    def stale_note_rows(self: _Base) -> list[dict[str, Any]]:
        return self._rows("SELECT * FROM stale_notes ORDER BY id")

    def remember_address(self: _Base, conversation_id: str, reference: str) -> None:
        with self._transaction() as connection:
            connection.execute(*upsert_sql("conversation_addresses", {
                "conversation_id": conversation_id, "reference": reference,
                "updated_at": now_iso()}, ["conversation_id"]))

    def address_of(self: _Base, conversation_id: str) -> str | None:
        value = self._value("SELECT reference FROM conversation_addresses WHERE "
                            "conversation_id = %s", [conversation_id])
        return None if value is None else str(value)
