"""The store's part for work shared by processes on one database: inbox claims and rate
limits (mixed into Store; PostgreSQL implements the same methods).

Claims: an unfinished inbox event is answered by the process that claimed it. A claim is a
holder and an expiry (epoch seconds) on the row, taken in one write transaction (SQLite:
BEGIN IMMEDIATE, so claimers are serialized) with a conditional UPDATE. Only the oldest
unfinished event of a conversation can be claimed, and none while another event of that
conversation is claimed and the claim is live: turns of one conversation run one at a time,
in arrival order, whichever process runs them. `finish` clears the claim.

Rate limits: every arrival is one row; the check is one INSERT … SELECT that counts the
window and stores the verdict (`retry_at`, 0 = admitted), so two processes cannot both take
the last slot (SQLite serializes writers). A repeated arrival id gets its stored verdict.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from contextlib import AbstractContextManager
from typing import Any, Final, Protocol

from sqlite_utils import Database

from docassist.core.messages import ChatMessage
from docassist.core.ports import InboxEvent, RateCheck
from docassist.core.results import TurnResult
from docassist.storage.group_commit import GroupCommit
from docassist.storage.shared_writes import SharesWrites

UNFINISHED: Final = "('pending', 'answered')"

CLAIMABLE: Final = f"""
SELECT i.id FROM inbox i
WHERE i.status IN {UNFINISHED} AND (:platform = '' OR i.platform = :platform)
  AND (i.claimed_by IS NULL OR i.claim_expires < :now)
  AND NOT EXISTS (
    SELECT 1 FROM inbox o
    WHERE o.conversation_id = i.conversation_id AND o.status IN {UNFINISHED}
      AND (o.id < i.id OR (o.claimed_by IS NOT NULL AND o.claim_expires >= :now)))
ORDER BY i.id LIMIT :limit"""
"""The oldest unfinished event of each conversation with no live claim on it."""

COUNT_ARRIVAL: Final = """
INSERT INTO rate_arrivals (arrival_id, user_key, at, retry_at)
SELECT :arrival, :user, :now,
  CASE WHEN u.n >= :per_user AND g.n >= :global_limit THEN max(u.first, g.first) + :window
       WHEN u.n >= :per_user THEN u.first + :window
       WHEN g.n >= :global_limit THEN g.first + :window
       ELSE 0 END
FROM (SELECT count(*) AS n, min(at) AS first FROM rate_arrivals
      WHERE user_key = :user AND retry_at = 0 AND at > :cutoff) AS u,
     (SELECT count(*) AS n, min(at) AS first FROM rate_arrivals
      WHERE retry_at = 0 AND at > :cutoff) AS g
WHERE true
ON CONFLICT (arrival_id) DO UPDATE SET arrival_id = excluded.arrival_id
RETURNING retry_at"""
"""One statement per check: count the window, decide, store the verdict; an arrival id seen
before keeps (and returns) its first verdict. `WHERE true` keeps SQLite's parser from
reading ON CONFLICT as a join constraint."""

UNLIMITED: Final = 2**62
"""Stands for a limit of 0 (unlimited) in COUNT_ARRIVAL."""


class _StoreParts(SharesWrites, Protocol):
    db: Database
    _lock: threading.RLock
    _seen_lock: threading.Lock | threading.RLock
    _seen_connection: sqlite3.Connection

    def _transaction(self) -> AbstractContextManager[sqlite3.Connection]: ...

    def _reading(self) -> AbstractContextManager[sqlite3.Connection]: ...


def inbox_event(row: dict[str, Any]) -> InboxEvent:
    return InboxEvent(
        id=row["id"], platform=row["platform"], event_id=row["event_id"],
        conversation_id=row["conversation_id"],
        message=ChatMessage.model_validate_json(row["message"]), status=row["status"],
        result=TurnResult.model_validate_json(row["result"]) if row["result"] else None,
        attempts=row["attempts"])


class ClaimRows:
    """Inbox claims and rate-limit arrivals (mixed into Store)."""

    _arrivals: GroupCommit[dict[str, Any], float | None]

    def claim(self: _StoreParts, platform: str, holder: str, lease_seconds: float,
              limit: int) -> list[InboxEvent]:
        """Claim up to `limit` of the platform's events for `holder` until now +
        `lease_seconds`, oldest first. A read on the ack path's connection comes first, so an
        idle poll takes no write lock."""
        now = time.time()
        if limit <= 0:
            return []
        query = {"now": now, "limit": 1, "platform": platform}
        with self._seen_lock:
            if self._seen_connection.execute(CLAIMABLE, query).fetchone() is None:
                return []

        def write(connection: sqlite3.Connection) -> list[dict[str, Any]]:
            ids = [row[0] for row in connection.execute(
                CLAIMABLE, {**query, "limit": limit}).fetchall()]
            if not ids:
                return []
            marks = ", ".join("?" for _ in ids)
            connection.execute(
                f"UPDATE inbox SET claimed_by = ?, claim_expires = ? WHERE id IN ({marks}) "
                "AND (claimed_by IS NULL OR claim_expires < ?)",
                [holder, now + lease_seconds, *ids, now])
            cursor = connection.execute(
                f"SELECT * FROM inbox WHERE id IN ({marks}) AND claimed_by = ? ORDER BY id",
                [*ids, holder])
            names = [column[0] for column in cursor.description]
            return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

        return [inbox_event(row) for row in self._shared_write(write)]

    def renew_claims(self: _StoreParts, holder: str, ids: list[int],
                     lease_seconds: float) -> set[int]:
        """Extend this holder's claims on `ids`; returns the ids it still holds (a claim
        that expired and was taken by another process is lost)."""
        if not ids:
            return set()
        marks = ", ".join("?" for _ in ids)
        with self._transaction() as connection:
            connection.execute(
                f"UPDATE inbox SET claim_expires = ? WHERE claimed_by = ? AND id IN ({marks}) "
                f"AND status IN {UNFINISHED}", [time.time() + lease_seconds, holder, *ids])
            held = connection.execute(
                f"SELECT id FROM inbox WHERE claimed_by = ? AND id IN ({marks})",
                [holder, *ids]).fetchall()
        return {int(row[0]) for row in held}

    def holds(self: _StoreParts, holder: str, inbox_id: int, seconds: float) -> bool:
        with self._reading() as connection:  # a read connection: no wait for our writers
            row = connection.execute(
                f"SELECT 1 FROM inbox WHERE id = ? AND claimed_by = ? AND claim_expires >= ? "
                f"AND status IN {UNFINISHED}", [inbox_id, holder, time.time() + seconds]
            ).fetchone()
        return row is not None

    def release_claims(self: _StoreParts, holder: str, ids: list[int]) -> None:
        if not ids:
            return
        marks = ", ".join("?" for _ in ids)
        with self._transaction() as connection:
            connection.execute(
                "UPDATE inbox SET claimed_by = NULL, claim_expires = NULL "
                f"WHERE claimed_by = ? AND id IN ({marks})", [holder, *ids])

    def stored_event(self: _StoreParts, inbox_id: int) -> InboxEvent | None:
        with self._lock:
            found = list(self.db.query("SELECT * FROM inbox WHERE id = ?", [inbox_id]))
        return inbox_event(found[0]) if found else None

    def claim_rows(self: _StoreParts) -> list[dict[str, Any]]:
        """Every inbox row's id, status and claim (tests, diagnostics)."""
        with self._lock:
            return list(self.db.query("SELECT id, event_id, status, claimed_by, claim_expires "
                                      "FROM inbox ORDER BY id"))

    # --- rate limits -------------------------------------------------------------------

    def count_arrival(self, user_key: str, arrival_id: str, per_user: int,
                      global_limit: int, window: float) -> float:
        """Count an arrival against the limits (0 = unlimited); 0.0 when it was admitted,
        else the epoch second from which a retry would be. Group-committed: this is on the
        ack path, and a burst shares a transaction."""
        now = time.time()
        verdict = self._arrivals.submit({
            "arrival": arrival_id, "user": user_key, "now": now, "cutoff": now - window,
            "window": window, "per_user": per_user or UNLIMITED,
            "global_limit": global_limit or UNLIMITED})
        return float(verdict or 0.0)

    @staticmethod
    def count_in(connection: sqlite3.Connection, rate: RateCheck,
                 message: ChatMessage) -> ChatMessage:
        """Count an arrival inside the caller's transaction (the event's own insert); the
        message to store: `rate.limited(...)` when it is over a limit."""
        now = time.time()
        rate.retry_at = float(connection.execute(COUNT_ARRIVAL, {
            "arrival": rate.arrival_id, "user": rate.user_key, "now": now,
            "cutoff": now - rate.window, "window": rate.window,
            "per_user": rate.per_user or UNLIMITED,
            "global_limit": rate.global_limit or UNLIMITED}).fetchone()[0])
        # Arrivals older than two windows decide nothing any more.
        connection.execute("DELETE FROM rate_arrivals WHERE at < ?", [now - 2 * rate.window])
        return rate.limited(rate.retry_at) if rate.retry_at else message

    def _count_arrivals(self: _StoreParts, checks: list[dict[str, Any]]) -> list[float | None]:
        verdicts: list[float | None] = []
        with self._transaction() as connection:
            for check in checks:
                verdicts.append(float(connection.execute(COUNT_ARRIVAL, check).fetchone()[0]))
            # Arrivals older than two windows decide nothing any more.
            oldest = min(check["cutoff"] for check in checks) - max(
                check["window"] for check in checks)
            connection.execute("DELETE FROM rate_arrivals WHERE at < ?", [oldest])
        return verdicts
