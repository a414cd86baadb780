"""The stores' part for Teams: the id a reply was posted as (per inbox event, written before
the event is marked done, so a restarted process can tell the reply is out), and where each
known team channel is reached (its `serviceUrl`).

A mixin of both stores (written once over dialect.py).
"""

from __future__ import annotations

from docassist.storage.connection import now_iso
from docassist.storage.dialect import SqlStore


class TeamsRows:
    """Posted reply ids and team addresses (mixed into Store and PostgresStore)."""

    def record_posted(self: SqlStore, platform: str, event_id: str, posted_id: str) -> None:
        with self._write() as connection:
            connection.execute("UPDATE inbox SET posted_id = ? WHERE platform = ? AND "
                               "event_id = ?", [posted_id, platform, event_id])

    def posted_id(self: SqlStore, platform: str, event_id: str) -> str | None:
        rows = self._read("SELECT posted_id FROM inbox WHERE platform = ? AND event_id = ?",
                          [platform, event_id])
        return str(rows[0]["posted_id"]) if rows and rows[0]["posted_id"] else None

    def record_team_address(self: SqlStore, channel_ids: list[str], team_id: str,
                            service_url: str) -> None:
        """The team and its channels seen in one activity: each, and the team's other known
        channels, reached at `service_url`."""
        now = now_iso()
        with self._write() as connection:
            connection.executemany(
                "INSERT INTO team_addresses (channel_id, team_id, service_url, updated_at) "
                "VALUES (?, ?, ?, ?) ON CONFLICT (channel_id) DO UPDATE SET "
                "team_id = excluded.team_id, service_url = excluded.service_url, "
                "updated_at = excluded.updated_at",
                [[channel_id, team_id, service_url, now]
                 for channel_id in dict.fromkeys(channel_ids)])
            # The team's other channels move with it: "newest" must not hang on two
            # writes landing in the same clock tick.
            connection.execute("UPDATE team_addresses SET service_url = ?, updated_at = ? "
                               "WHERE team_id = ?", [service_url, now, team_id])

    def team_service_url(self: SqlStore, channel_id: str) -> str | None:
        """The newest `serviceUrl` of the team this channel belongs to, once it was seen."""
        rows = self._read("SELECT service_url FROM team_addresses WHERE channel_id = ?",
                          [channel_id])
        url = rows[0]["service_url"] if rows else None
        return None if url is None else str(url)
