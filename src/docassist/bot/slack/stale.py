"""Stale-answer notes in Slack: the note posted in the thread, and its "Ask again" button,
which re-runs the thread's last question as a new turn through the inbox."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Final, Protocol

from slack_bolt import App
from slack_sdk import WebClient

from docassist.bot.slack.audience import slack_audience
from docassist.bot.slack.config import SlackConfig
from docassist.bot.slack.payloads import Interaction, interaction
from docassist.bot.slack.render import escape
from docassist.core import i18n
from docassist.core.inbox import InboxWorker
from docassist.core.limits import ACK_DEADLINE_SECONDS
from docassist.core.messages import ChatMessage, ConversationKey
from docassist.core.ports import AdapterStore
from docassist.core.scopes import UNSET
from docassist.core.stale import (
    StaleNote,
    last_question,
    note_language,
    note_text,
    note_visible,
)
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

    @property
    def worker(self) -> InboxWorker: ...

    def thread_ts(self, key: ConversationKey) -> str | None: ...

    def soon(self, task: Callable[[], None], what: str) -> None: ...


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
        pressed = interaction(body)
        ack()
        self.adapter.soon(lambda: self.ask_again(pressed), "ask again")

    def ask_again(self, pressed: Interaction) -> None:
        adapter = self.adapter
        value = pressed.actions[0].value
        row = adapter.store.stale_note(int(value)) if value.isdigit() else None
        if row is None or row["platform"] != "slack" or row["channel"] != pressed.channel_id:
            logger.warning("ask-again for an unknown note %r", value[:20])
            return
        key = ConversationKey(platform="slack", workspace=row["workspace"],
                              channel=row["channel"], thread=row["thread"])
        question = last_question(adapter.store.load(key).state)
        if question is None:
            adapter.client.chat_postEphemeral(
                channel=key.channel, user=pressed.user.id, thread_ts=adapter.thread_ts(key),
                text=i18n.text("stale_no_question", adapter.config.default_language))
            return
        action_ts = pressed.actions[0].action_ts or pressed.trigger_id
        audience = slack_audience(key.channel, pressed.user.id,
                                  private=key.channel.startswith("D"))
        adapter.worker.submit(ChatMessage(key=key, user=pressed.user.id, text=question,
                                          event_id=f"ask-again:{action_ts}",
                                          audience=audience),
                              deadline=ACK_DEADLINE_SECONDS)
