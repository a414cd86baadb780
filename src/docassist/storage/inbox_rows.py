"""The stores' durable inbox: events stored on the ack path (group-committed, with their
rate-limit arrival), answers recorded, events finished, deliveries that failed.

A mixin of both stores (written once over dialect.py); claims.py holds the claims.
"""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any, Final

from docassist.core.messages import ChatMessage
from docassist.core.ports import Hold, InboxBacklog, InboxEvent, RateCheck
from docassist.core.results import TurnResult
from docassist.storage.claims import count_in, hold_in, inbox_event
from docassist.storage.connection import now_iso
from docassist.storage.dialect import SqlConnection, SqlStore
from docassist.storage.group_commit import GroupCommit
from docassist.storage.privacy import redact_inbox_event

INBOX_COLUMNS: Final = ("platform", "event_id", "dedupe_key", "conversation_id", "message",
                        "status", "attempts", "received_at", "refusal")


def _item(message: ChatMessage, dedupe_key: str | None, rate: RateCheck | None,
          hold: Hold | None) -> list[Any]:
    """An event as the group commit takes it: message, dedupe key, rate check, and its hold
    only when there is one."""
    return [message, dedupe_key, rate] if hold is None else [message, dedupe_key, rate, hold]


class InboxRows:
    """Inbox events from arrival to finish (mixed into Store and PostgresStore)."""

    _acks: GroupCommit[list[Any], int | None]

    def enqueue(self, message: ChatMessage, dedupe_key: str | None = None,
                rate: RateCheck | None = None, hold: Hold | None = None) -> int | None:
        """The ack path: returns once the row is committed, in a transaction shared with the
        events that arrived meanwhile (one fsync for a burst). With `rate`, the arrival is
        counted in that transaction too (see claims.count_in); with `hold`, claimed in it
        when it is its conversation's oldest unfinished event (claims.hold_in)."""
        return self._acks.submit(_item(message, dedupe_key, rate, hold))

    def enqueue_soon(self, message: ChatMessage, dedupe_key: str | None = None,
                     rate: RateCheck | None = None,
                     hold: Hold | None = None) -> Future[int | None]:
        """`enqueue` for a caller that must not block: the group commit's writer thread
        leads the transaction when no blocking caller does."""
        return self._acks.submit_soon(_item(message, dedupe_key, rate, hold))

    def _insert_inbox_rows(self: SqlStore, rows: list[list[Any]]) -> list[int | None]:
        """One transaction for the batch, rows in arrival order (ids keep each conversation's
        order); a repeated event stores nothing and gets None."""
        dialect = self.dialect
        insert = dialect.insert_ignoring("inbox", INBOX_COLUMNS) + " RETURNING id"

        def write(connection: SqlConnection) -> list[int | None]:
            ids: list[int | None] = []
            for message, dedupe_key, rate, *held in rows:
                if rate is not None:  # counted with the insert, one transaction
                    message = count_in(connection, dialect, rate, message)
                key = message.key
                notice = message.notice
                refusal = notice.kind if notice is not None and notice.replaces_turn else None
                found = connection.execute(insert, [
                    key.platform, message.event_id, dedupe_key, key.conversation_id,
                    message.model_dump_json(), "pending", 0, now_iso(), refusal]).fetchone()
                ids.append(None if found is None else int(found[0]))
                if found is not None and held:
                    hold_in(connection, dialect, int(found[0]), key.conversation_id, held[0])
            return ids

        return self._write_retried(write)

    def inbox_seen(self: SqlStore, platform: str, event_id: str, dedupe_key: str | None) -> bool:
        """True when this event (or the same message as another event) is already stored."""
        return bool(self._read_ack_path(
            "SELECT 1 FROM inbox WHERE platform = ? AND (event_id = ? OR dedupe_key = ?) "
            "LIMIT 1", [platform, event_id, dedupe_key]))

    def conversation_known(self: SqlStore, conversation_id: str) -> bool:
        """True when the conversation has a committed turn or a stored event that runs one
        (a refusal does not make a thread the bot's): a thread the bot takes part in."""
        return bool(self._read_ack_path(
            "SELECT 1 FROM conversations WHERE conversation_id = ? UNION ALL "
            "SELECT 1 FROM inbox WHERE conversation_id = ? AND refusal IS NULL LIMIT 1",
            [conversation_id, conversation_id]))

    def unfinished(self: SqlStore) -> list[InboxEvent]:
        return [inbox_event(row) for row in self._read(
            "SELECT * FROM inbox WHERE status IN ('pending', 'answered') ORDER BY id")]

    def inbox_backlog(self: SqlStore) -> InboxBacklog:
        """Events stored and not yet finished, and when the oldest of them arrived."""
        [row] = self._read("SELECT COUNT(*) AS pending, MIN(received_at) AS oldest FROM inbox "
                           "WHERE status IN ('pending', 'answered')")
        return InboxBacklog(pending=int(row["pending"]), oldest_received_at=row["oldest"])

    def record_answer(self: SqlStore, inbox_id: int, result: TurnResult | None) -> None:
        """A read first: a committed turn has recorded its answer already (commit_turn), and
        then no write transaction (nor its fsync) is taken."""
        if not self._read_ack_path("SELECT 1 FROM inbox WHERE id = ? AND status = 'pending'",
                                   [inbox_id]):
            return
        with self._write() as connection:
            connection.execute(
                "UPDATE inbox SET status = 'answered', result = ? WHERE id = ? "
                "AND status = 'pending'", [result.model_dump_json() if result else None, inbox_id])

    def finish(self: SqlStore, inbox_id: int, status: str, error: str | None = None) -> None:
        """Mark an event done or failed, and release its claim (the conversation's next
        event becomes claimable); without `save_raw` it keeps ids and hashes only."""
        finished_at, redact = now_iso(), not self.save_raw

        def write(connection: SqlConnection) -> None:
            connection.execute(
                "UPDATE inbox SET status = ?, error = COALESCE(?, error), finished_at = ?, "
                "claimed_by = NULL, claim_expires = NULL WHERE id = ?",
                [status, error, finished_at, inbox_id])
            if redact:
                redact_inbox_event(connection, inbox_id)

        self._shared_write(write)

    def delivery_failed(self: SqlStore, inbox_id: int, error: str) -> int:
        """One more failed delivery of the event's answer; how many there were (0 for an
        unknown event)."""
        with self._write() as connection:
            row = connection.execute(
                "UPDATE inbox SET attempts = attempts + 1, error = ? WHERE id = ? "
                "RETURNING attempts", [error, inbox_id]).fetchone()
        return int(row[0]) if row else 0

    def inbox_rows(self: SqlStore) -> list[dict[str, Any]]:
        return self._read("SELECT * FROM inbox ORDER BY id")
