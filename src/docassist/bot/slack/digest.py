"""Posting the weekly gaps digest (bot/gaps_digest.py) to a Slack channel."""

from __future__ import annotations

from collections.abc import Callable

from slack_sdk import WebClient

from docassist.bot.slack.render import escape


def slack_poster(client: WebClient, channel: str) -> Callable[[str], None]:
    """`post(text)` to the channel; the text is escaped (examples are users' words and may
    hold `<!channel>`), and a refusal by Slack raises, so the digest is retried."""
    def post(text: str) -> None:
        client.chat_postMessage(channel=channel, text=escape(text))

    return post
