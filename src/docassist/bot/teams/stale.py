"""Stale-answer notes in Teams: the note posted to the conversation as a card (to the thread
for a channel thread), with an "Ask again" action. The action is an ordinary message through
the inbox (direct.route: `Command.ASK_AGAIN`), so a redelivered click is one turn, and the
turn reads the thread's last question when it runs (core/stale.py).

A note is not a reply to a message, so the conversation's address is kept when an answer is
delivered: service URL, conversation and bot ids only (no user, no text).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Protocol

from microsoft_agents.activity import Activity, ConversationReference

from docassist.bot.teams import cards
from docassist.core import i18n
from docassist.core.errors import StorageError
from docassist.core.limits import HTTP_READ_TIMEOUT_SECONDS
from docassist.core.messages import ChatMessage
from docassist.core.ports import AdapterStore
from docassist.core.scopes import UNSET
from docassist.core.stale import StaleNote, note_language, note_text, note_visible
from docassist.core.turn import TurnEngine


class NoteConfig(Protocol):
    @property
    def default_language(self) -> i18n.Language: ...


class NoteHost(Protocol):
    """What the notes need of the adapter (`app.TeamsAdapter` is the one implementation); a
    protocol, so this module does not import the adapter back."""

    @property
    def store(self) -> AdapterStore: ...

    @property
    def engine(self) -> TurnEngine: ...

    @property
    def config(self) -> NoteConfig: ...

    async def send(self, reference: ConversationReference, activities: list[Activity]
                   ) -> list[str]: ...

    def require_loop(self) -> asyncio.AbstractEventLoop: ...


logger = logging.getLogger(__name__)


def note_card(note: StaleNote, language: i18n.Language) -> cards.Card:
    action = {"type": "Action.Submit", "title": i18n.text("stale_ask_again", language),
              "data": {cards.ACTION_KEY: cards.ASK_AGAIN, "note": str(note.note_id)}}
    return cards.card([cards.inert_text(note_text(note, language))], [action])


class TeamsStaleNotes:
    def __init__(self, adapter: NoteHost) -> None:
        self.adapter = adapter

    def remember(self, message: ChatMessage) -> None:
        """Keep where the conversation is (from a delivered answer's reply address)."""
        if message.reply_to is None:
            return
        reference = ConversationReference.model_validate_json(message.reply_to)
        reference.user = None
        reference.activity_id = None
        try:
            self.adapter.store.remember_address(
                message.key.conversation_id,
                reference.model_dump_json(by_alias=True, exclude_none=True))
        except StorageError as error:  # the answer still goes out; a later one records it
            logger.warning("conversation address not kept: %s", error)

    def post(self, note: StaleNote) -> None:
        """Post one note to its conversation (called by the courier, off the loop)."""
        from docassist.bot.teams.direct import card_activity as reply_activity

        address = self.adapter.store.address_of(note.key.conversation_id)
        if address is None:
            raise ValueError("no address known for this conversation")
        reference = ConversationReference.model_validate_json(address)
        state = self.adapter.store.load(note.key).state
        engine = self.adapter.engine
        if not note_visible(note, state.audience or UNSET, engine.scopes, engine.catalog):
            logger.info("stale note %s withheld: outside the thread's scope now", note.note_id)
            return
        language = note_language(state, self.adapter.config.default_language)
        activity = reply_activity(note_card(note, language))
        future = asyncio.run_coroutine_threadsafe(
            self.adapter.send(reference, [activity]), self.adapter.require_loop())
        future.result(timeout=HTTP_READ_TIMEOUT_SECONDS)
