"""Stale-answer notes in Slack: the note posted in the thread, and its "Ask again" button.
A click is a `Command.ASK_AGAIN` through the inbox, as in Teams (bot/teams/stale.py): the
turn reads the thread's last question when it runs, in the conversation's order, and a note
that is not the thread's, or a thread with no question left, gets its reply and trace row
there (core/early_replies.py); a redelivered click is one turn."""

from __future__ import annotations

import logging
from typing import Any, Final, Protocol

from slack_bolt import App
from slack_sdk import WebClient

from docassist.bot.slack.config import SlackConfig
from docassist.bot.slack.payloads import interaction
from docassist.bot.slack.render import escape
from docassist.core import i18n
from docassist.core.messages import Command, ConversationKey
from docassist.core.ports import AdapterStore
from docassist.core.scopes import UNSET
from docassist.core.stale import StaleNote, note_language, note_text, note_visible
from docassist.core.turn import TurnEngine


class NoteHost(Protocol):
    """What the notes need of the adapter (`app.SlackAdapter` is the one implementation); a
    protocol, so this module does not import the adapter back."""

    @property
    def app(self) -> App: ...

    @property
    def config(self) -> SlackConfig: ...

    @property
    def client(self) -> WebClient: ...

    @property
    def store(self) -> AdapterStore: ...

    @property
    def engine(self) -> TurnEngine: ...

    def thread_ts(self, key: ConversationKey) -> str | None: ...

    @staticmethod
    def key_for(team: str, channel: str, thread_ts: str | None, ts: str,
                channel_type: str | None) -> ConversationKey: ...

    def submit_command(self, key: ConversationKey, user: str, event_id: str,
                       command: Command, argument: str | None = None) -> None: ...


logger = logging.getLogger(__name__)

ASK_AGAIN_ACTION: Final = "docassist_ask_again"


def note_message(note: StaleNote, language: i18n.Language) -> dict[str, Any]:
    text = note_text(note, language)
    button = {"type": "button", "action_id": ASK_AGAIN_ACTION, "value": str(note.note_id),
              "text": {"type": "plain_text", "text": i18n.text("stale_ask_again", language)}}
    return {"text": text, "blocks": [
        {"type": "section", "text": {"type": "mrkdwn", "text": escape(text)}},
        {"type": "actions", "elements": [button]}]}


class SlackStaleNotes:
    def __init__(self, adapter: NoteHost) -> None:
        self.adapter = adapter
        adapter.app.action(ASK_AGAIN_ACTION)(self._on_ask_again)

    def post(self, note: StaleNote) -> None:
        """Post one note in its thread (called by the courier)."""
        state = self.adapter.store.load(note.key).state
        engine = self.adapter.engine
        if not note_visible(note, state.audience or UNSET, engine.scopes, engine.catalog):
            logger.info("stale note %s withheld: outside the thread's scope now", note.note_id)
            return
        language = note_language(state, self.adapter.config.default_language)
        self.adapter.client.chat_postMessage(channel=note.key.channel,
                                             thread_ts=self.adapter.thread_ts(note.key),
                                             **note_message(note, language))

    def _on_ask_again(self, ack: Any, body: dict[str, Any]) -> None:
        pressed = interaction(body, message=True)
        ack()
        key = self.adapter.key_for(pressed.team_id, pressed.channel_id, pressed.thread,
                                   str(pressed.message_ts), pressed.channel_type)
        action_ts = pressed.actions[0].action_ts or pressed.trigger_id
        self.adapter.submit_command(key, pressed.user.id, f"action:{action_ts}",
                                    Command.ASK_AGAIN, argument=pressed.actions[0].value)
