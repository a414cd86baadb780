"""What the Slack adapter is configured with (tokens come from the environment)."""

from __future__ import annotations

from dataclasses import dataclass

from docassist.core import i18n
from docassist.core.limits import INBOX_WORKERS
from docassist.core.ratelimit import DEFAULT_GLOBAL, DEFAULT_PER_USER


@dataclass(frozen=True)
class SlackConfig:
    bot_token: str
    signing_secret: str
    api_url: str = "https://slack.com/api/"
    default_language: i18n.Language = "en"
    admin_users: frozenset[str] = frozenset()
    human_channel: str = "#docassist-help"
    per_user_per_minute: int = DEFAULT_PER_USER
    global_per_minute: int = DEFAULT_GLOBAL
    inbox_workers: int = INBOX_WORKERS
