"""`/docassist-admin export [since] [until]`, `stats`, `sources` and `scopes …`, for admins
only.

The export is the same function as `docassist traces export`; the CSV goes to the admin's
direct messages as a file. Anyone else is refused, and the attempt is logged.
"""

from __future__ import annotations

import logging
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from slack_sdk import WebClient

from docassist.bot.slack.render import SECTION_TEXT_LIMIT, escape
from docassist.core import i18n
from docassist.core.ports import AdapterStore
from docassist.core.scope_commands import run_scope_command
from docassist.core.sources import describe_sources
from docassist.core.trace import sha256_text
from docassist.storage.exports import (
    activity_summary,
    parse_moment,
    trace_rows,
    write_export,
)

logger = logging.getLogger(__name__)


class AdminCommands:
    def __init__(self, store: AdapterStore, client: WebClient, admins: frozenset[str],
                 language: i18n.Language) -> None:
        self.store = store
        self.client = client
        self.admins = admins
        self.language = language

    def _tell(self, channel: str, user: str, text: str,
              blocks: list[dict[str, Any]] | None = None) -> None:
        self.client.chat_postEphemeral(channel=channel, user=user, text=text, blocks=blocks)

    def handle(self, user: str, channel: str, text: str) -> None:
        if user not in self.admins:
            logger.warning("refused /docassist-admin %r from user %s", text.split()[:1],
                           sha256_text(user))
            self._tell(channel, user, i18n.text("admin_refused", self.language))
            return
        words = text.split()
        if words[:1] == ["export"] and len(words) <= 3:
            self.export(user, channel, words[1] if len(words) > 1 else None,
                        words[2] if len(words) > 2 else None)
        elif words == ["stats"]:
            self.stats(user, channel)
        elif words == ["sources"]:
            self.sources(user, channel)
        elif words[:1] == ["scopes"]:
            self.scopes(user, channel, words[1:])
        else:
            self._tell(channel, user, i18n.text("slack_admin_usage", self.language))

    def export(self, user: str, channel: str, since: str | None, until: str | None) -> None:
        try:
            now = datetime.now(UTC)
            rows = trace_rows(self.store, parse_moment(since, "since", now),
                              parse_moment(until, "until", now))
        except ValueError as error:
            self._tell(channel, user, str(error))
            return
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "docassist-traces.csv"
            write_export(rows, "csv", path)
            direct = self.client.conversations_open(users=user)["channel"]["id"]
            self.client.files_upload_v2(channel=direct, file=str(path),
                                        filename="docassist-traces.csv",
                                        title="DocAssist traces")
        self._tell(channel, user, i18n.text("slack_admin_exported", self.language,
                                            rows=len(rows)))

    def sources(self, user: str, channel: str) -> None:
        """Every source with its last success, last error and next run (never silent)."""
        lines = describe_sources(self.store.source_statuses(), self.language)
        header = i18n.text("sources_header_admin", self.language)
        blocks = [{"type": "header", "text": {"type": "plain_text", "text": header}},
                  {"type": "section", "text": {"type": "mrkdwn", "text": escape(
                      "\n".join(lines))[:SECTION_TEXT_LIMIT]}}]
        self._tell(channel, user, header + "\n" + "\n".join(lines), blocks)

    def scopes(self, user: str, channel: str, words: list[str]) -> None:
        """`scopes …` (core.scope_commands); a change is logged with this admin's id."""
        result = run_scope_command(words, f"slack:{user}", self.store, self.language)
        self._tell(channel, user, escape(result.text)[:SECTION_TEXT_LIMIT])

    def stats(self, user: str, channel: str) -> None:
        summary = activity_summary(self.store)
        lines = [f"*{summary.turns}* turns",
                 *(f"{status}: {count}" for status, count in summary.statuses),
                 f"feedback: {summary.helpful} up / {summary.not_helpful} down"]
        header = i18n.text("stats_header", self.language)
        blocks = [{"type": "header", "text": {"type": "plain_text", "text": header}},
                  {"type": "section", "text": {"type": "mrkdwn", "text": "\n".join(lines)}}]
        self._tell(channel, user, header, blocks)
