"""The PostgreSQL store's durable inbox: events stored before the platform is acked, their
answers, deliveries, and the ack path's lookups. Same semantics as the SQLite store's."""

from __future__ import annotations

import time
from concurrent.futures import Future
from typing import Any, Protocol

from psycopg.errors import DeadlockDetected

from docassist.core.errors import StorageBusyError
from docassist.core.messages import ChatMessage
from docassist.core.ports import InboxBacklog, InboxEvent, RateCheck
from docassist.core.results import TurnResult
from docassist.storage.group_commit import GroupCommit
from docassist.storage.limits import STORAGE_RETRY_BACKOFF_SECONDS, STORAGE_WRITE_ATTEMPTS
from docassist.storage.postgres.claims import count_in
from docassist.storage.postgres.connection import Qmark, now_iso
from docassist.storage.privacy import redact_inbox_event


class _Base(Protocol):
    save_raw: bool
    _acks: GroupCommit[list[Any], int | None]

    def _transaction(self) -> Any: ...

    def _rows(self, sql: str, params: Any = ()) -> list[dict[str, Any]]: ...

    def _value(self, sql: str, params: Any = ()) -> Any: ...


class InboxRows:
    """Inbox events (mixed into PostgresStore)."""

    def enqueue(self: _Base, message: ChatMessage, dedupe_key: str | None = None,
                rate: RateCheck | None = None) -> int | None:
        """The ack path: returns once the row is committed, in a transaction shared with the
        events that arrived meanwhile (group commit, as on SQLite); `rate` is counted in it."""
        return self._acks.submit([message, dedupe_key, rate])

    def enqueue_soon(self: _Base, message: ChatMessage, dedupe_key: str | None = None,
                     rate: RateCheck | None = None) -> Future[int | None]:
        """`enqueue` for a caller that must not block: the group commit's writer thread
        leads the transaction when no blocking caller does."""
        return self._acks.submit_soon([message, dedupe_key, rate])

    def _insert_inbox_rows(self: _Base, rows: list[list[Any]]) -> list[int | None]:
        """One transaction for the batch, rows in arrival order (ids keep each conversation's
        order). Two replicas storing the same events in another order (a platform's retries)
        can deadlock on each other's keys; PostgreSQL then cancels one, which is tried again
        and finds the other's rows. Not at once: the other transaction goes on only when it
        wakes, and a retry that takes a key before then can deadlock with it again (seen on a
        loaded machine), so each retry first waits a little longer."""
        pause = STORAGE_RETRY_BACKOFF_SECONDS
        for attempt in range(1, STORAGE_WRITE_ATTEMPTS + 1):
            try:
                return _insert_batch(self, rows)
            except StorageBusyError as error:
                if attempt == STORAGE_WRITE_ATTEMPTS or not isinstance(error.__cause__,
                                                                       DeadlockDetected):
                    raise
            time.sleep(pause)
            pause *= 2
        raise AssertionError("unreachable")

    def inbox_seen(self: _Base, platform: str, event_id: str, dedupe_key: str | None) -> bool:
        return self._value(
            "SELECT 1 FROM inbox WHERE platform = %s AND (event_id = %s OR dedupe_key = %s) "
            "LIMIT 1", [platform, event_id, dedupe_key]) is not None

    def conversation_known(self: _Base, conversation_id: str) -> bool:
        """A committed turn, or a stored event that runs one (a refusal does not count)."""
        return self._value(
            "SELECT 1 FROM conversations WHERE conversation_id = %s UNION ALL "
            "SELECT 1 FROM inbox WHERE conversation_id = %s AND refusal IS NULL LIMIT 1",
            [conversation_id, conversation_id]) is not None

    def unfinished(self: _Base) -> list[InboxEvent]:
        rows = self._rows("SELECT * FROM inbox WHERE status IN ('pending', 'answered') "
                          "ORDER BY id")
        return [InboxEvent(
            id=row["id"], platform=row["platform"], event_id=row["event_id"],
            conversation_id=row["conversation_id"],
            message=ChatMessage.model_validate_json(row["message"]), status=row["status"],
            result=TurnResult.model_validate_json(row["result"]) if row["result"] else None,
            attempts=row["attempts"]) for row in rows]

    def inbox_backlog(self: _Base) -> InboxBacklog:
        """Events stored and not yet finished, and when the oldest of them arrived."""
        [row] = self._rows("SELECT COUNT(*) AS pending, MIN(received_at) AS oldest FROM inbox "
                           "WHERE status IN ('pending', 'answered')")
        return InboxBacklog(pending=int(row["pending"]), oldest_received_at=row["oldest"])

    def record_answer(self: _Base, inbox_id: int, result: TurnResult | None) -> None:
        with self._transaction() as connection:
            connection.execute("UPDATE inbox SET status = 'answered', result = %s WHERE id = %s "
                               "AND status = 'pending'",
                               [result.model_dump_json() if result else None, inbox_id])

    def finish(self: _Base, inbox_id: int, status: str, error: str | None = None) -> None:
        """Mark an event done or failed and release its claim; without `save_raw` it keeps
        ids and hashes only."""
        with self._transaction() as connection:
            connection.execute(
                "UPDATE inbox SET status = %s, error = COALESCE(%s, error), finished_at = %s, "
                "claimed_by = NULL, claim_expires = NULL WHERE id = %s",
                [status, error, now_iso(), inbox_id])
            if not self.save_raw:
                redact_inbox_event(Qmark(connection), inbox_id)

    def delivery_failed(self: _Base, inbox_id: int, error: str) -> int:
        with self._transaction() as connection:
            row = connection.execute(
                "UPDATE inbox SET attempts = attempts + 1, error = %s WHERE id = %s "
                "RETURNING attempts", [error, inbox_id]).fetchone()
        return int(row[0]) if row else 0

    def inbox_rows(self: _Base) -> list[dict[str, Any]]:
        return self._rows("SELECT * FROM inbox ORDER BY id")


def _insert_batch(store: _Base, rows: list[list[Any]]) -> list[int | None]:
    ids: list[int | None] = []
    with store._transaction() as connection:
        for message, dedupe_key, rate in rows:
            if rate is not None:  # counted with the insert, one transaction
                message = count_in(connection, rate, message)
            key = message.key
            notice = message.notice
            refusal = notice.kind if notice is not None and notice.replaces_turn else None
            found = connection.execute(
                "INSERT INTO inbox (platform, event_id, dedupe_key, conversation_id, "
                "message, status, attempts, received_at, refusal) "
                "VALUES (%s, %s, %s, %s, %s, 'pending', 0, %s, %s) "
                "ON CONFLICT DO NOTHING RETURNING id",
                [key.platform, message.event_id, dedupe_key, key.conversation_id,
                 message.model_dump_json(), now_iso(), refusal]).fetchone()
            ids.append(None if found is None else int(found[0]))
    return ids
