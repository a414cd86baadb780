"""The SQLite store's durable inbox: events stored on the ack path (group-committed, with
their rate-limit arrival), answers recorded, events finished (mixed into Store;
postgres/inbox.py is its twin; claims.py holds the claims)."""

from __future__ import annotations

import sqlite3
import threading
from concurrent.futures import Future
from contextlib import AbstractContextManager
from typing import Any, Protocol

from sqlite_utils import Database

from docassist.core.messages import ChatMessage
from docassist.core.ports import InboxBacklog, InboxEvent, RateCheck
from docassist.core.results import TurnResult
from docassist.storage.connection import now_iso
from docassist.storage.group_commit import GroupCommit
from docassist.storage.privacy import redact_inbox_event
from docassist.storage.shared_writes import SharesWrites


class _StoreParts(SharesWrites, Protocol):
    db: Database
    save_raw: bool
    _lock: threading.RLock
    _seen_lock: threading.Lock | threading.RLock
    _seen_connection: sqlite3.Connection
    _acks: GroupCommit[list[Any], int | None]

    def _transaction(self) -> AbstractContextManager[sqlite3.Connection]: ...

    def count_in(self, connection: sqlite3.Connection, rate: RateCheck,
                 message: ChatMessage) -> ChatMessage: ...


class InboxRows:
    """Inbox events from arrival to finish (mixed into Store)."""

    def enqueue(self: _StoreParts, message: ChatMessage, dedupe_key: str | None = None,
                rate: RateCheck | None = None) -> int | None:
        """The ack path: returns once the row is committed, in a transaction shared with the
        events that arrived meanwhile (one fsync for a burst). With `rate`, the arrival is
        counted in that transaction too (see ClaimRows.count_in)."""
        return self._acks.submit([message, dedupe_key, rate])

    def enqueue_soon(self: _StoreParts, message: ChatMessage, dedupe_key: str | None = None,
                     rate: RateCheck | None = None) -> Future[int | None]:
        """`enqueue` for a caller that must not block: the group commit's writer thread
        leads the transaction when no blocking caller does."""
        return self._acks.submit_soon([message, dedupe_key, rate])

    def _insert_inbox_rows(self: _StoreParts, rows: list[list[Any]]) -> list[int | None]:
        ids: list[int | None] = []
        with self._transaction() as connection:
            for message, dedupe_key, rate in rows:
                if rate is not None:
                    message = self.count_in(connection, rate, message)
                key = message.key
                notice = message.notice
                refusal = notice.kind if notice is not None and notice.replaces_turn else None
                cursor = connection.execute(
                    "INSERT OR IGNORE INTO inbox (platform, event_id, dedupe_key, "
                    "conversation_id, message, status, attempts, received_at, refusal) "
                    "VALUES (?, ?, ?, ?, ?, 'pending', 0, ?, ?)",
                    [key.platform, message.event_id, dedupe_key, key.conversation_id,
                     message.model_dump_json(), now_iso(), refusal])
                ids.append(cursor.lastrowid if cursor.rowcount == 1 else None)
        return ids

    def inbox_seen(self: _StoreParts, platform: str, event_id: str, dedupe_key: str | None) -> bool:
        """True when this event (or the same message as another event) is already stored."""
        with self._seen_lock:
            row = self._seen_connection.execute(
                "SELECT 1 FROM inbox WHERE platform = ? AND (event_id = ? OR dedupe_key = ?)",
                [platform, event_id, dedupe_key]).fetchone()
        return row is not None

    def conversation_known(self: _StoreParts, conversation_id: str) -> bool:
        """True when the conversation has a committed turn or a stored event that runs one
        (a refusal does not make a thread the bot's): a thread the bot takes part in. Read on
        the ack path's connection, so it never waits for writers."""
        with self._seen_lock:
            row = self._seen_connection.execute(
                "SELECT 1 FROM conversations WHERE conversation_id = ? UNION ALL "
                "SELECT 1 FROM inbox WHERE conversation_id = ? AND refusal IS NULL LIMIT 1",
                [conversation_id, conversation_id]).fetchone()
        return row is not None

    def unfinished(self: _StoreParts) -> list[InboxEvent]:
        with self._lock:
            rows = list(self.db.query(
                "SELECT * FROM inbox WHERE status IN ('pending', 'answered') ORDER BY id"))
        return [InboxEvent(
            id=row["id"], platform=row["platform"], event_id=row["event_id"],
            conversation_id=row["conversation_id"],
            message=ChatMessage.model_validate_json(row["message"]), status=row["status"],
            result=TurnResult.model_validate_json(row["result"]) if row["result"] else None,
            attempts=row["attempts"]) for row in rows]

    def inbox_backlog(self: _StoreParts) -> InboxBacklog:
        """Events stored and not yet finished, and when the oldest of them arrived."""
        with self._lock:
            count, oldest = self.db.execute(
                "SELECT COUNT(*), MIN(received_at) FROM inbox "
                "WHERE status IN ('pending', 'answered')").fetchone()
        return InboxBacklog(pending=int(count), oldest_received_at=oldest)

    def record_answer(self: _StoreParts, inbox_id: int, result: TurnResult | None) -> None:
        """A read first: a committed turn has recorded its answer already (commit_turn), and
        then no write transaction (nor its fsync) is taken."""
        with self._seen_lock:
            row = self._seen_connection.execute(
                "SELECT 1 FROM inbox WHERE id = ? AND status = 'pending'", [inbox_id]).fetchone()
        if row is None:
            return
        with self._transaction() as connection:
            connection.execute(
                "UPDATE inbox SET status = 'answered', result = ? WHERE id = ? "
                "AND status = 'pending'", [result.model_dump_json() if result else None, inbox_id])

    def finish(self: _StoreParts, inbox_id: int, status: str, error: str | None = None) -> None:
        """Mark an event done or failed, and release its claim (the conversation's next
        event becomes claimable); without `save_raw` it keeps ids and hashes only."""
        finished_at, redact = now_iso(), not self.save_raw

        def write(connection: sqlite3.Connection) -> None:
            connection.execute(
                "UPDATE inbox SET status = ?, error = COALESCE(?, error), finished_at = ?, "
                "claimed_by = NULL, claim_expires = NULL WHERE id = ?",
                [status, error, finished_at, inbox_id])
            if redact:
                redact_inbox_event(connection, inbox_id)

        self._shared_write(write)

    def delivery_failed(self: _StoreParts, inbox_id: int, error: str) -> int:
        with self._transaction() as connection:
            connection.execute(
                "UPDATE inbox SET attempts = attempts + 1, error = ? WHERE id = ?",
                [error, inbox_id])
            row = connection.execute("SELECT attempts FROM inbox WHERE id = ?",
                                     [inbox_id]).fetchone()
        return int(row[0])

    def inbox_rows(self: _StoreParts) -> list[dict[str, Any]]:
        with self._lock:
            return list(self.db.query("SELECT * FROM inbox ORDER BY id"))
