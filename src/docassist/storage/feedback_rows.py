"""The stores' part for votes on answers: 👍 and 👎, why a 👎 was given (a reason from a fixed
list and, only with `save_raw`, the user's own words: user text, so never kept otherwise;
purged with the vote), "Ask a human" requests, and private answers shared in their channel,
once each.

A mixin of both stores (written once over dialect.py).
"""

from __future__ import annotations

from docassist.core.errors import StorageError
from docassist.core.feedback import FeedbackReason
from docassist.core.limits import MAX_FEEDBACK_TEXT_CHARS
from docassist.core.trace import sha256_text
from docassist.storage.connection import now_iso
from docassist.storage.dialect import SqlConnection, SqlStore


class FeedbackRows:
    """Votes, their reasons, escalations and shared answers (mixed into Store and
    PostgresStore)."""

    def record_feedback(self: SqlStore, result_id: str, user: str, positive: bool) -> None:
        """A 👍 or 👎 on one answer; the user is stored as a hash. One vote per user per
        answer: a later click replaces the earlier one."""
        with self._write() as connection:
            _require_turn(connection, result_id)
            connection.execute(
                "INSERT INTO feedback (result_id, user_sha256, value, created_at) "
                "VALUES (?, ?, ?, ?) ON CONFLICT (result_id, user_sha256) DO UPDATE SET "
                "value = excluded.value, created_at = excluded.created_at",
                [result_id, sha256_text(user), 1 if positive else -1, now_iso()])

    def record_escalation(self: SqlStore, result_id: str, user: str) -> bool:
        """An "Ask a human" request on one answer: True for the first, False when that
        answer was escalated already (by anyone)."""
        with self._write() as connection:
            _require_turn(connection, result_id)
            return _first_of_answer(self, connection, "escalations", result_id, user)

    def withdraw_escalation(self: SqlStore, result_id: str) -> None:
        """The request could not be posted: the next click may try again."""
        with self._write() as connection:
            connection.execute("DELETE FROM escalations WHERE result_id = ?", [result_id])

    def record_share(self: SqlStore, result_id: str, user: str) -> bool:
        """A private answer shared in its channel: True for the first share, False when it
        was shared already (by anyone)."""
        with self._write() as connection:
            return _first_of_answer(self, connection, "shares", result_id, user)

    def withdraw_share(self: SqlStore, result_id: str) -> None:
        """The shared post failed: the next click may try again."""
        with self._write() as connection:
            connection.execute("DELETE FROM shares WHERE result_id = ?", [result_id])

    def record_feedback_reason(self: SqlStore, result_id: str, user: str,
                               reason: FeedbackReason, text: str | None) -> None:
        """The reason for this user's 👎 on one answer (a reason is a 👎: a vote is made
        or turned into one). The words are kept only with `save_raw`."""
        kept = (text or "").strip()[:MAX_FEEDBACK_TEXT_CHARS] or None
        with self._write() as connection:
            _require_turn(connection, result_id)
            connection.execute(
                "INSERT INTO feedback (result_id, user_sha256, value, created_at, reason, "
                "reason_text) VALUES (?, ?, -1, ?, ?, ?) ON CONFLICT (result_id, user_sha256) "
                "DO UPDATE SET value = -1, reason = excluded.reason, "
                "reason_text = excluded.reason_text",
                [result_id, sha256_text(user), now_iso(), reason,
                 kept if self.save_raw else None])


def _first_of_answer(store: SqlStore, connection: SqlConnection, table: str, result_id: str,
                     user: str) -> bool:
    """A row of `table` (escalations, shares: one per answer) for this click; True when it
    is the answer's first."""
    cursor = connection.execute(
        store.dialect.insert_ignoring(table, ["result_id", "user_sha256", "created_at"]),
        [result_id, sha256_text(user), now_iso()])
    return cursor.rowcount == 1


def _require_turn(connection: SqlConnection, result_id: str) -> None:
    if connection.execute("SELECT 1 FROM turns WHERE result_id = ?",
                          [result_id]).fetchone() is None:
        raise StorageError(f"no turn with result id {result_id}")
