"""What the Slack adapter is configured with (tokens come from the environment)."""

from __future__ import annotations

from dataclasses import dataclass

from docassist.bot.limits import AdapterConfig


@dataclass(frozen=True)
class SlackConfig(AdapterConfig):
    bot_token: str
    signing_secret: str
    api_url: str = "https://slack.com/api/"
    human_channel: str = "#docassist-help"
