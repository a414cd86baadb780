"""An answer streamed into a Slack thread as its sentences arrive (`chat.startStream`,
`chat.appendStream`, `chat.stopStream`), with the posted answer as the fallback."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from slack_sdk import WebClient

from docassist.bot import layout
from docassist.bot.slack.limits import STREAM_APPEND_SECONDS
from docassist.bot.slack.render import escape, render
from docassist.core.results import TurnResult

logger = logging.getLogger(__name__)


class SlackStream:
    """One answer streamed into a thread: started with the first sentence, then a sentence
    is sent once STREAM_APPEND_SECONDS have passed since the last call (those that came
    sooner go with it), and the rest with the stop, which adds the sources and buttons.
    Any failure marks it broken and the answer is posted normally."""

    def __init__(self, client: WebClient, channel: str, thread_ts: str | None, team: str,
                 user: str, clock: Callable[[], float] = time.monotonic) -> None:
        self.client = client
        self.channel = channel
        self.thread_ts = thread_ts
        self.team = team
        self.user = user
        self.clock = clock
        self.ts: str | None = None
        self.broken = False
        self.markers = layout.CitationMarkers()
        """Citations as the sources block numbers them (`layout.citation_numbers`)."""
        self._held: list[str] = []
        """Sentences not sent yet (they came within STREAM_APPEND_SECONDS of the last call)."""
        self._sent_at = 0.0

    def append(self, sentence: str) -> None:
        if self.broken or self.thread_ts is None:
            self.broken = True
            return
        self._held.append(escape(self.markers.apply(sentence)) + " ")
        try:
            if self.ts is None:
                started = self.client.chat_startStream(
                    channel=self.channel, thread_ts=self.thread_ts,
                    recipient_team_id=self.team, recipient_user_id=self.user,
                    markdown_text=self._take())
                self.ts = str(started["ts"])
            elif self.clock() - self._sent_at >= STREAM_APPEND_SECONDS:
                self.client.chat_appendStream(channel=self.channel, ts=self.ts,
                                              markdown_text=self._take())
        except Exception as error:
            logger.info("streaming unavailable, falling back to a post: %s", error)
            self.broken = True

    def _take(self) -> str:
        """The held sentences, now being sent."""
        text, self._held = "".join(self._held), []
        self._sent_at = self.clock()
        return text

    def abandon(self) -> None:
        """Stop a started stream without the answer's blocks (no buttons for an answer that
        was not saved)."""
        if self.ts is None or self.broken:
            return
        try:
            self.client.chat_stopStream(channel=self.channel, ts=self.ts,
                                        markdown_text=self._take() or None)
        except Exception as error:
            logger.info("could not stop the stream: %s", error)

    def finish(self, result: TurnResult) -> bool:
        """Stop the stream with the sentences still held and the final blocks; False when
        the answer must be posted."""
        if self.ts is None or self.broken:
            return False
        extra = [block for block in render(result)[-1]["blocks"] if block["type"] != "section"]
        try:
            self.client.chat_stopStream(channel=self.channel, ts=self.ts, blocks=extra,
                                        markdown_text=self._take() or None)
        except Exception as error:
            logger.info("could not stop the stream: %s", error)
            return False
        return True
