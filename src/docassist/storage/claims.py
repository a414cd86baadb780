"""The stores' part for work shared by processes on one database: inbox claims and rate
limits. A mixin of both stores (written once over dialect.py).

Claims: an unfinished inbox event is answered by the process that claimed it. A claim is a
holder and an expiry (epoch seconds) on the row, taken in one write transaction with a
conditional UPDATE. Only the oldest unfinished event of a conversation can be claimed, and
none while another event of that conversation is claimed and the claim is live: turns of one
conversation run one at a time, in arrival order, whichever process runs them. `finish`
clears the claim. Claimers take turns: SQLite's BEGIN IMMEDIATE serializes them; on
PostgreSQL READ COMMITTED would not (two replicas could each see the other's conversation
as unclaimed), so a claim first takes CLAIM_LOCK (Dialect.take_turn: claimers queue for a
few milliseconds, never for a turn), and SKIP LOCKED leaves rows another transaction is
updating (a finish, a renewal) to the next look.

Rate limits: every arrival is one row; the check is one INSERT … SELECT that counts the
window and stores the verdict (`retry_at`, 0 = admitted), under RATE_LOCK on PostgreSQL, so
two processes cannot both take the last slot. A repeated arrival id gets its stored verdict.
Checks are group-committed (the ack path waits for them).
"""

from __future__ import annotations

import time
from typing import Any, Final

from docassist.core.messages import ChatMessage
from docassist.core.ports import Hold, InboxEvent, RateCheck
from docassist.core.results import TurnResult
from docassist.storage.dialect import (
    Dialect,
    SqlConnection,
    SqlStore,
    marks,
    positional,
    rows_of,
    wait_for_turn,
)
from docassist.storage.group_commit import GroupCommit

CLAIM_LOCK: Final = 0x636C6169  # "clai": one claimer at a time, across replicas
RATE_LOCK: Final = 0x72617465  # "rate"

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
"""The oldest unfinished event of each conversation with no live claim on it (`:name`
parameters: see dialect.positional)."""

COUNT_ARRIVAL: Final = """
INSERT INTO rate_arrivals (arrival_id, user_key, at, retry_at)
SELECT :arrival, :user, :now,
  CASE WHEN u.n >= :per_user AND g.n >= :global_limit
         THEN CASE WHEN u.first > g.first THEN u.first ELSE g.first END + :window
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
reading ON CONFLICT as a join constraint; the later of the two window starts is a CASE, as
SQLite's max(a, b) and PostgreSQL's greatest(a, b) are spelled differently."""

UNLIMITED: Final = 2**62
"""Stands for a limit of 0 (unlimited) in COUNT_ARRIVAL."""


HOLD: Final = f"""
UPDATE inbox SET claimed_by = :holder, claim_expires = :until
WHERE id = :id AND NOT EXISTS (
  SELECT 1 FROM inbox o
  WHERE o.conversation_id = :conversation AND o.status IN {UNFINISHED} AND o.id <> :id
    AND (o.id < :id OR (o.claimed_by IS NOT NULL AND o.claim_expires >= :now)))"""
"""A new event claimed by the process that stores it, unless another event of its
conversation is unfinished and earlier, or claimed (then the claimers take it, in order),
as CLAIMABLE says."""


def hold_in(connection: SqlConnection, dialect: Dialect, inbox_id: int, conversation: str,
            hold: Hold) -> None:
    """Claim a just-inserted event for `hold.holder` in the transaction that stores it: no
    other process ever sees it unclaimed. It queues behind the claimers (CLAIM_LOCK), as a
    claim does: on PostgreSQL two replicas storing events of one conversation at once
    could otherwise both see no earlier one."""
    wait_for_turn(connection, dialect, CLAIM_LOCK)
    now = time.time()
    connection.execute(*positional(HOLD, {
        "holder": hold.holder, "until": now + hold.lease_seconds, "now": now, "id": inbox_id,
        "conversation": conversation}))


def inbox_event(row: dict[str, Any]) -> InboxEvent:
    return InboxEvent(
        id=row["id"], platform=row["platform"], event_id=row["event_id"],
        conversation_id=row["conversation_id"],
        message=ChatMessage.model_validate_json(row["message"]), status=row["status"],
        result=TurnResult.model_validate_json(row["result"]) if row["result"] else None,
        attempts=row["attempts"])


class ClaimRows:
    """Inbox claims and rate-limit arrivals (mixed into Store and PostgresStore)."""

    _arrivals: GroupCommit[dict[str, Any], float | None]

    def claim(self: SqlStore, platform: str, holder: str, lease_seconds: float,
              limit: int) -> list[InboxEvent]:
        """Claim up to `limit` of the platform's events for `holder` until now +
        `lease_seconds`, oldest first. A read on the ack path comes first, so an idle poll
        takes no write lock."""
        now = time.time()
        if limit <= 0:
            return []
        query = {"now": now, "limit": 1, "platform": platform}
        if not self._read_ack_path(*positional(CLAIMABLE, query)):
            return []
        dialect = self.dialect

        def write(connection: SqlConnection) -> list[dict[str, Any]]:
            wait_for_turn(connection, dialect, CLAIM_LOCK)
            sql, values = positional(CLAIMABLE, {**query, "limit": limit})
            ids = [row[0] for row in connection.execute(sql + dialect.skip_locked,
                                                        values).fetchall()]
            if not ids:
                return []
            return rows_of(connection.execute(
                f"UPDATE inbox SET claimed_by = ?, claim_expires = ? WHERE id IN ({marks(ids)}) "
                "AND (claimed_by IS NULL OR claim_expires < ?) RETURNING *",
                [holder, now + lease_seconds, *ids, now]))

        claimed = sorted(self._shared_write(write), key=lambda row: int(row["id"]))
        return [inbox_event(row) for row in claimed]

    def renew_claims(self: SqlStore, holder: str, ids: list[int],
                     lease_seconds: float) -> set[int]:
        """Extend this holder's claims on `ids`; returns the ids it still holds (a claim
        that expired and was taken by another process is lost)."""
        if not ids:
            return set()
        with self._write() as connection:
            connection.execute(
                f"UPDATE inbox SET claim_expires = ? WHERE claimed_by = ? AND id IN "
                f"({marks(ids)}) AND status IN {UNFINISHED}",
                [time.time() + lease_seconds, holder, *ids])
            held = connection.execute(
                f"SELECT id FROM inbox WHERE claimed_by = ? AND id IN ({marks(ids)})",
                [holder, *ids]).fetchall()
        return {int(row[0]) for row in held}

    def holds(self: SqlStore, holder: str, inbox_id: int, seconds: float) -> bool:
        return bool(self._read_apart(
            f"SELECT 1 FROM inbox WHERE id = ? AND claimed_by = ? AND claim_expires >= ? "
            f"AND status IN {UNFINISHED}", [inbox_id, holder, time.time() + seconds]))

    def release_claims(self: SqlStore, holder: str, ids: list[int]) -> None:
        if not ids:
            return
        with self._write() as connection:
            connection.execute(
                "UPDATE inbox SET claimed_by = NULL, claim_expires = NULL "
                f"WHERE claimed_by = ? AND id IN ({marks(ids)})", [holder, *ids])

    def stored_event(self: SqlStore, inbox_id: int) -> InboxEvent | None:
        found = self._read("SELECT * FROM inbox WHERE id = ?", [inbox_id])
        return inbox_event(found[0]) if found else None

    def claim_rows(self: SqlStore) -> list[dict[str, Any]]:
        """Every inbox row's id, status and claim (tests, diagnostics)."""
        return self._read("SELECT id, event_id, status, claimed_by, claim_expires "
                          "FROM inbox ORDER BY id")

    # --- rate limits -------------------------------------------------------------------

    def count_arrival(self, user_key: str, arrival_id: str, per_user: int,
                      global_limit: int, window: float) -> float:
        """Count an arrival against the limits (0 = unlimited); 0.0 when it was admitted,
        else the epoch second from which a retry would be. Group-committed: this is on the
        ack path, and a burst shares a transaction."""
        verdict = self._arrivals.submit(_check(user_key, arrival_id, per_user, global_limit,
                                               window))
        return float(verdict or 0.0)

    def _count_arrivals(self: SqlStore, checks: list[dict[str, Any]]) -> list[float | None]:
        with self._write() as connection:
            wait_for_turn(connection, self.dialect, RATE_LOCK)
            verdicts: list[float | None] = [_count(connection, check) for check in checks]
            # Arrivals older than two windows decide nothing any more.
            oldest = min(check["cutoff"] for check in checks) - max(
                check["window"] for check in checks)
            connection.execute("DELETE FROM rate_arrivals WHERE at < ?", [oldest])
        return verdicts


def count_in(connection: SqlConnection, dialect: Dialect, rate: RateCheck,
             message: ChatMessage) -> ChatMessage:
    """Count an arrival inside the caller's transaction (the event's own insert); the
    message to store: `rate.limited(...)` when it is over a limit."""
    wait_for_turn(connection, dialect, RATE_LOCK)
    check = _check(rate.user_key, rate.arrival_id, rate.per_user, rate.global_limit,
                   rate.window)
    rate.retry_at = _count(connection, check)
    # Arrivals older than two windows decide nothing any more.
    connection.execute("DELETE FROM rate_arrivals WHERE at < ?",
                       [check["now"] - 2 * rate.window])
    return rate.limited(rate.retry_at) if rate.retry_at else message


def _check(user_key: str, arrival_id: str, per_user: int, global_limit: int,
           window: float) -> dict[str, Any]:
    now = time.time()
    return {"arrival": arrival_id, "user": user_key, "now": now, "cutoff": now - window,
            "window": window, "per_user": per_user or UNLIMITED,
            "global_limit": global_limit or UNLIMITED}


def _count(connection: SqlConnection, check: dict[str, Any]) -> float:
    row = connection.execute(*positional(COUNT_ARRIVAL, check)).fetchone()
    return float(row[0]) if row else 0.0
