"""The stores' part for stale-answer notes: recorded by a sync, claimed and delivered by the
serving processes (a claim with an expiry, so a process that died mid-delivery frees it),
and where each Teams conversation is reached.

A mixin of both stores (written once over dialect.py). A claim locks the rows it takes, which
PostgreSQL picks with SKIP LOCKED: replicas claiming together never get one note twice.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from docassist.core.messages import ConversationKey
from docassist.core.stale import (
    DocumentChange,
    StaleNote,
    cited_sources,
    note_collection,
    version_of,
)
from docassist.core.state import ConversationState
from docassist.storage.connection import iso_text, now_iso
from docassist.storage.dialect import SqlConnection, SqlStore
from docassist.storage.limits import STALE_NOTE_ATTEMPTS

_NOTE_COLUMNS = ["conversation_id", "platform", "workspace", "channel", "thread", "document_id",
                 "cited_version", "title", "change", "changed_at", "collection", "status",
                 "attempts"]


class StaleRows:
    """Stale-answer notes and Teams conversation addresses (mixed into Store and
    PostgresStore)."""

    def record_stale_notes(self: SqlStore, changes: dict[str, DocumentChange],
                           titles: dict[str, str], active_days: int,
                           collections: dict[str, str] | None = None) -> int:
        """A note for every thread active in the last `active_days` whose latest answer cited
        a version of a changed document that is no longer current; returns how many are new.
        Each note keeps the cited version's collection (`note_collection`)."""
        if not changes:
            return 0
        now = datetime.now(UTC)
        since = iso_text(now - timedelta(days=active_days))
        insert = self.dialect.insert_ignoring("stale_notes", _NOTE_COLUMNS)
        added = 0
        with self._write() as connection:
            rows = connection.execute(
                "SELECT conversation_id, platform, workspace, channel, thread, state "
                "FROM conversations WHERE updated_at >= ?", [since]).fetchall()
            for conversation_id, platform, workspace, channel, thread, state_json in rows:
                state = ConversationState.model_validate_json(state_json)
                for source in cited_sources(state):
                    change = changes.get(source.document_id)
                    if change is None or _is_current(connection, source.chunk_id):
                        continue
                    added += connection.execute(insert, [
                        conversation_id, platform, workspace, channel, thread,
                        source.document_id, version_of(source.chunk_id),
                        titles.get(source.document_id, source.title), str(change), iso_text(now),
                        note_collection(source, collections), "pending", 0]).rowcount
        return added

    def claim_stale_notes(self: SqlStore, platform: str, holder: str, seconds: float,
                          limit: int) -> list[StaleNote]:
        """Pending notes of a platform (and ones whose claim expired), claimed for `holder`,
        oldest first."""
        now = datetime.now(UTC)
        with self._write() as connection:
            rows = connection.execute(
                "SELECT id, platform, workspace, channel, thread, document_id, title, change, "
                "changed_at, collection FROM stale_notes WHERE platform = ? AND (status = "
                "'pending' OR (status = 'claimed' AND claim_expires < ?)) ORDER BY id LIMIT ?"
                + self.dialect.skip_locked, [platform, iso_text(now), limit]).fetchall()
            # Nothing to claim writes nothing (a read-only database stays quiet).
            connection.executemany(
                "UPDATE stale_notes SET status = 'claimed', claimed_by = ?, claim_expires = ? "
                "WHERE id = ?", [[holder, iso_text(now + timedelta(seconds=seconds)), row[0]]
                                 for row in rows])
        return [StaleNote(note_id=row[0], key=ConversationKey(
                    platform=row[1], workspace=row[2], channel=row[3], thread=row[4]),
                    document_id=row[5], title=row[6], change=DocumentChange(row[7]),
                    changed_at=row[8], collection=row[9]) for row in rows]

    def note_delivered(self: SqlStore, note_id: int) -> None:
        with self._write() as connection:
            connection.execute("UPDATE stale_notes SET status = 'delivered', delivered_at = ? "
                               "WHERE id = ?", [now_iso(), note_id])

    def note_failed(self: SqlStore, note_id: int, error: str) -> None:
        """Back to pending for another try; given up after STALE_NOTE_ATTEMPTS."""
        with self._write() as connection:
            connection.execute(
                "UPDATE stale_notes SET attempts = attempts + 1, error = ?, status = CASE WHEN "
                "attempts + 1 >= ? THEN 'failed' ELSE 'pending' END WHERE id = ?",
                [error[:500], STALE_NOTE_ATTEMPTS, note_id])

    def stale_note(self: SqlStore, note_id: int) -> dict[str, Any] | None:
        rows = self._read("SELECT * FROM stale_notes WHERE id = ?", [note_id])
        return rows[0] if rows else None

    def stale_note_rows(self: SqlStore) -> list[dict[str, Any]]:
        return self._read("SELECT * FROM stale_notes ORDER BY id")

    def remember_address(self: SqlStore, conversation_id: str, reference: str) -> None:
        with self._write() as connection:
            connection.execute(self.dialect.upsert(
                "conversation_addresses", ["conversation_id", "reference", "updated_at"],
                ["conversation_id"]), [conversation_id, reference, now_iso()])

    def address_of(self: SqlStore, conversation_id: str) -> str | None:
        rows = self._read("SELECT reference FROM conversation_addresses WHERE "
                          "conversation_id = ?", [conversation_id])
        return str(rows[0]["reference"]) if rows else None


def _is_current(connection: SqlConnection, chunk_id: str) -> bool:
    row = connection.execute("SELECT superseded_at FROM chunks WHERE chunk_id = ?",
                             [chunk_id]).fetchone()
    return row is not None and row[0] is None
