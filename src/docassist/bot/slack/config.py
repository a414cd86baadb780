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
    private_channels: frozenset[str] = frozenset()
    """Channel ids whose answers are ephemeral (only the asker sees them, with a "Share in
    channel" button): `DOCASSIST_SLACK_PRIVATE_CHANNELS`."""
