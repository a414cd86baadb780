"""The PostgreSQL store's share of the work replicas split (see storage/claims.py for the
semantics, the same on both stores): inbox claims and rate-limit arrivals.

READ COMMITTED does not serialize two replicas that both look for claimable events (each
could see the other's conversation as unclaimed), so a claim, and a rate check, first takes
a transaction-scoped advisory lock: claimers queue for a few milliseconds, never for a turn.
Within the lock, `FOR UPDATE SKIP LOCKED` leaves rows another transaction is updating
(a finish, a renewal) to the next look.
"""

from __future__ import annotations

import time
from typing import Any, Final, Protocol

from docassist.core.messages import ChatMessage
from docassist.core.ports import InboxEvent, RateCheck
from docassist.storage.claims import UNLIMITED, inbox_event
from docassist.storage.postgres.connection import Connection

CLAIM_LOCK: Final = 0x636C6169  # "clai": one claimer at a time, across replicas
RATE_LOCK: Final = 0x72617465  # "rate"

UNFINISHED: Final = "('pending', 'answered')"

CLAIMABLE: Final = f"""
SELECT i.id FROM inbox i
WHERE i.status IN {UNFINISHED} AND (%(platform)s = '' OR i.platform = %(platform)s)
  AND (i.claimed_by IS NULL OR i.claim_expires < %(now)s)
  AND NOT EXISTS (
    SELECT 1 FROM inbox o
    WHERE o.conversation_id = i.conversation_id AND o.status IN {UNFINISHED}
      AND (o.id < i.id OR (o.claimed_by IS NOT NULL AND o.claim_expires >= %(now)s)))
ORDER BY i.id LIMIT %(limit)s"""

COUNT_ARRIVAL: Final = """
INSERT INTO rate_arrivals (arrival_id, user_key, at, retry_at)
SELECT %(arrival)s, %(user)s, %(now)s,
  CASE WHEN u.n >= %(per_user)s AND g.n >= %(global_limit)s
         THEN greatest(u.first, g.first) + %(window)s
       WHEN u.n >= %(per_user)s THEN u.first + %(window)s
       WHEN g.n >= %(global_limit)s THEN g.first + %(window)s
       ELSE 0 END
FROM (SELECT count(*) AS n, min(at) AS first FROM rate_arrivals
      WHERE user_key = %(user)s AND retry_at = 0 AND at > %(cutoff)s) AS u,
     (SELECT count(*) AS n, min(at) AS first FROM rate_arrivals
      WHERE retry_at = 0 AND at > %(cutoff)s) AS g
ON CONFLICT (arrival_id) DO UPDATE SET arrival_id = excluded.arrival_id
RETURNING retry_at"""


class _Base(Protocol):
    def _transaction(self) -> Any: ...

    def _rows(self, sql: str, params: Any = ()) -> list[dict[str, Any]]: ...


def count_in(connection: Connection, rate: RateCheck, message: ChatMessage) -> ChatMessage:
    """Count an arrival inside the caller's transaction; the message to store:
    `rate.limited(...)` when it is over a limit."""
    rate.retry_at = _count(connection, rate.user_key, rate.arrival_id, rate.per_user,
                           rate.global_limit, rate.window)
    return rate.limited(rate.retry_at) if rate.retry_at else message


def _count(connection: Connection, user_key: str, arrival_id: str, per_user: int,
           global_limit: int, window: float) -> float:
    """COUNT_ARRIVAL under the rate lock (one counter at a time across replicas)."""
    connection.execute("SELECT pg_advisory_xact_lock(%s)", [RATE_LOCK])
    now = time.time()
    row = connection.execute(COUNT_ARRIVAL, {
        "arrival": arrival_id, "user": user_key, "now": now, "cutoff": now - window,
        "window": window, "per_user": per_user or UNLIMITED,
        "global_limit": global_limit or UNLIMITED}).fetchone()
    connection.execute("DELETE FROM rate_arrivals WHERE at < %s", [now - 2 * window])
    return float(row[0]) if row else 0.0


class ClaimRowsPg:
    """Inbox claims and rate-limit arrivals (mixed into PostgresStore)."""

    def claim(self: _Base, platform: str, holder: str, lease_seconds: float,
              limit: int) -> list[InboxEvent]:
        now = time.time()
        if limit <= 0:
            return []
        query = {"now": now, "limit": 1, "platform": platform}
        if not self._rows(CLAIMABLE, query):  # an idle look takes no lock
            return []
        with self._transaction() as connection:
            connection.execute("SELECT pg_advisory_xact_lock(%s)", [CLAIM_LOCK])
            ids = [row[0] for row in connection.execute(
                CLAIMABLE + " FOR UPDATE OF i SKIP LOCKED",
                {**query, "limit": limit}).fetchall()]
            if not ids:
                return []
            cursor = connection.execute(
                "UPDATE inbox SET claimed_by = %s, claim_expires = %s WHERE id = ANY(%s) "
                "AND (claimed_by IS NULL OR claim_expires < %s) RETURNING *",
                [holder, now + lease_seconds, ids, now])
            names = [column.name for column in cursor.description or []]
            rows = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
        return [inbox_event(row) for row in sorted(rows, key=lambda row: row["id"])]

    def renew_claims(self: _Base, holder: str, ids: list[int],
                     lease_seconds: float) -> set[int]:
        if not ids:
            return set()
        with self._transaction() as connection:
            connection.execute(
                f"UPDATE inbox SET claim_expires = %s WHERE claimed_by = %s AND id = ANY(%s) "
                f"AND status IN {UNFINISHED}", [time.time() + lease_seconds, holder, ids])
            held = connection.execute("SELECT id FROM inbox WHERE claimed_by = %s "
                                      "AND id = ANY(%s)", [holder, ids]).fetchall()
        return {int(row[0]) for row in held}

    def holds(self: _Base, holder: str, inbox_id: int, seconds: float) -> bool:
        return bool(self._rows(
            f"SELECT 1 FROM inbox WHERE id = %s AND claimed_by = %s AND claim_expires >= %s "
            f"AND status IN {UNFINISHED}", [inbox_id, holder, time.time() + seconds]))

    def release_claims(self: _Base, holder: str, ids: list[int]) -> None:
        if not ids:
            return
        with self._transaction() as connection:
            connection.execute("UPDATE inbox SET claimed_by = NULL, claim_expires = NULL "
                               "WHERE claimed_by = %s AND id = ANY(%s)", [holder, ids])

    def stored_event(self: _Base, inbox_id: int) -> InboxEvent | None:
        found = self._rows("SELECT * FROM inbox WHERE id = %s", [inbox_id])
        return inbox_event(found[0]) if found else None

    def claim_rows(self: _Base) -> list[dict[str, Any]]:
        return self._rows("SELECT id, event_id, status, claimed_by, claim_expires FROM inbox "
                          "ORDER BY id")

    def count_arrival(self: _Base, user_key: str, arrival_id: str, per_user: int,
                      global_limit: int, window: float) -> float:
        """One statement under the rate lock (commands and buttons; messages are counted
        with their event's insert)."""
        with self._transaction() as connection:
            return _count(connection, user_key, arrival_id, per_user, global_limit, window)
