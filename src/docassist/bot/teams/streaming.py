"""An answer streamed into a Teams personal chat, the way Teams documents it ("Stream bot
messages", REST): `typing` activities whose text grows sentence by sentence, each with a
`streaminfo` entity (`streamType: streaming`, `streamSequence` 1, 2, …, and from the second
on the `streamId` Teams returned for the first), closed by a `message` with
`streamType: final` that carries the whole text and a card with the sources and buttons.

Sentences arrive only after the core's citation check (the same sink the Slack stream
reads). Streaming is for personal chats only (Teams does not stream elsewhere) and never
with `expectReplies`; any failure marks the stream broken and the answer is posted whole.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import Any, Final

from microsoft_agents.activity import Activity, ActivityTypes, Attachment, Entity

from docassist.bot import layout
from docassist.bot.teams import cards

logger = logging.getLogger(__name__)

STREAM_INFO: Final = "streaminfo"
_MARKDOWN: Final = re.compile(r"([\\`*_\[\]()<>#~|])")

SendOne = Callable[[Activity], str | None]
"""Posts one activity in the conversation; returns the id Teams gave it."""
UpdateOne = Callable[[str, Activity], None]
"""Replaces the posted activity with this id (PUT activity)."""


def inert_markdown(text: str) -> str:
    """Streamed text is read as markdown by Teams: a document's `[label](url)` or `**` must
    show as written, so markdown's characters are escaped."""
    return _MARKDOWN.sub(r"\\\1", text)


def _stream_info(**fields: Any) -> Entity:
    return Entity(type=STREAM_INFO, **fields)


class TeamsStream:
    def __init__(self, send: SendOne) -> None:
        self.send = send
        self.text = ""
        self.markers = layout.CitationMarkers()
        self.stream_id: str | None = None
        self.sequence = 0
        self.broken = False

    def append(self, sentence: str) -> None:
        if self.broken:
            return
        self.text += inert_markdown(self.markers.apply(sentence)) + " "
        self.sequence += 1
        info: dict[str, Any] = {"streamType": "streaming", "streamSequence": self.sequence}
        if self.stream_id is not None:
            info["streamId"] = self.stream_id
        try:
            sent = self.send(Activity(type=ActivityTypes.typing, text=self.text.rstrip(),
                                      entities=[_stream_info(**info)]))
        except Exception as error:
            logger.info("Teams streaming unavailable, the answer is posted whole: %s", error)
            self.broken = True
            return
        if self.stream_id is None:
            if not sent:
                self.broken = True  # no id to continue the stream with
                return
            self.stream_id = sent

    def finish(self, trailer: cards.Card | None) -> str | None:
        """Close the stream with the final message; its id, or None when the answer must be
        posted whole (nothing was streamed, or the stream broke)."""
        if self.stream_id is None or self.broken:
            return None
        attachments = [Attachment(content_type=cards.CARD_CONTENT_TYPE, content=trailer)
                       ] if trailer is not None else []
        final = Activity(type=ActivityTypes.message, text=self.text.rstrip(),
                         attachments=attachments,
                         entities=[_stream_info(streamId=self.stream_id, streamType="final")])
        try:
            return self.send(final) or self.stream_id
        except Exception as error:
            logger.info("could not close the Teams stream: %s", error)
            return None


class TeamsUpdates:
    """An answer in a channel or group chat, where Teams does not stream: posted once with
    its first checked sentence, updated (PUT) as more arrive, and replaced by the answer's
    card when it is complete. Any failure before the first post leaves the answer to be
    posted whole; a failed update only waits for the final one."""

    def __init__(self, send: SendOne, update: UpdateOne) -> None:
        self.send = send
        self.update = update
        self.text = ""
        self.markers = layout.CitationMarkers()
        self.posted_id: str | None = None
        self.broken = False

    def append(self, sentence: str) -> None:
        if self.broken:
            return
        self.text += inert_markdown(self.markers.apply(sentence)) + " "
        activity = Activity(type=ActivityTypes.message, text=self.text.rstrip())
        try:
            if self.posted_id is None:
                self.posted_id = self.send(activity)
                self.broken = self.posted_id is None
            else:
                self.update(self.posted_id, activity)
        except Exception as error:
            logger.info("answer update failed: %s", error)
            self.broken = self.posted_id is None

    def finish(self, answer_cards: list[cards.Card]) -> str | None:
        """Replace the growing text with the first card (the rest follow as replies); the
        posted id, or None when the answer must be posted whole."""
        if self.posted_id is None or not answer_cards:
            return None
        first, *rest = answer_cards
        try:
            self.update(self.posted_id, Activity(type=ActivityTypes.message, attachments=[
                Attachment(content_type=cards.CARD_CONTENT_TYPE, content=first)]))
            for card in rest:
                self.send(Activity(type=ActivityTypes.message, attachments=[
                    Attachment(content_type=cards.CARD_CONTENT_TYPE, content=card)]))
        except Exception as error:
            logger.warning("could not complete the answer in place: %s", error)
            return None  # posted whole after all: a repeat beats a half answer
        return self.posted_id
