"""The PostgreSQL store's rows of issue 23: reasons for a 👎, private answers shared once,
the id each reply was posted as, and where a Teams team's channels are reached. Same
semantics as storage/feedback_rows.py and teams_rows.py."""

from __future__ import annotations

from typing import Any, Protocol

from docassist.core.errors import StorageError
from docassist.core.feedback import FeedbackReason
from docassist.core.limits import MAX_FEEDBACK_TEXT_CHARS
from docassist.core.trace import sha256_text
from docassist.storage.postgres.connection import now_iso


class _Base(Protocol):
    save_raw: bool

    def _transaction(self) -> Any: ...

    def _value(self, sql: str, params: Any = ()) -> Any: ...


class ChatRows:
    """Feedback reasons, shares, posted reply ids, team addresses (mixed into PostgresStore)."""

    def record_share(self: _Base, result_id: str, user: str) -> bool:
        """True for the first share of a private answer, False when it was shared already."""
        with self._transaction() as connection:
            return bool(connection.execute(
                "INSERT INTO shares (result_id, user_sha256, created_at) VALUES (%s, %s, %s) "
                "ON CONFLICT DO NOTHING", [result_id, sha256_text(user), now_iso()]
                ).rowcount == 1)

    def withdraw_share(self: _Base, result_id: str) -> None:
        with self._transaction() as connection:
            connection.execute("DELETE FROM shares WHERE result_id = %s", [result_id])

    def record_feedback_reason(self: _Base, result_id: str, user: str,
                               reason: FeedbackReason, text: str | None) -> None:
        """The reason for this user's 👎 (a reason is a 👎); the words only with `save_raw`."""
        kept = (text or "").strip()[:MAX_FEEDBACK_TEXT_CHARS] or None
        with self._transaction() as connection:
            if connection.execute("SELECT 1 FROM turns WHERE result_id = %s",
                                  [result_id]).fetchone() is None:
                raise StorageError(f"no turn with result id {result_id}")
            connection.execute(
                "INSERT INTO feedback (result_id, user_sha256, value, created_at, reason, "
                "reason_text) VALUES (%s, %s, -1, %s, %s, %s) ON CONFLICT (result_id, "
                "user_sha256) DO UPDATE SET value = -1, reason = EXCLUDED.reason, "
                "reason_text = EXCLUDED.reason_text",
                [result_id, sha256_text(user), now_iso(), str(reason),
                 kept if self.save_raw else None])

    def record_posted(self: _Base, platform: str, event_id: str, posted_id: str) -> None:
        with self._transaction() as connection:
            connection.execute("UPDATE inbox SET posted_id = %s WHERE platform = %s AND "
                               "event_id = %s", [posted_id, platform, event_id])

    def posted_id(self: _Base, platform: str, event_id: str) -> str | None:
        value = self._value("SELECT posted_id FROM inbox WHERE platform = %s AND "
                            "event_id = %s", [platform, event_id])
        return str(value) if value else None

    def record_team_address(self: _Base, channel_ids: list[str], team_id: str,
                            service_url: str) -> None:
        """The team and its channels seen in one activity: each, and the team's other known
        channels, reached at `service_url`."""
        now = now_iso()
        with self._transaction() as connection, connection.cursor() as cursor:
            cursor.executemany(
                "INSERT INTO team_addresses (channel_id, team_id, service_url, updated_at) "
                "VALUES (%s, %s, %s, %s) ON CONFLICT (channel_id) DO UPDATE SET "
                "team_id = EXCLUDED.team_id, service_url = EXCLUDED.service_url, "
                "updated_at = EXCLUDED.updated_at",
                [[channel_id, team_id, service_url, now]
                 for channel_id in dict.fromkeys(channel_ids)])
            # The team's other channels move with it: "newest" must not hang on two
            # writes landing in the same clock tick.
            cursor.execute("UPDATE team_addresses SET service_url = %s, updated_at = %s "
                           "WHERE team_id = %s", [service_url, now, team_id])

    def team_service_url(self: _Base, channel_id: str) -> str | None:
        """The newest `serviceUrl` of the team this channel belongs to, once it was seen."""
        value = self._value(
            "SELECT service_url FROM team_addresses WHERE channel_id = %s",
            [channel_id])
        return None if value is None else str(value)
