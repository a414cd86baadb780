"""An answer streamed into a Slack thread as its sentences arrive (`chat.startStream`,
`chat.appendStream`, `chat.stopStream`), with the posted answer as the fallback."""

from __future__ import annotations

import logging

from slack_sdk import WebClient

from docassist.bot.slack.render import escape, render
from docassist.core.results import TurnResult

logger = logging.getLogger(__name__)


class SlackStream:
    """One answer streamed into a thread: started on the first sentence, stopped with the
    sources and buttons. Any failure marks it broken and the answer is posted normally."""

    def __init__(self, client: WebClient, channel: str, thread_ts: str | None, team: str,
                 user: str) -> None:
        self.client = client
        self.channel = channel
        self.thread_ts = thread_ts
        self.team = team
        self.user = user
        self.ts: str | None = None
        self.broken = False

    def append(self, sentence: str) -> None:
        if self.broken or self.thread_ts is None:
            self.broken = True
            return
        try:
            if self.ts is None:
                started = self.client.chat_startStream(
                    channel=self.channel, thread_ts=self.thread_ts,
                    recipient_team_id=self.team, recipient_user_id=self.user)
                self.ts = str(started["ts"])
            self.client.chat_appendStream(channel=self.channel, ts=self.ts,
                                          markdown_text=escape(sentence) + " ")
        except Exception as error:
            logger.info("streaming unavailable, falling back to a post: %s", error)
            self.broken = True

    def abandon(self) -> None:
        """Stop a started stream without the answer's blocks (no buttons for an answer that
        was not saved)."""
        if self.ts is None or self.broken:
            return
        try:
            self.client.chat_stopStream(channel=self.channel, ts=self.ts)
        except Exception as error:
            logger.info("could not stop the stream: %s", error)

    def finish(self, result: TurnResult) -> bool:
        """Stop the stream with the final blocks; False when the answer must be posted."""
        if self.ts is None or self.broken:
            return False
        extra = [block for block in render(result)[-1]["blocks"] if block["type"] != "section"]
        try:
            self.client.chat_stopStream(channel=self.channel, ts=self.ts, blocks=extra)
        except Exception as error:
            logger.info("could not stop the stream: %s", error)
            return False
        return True
