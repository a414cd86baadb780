"""Private answers in Slack: in the channels of `DOCASSIST_SLACK_PRIVATE_CHANNELS` an answer
is ephemeral (only the asker sees it, never streamed) with a "Share in channel" button that
posts the same answer, citations intact, once. Share is offered, and checked again at the
click, only when `core.sharing.may_share` allows every cited document in the channel."""

from __future__ import annotations

import logging
from typing import Protocol

from slack_sdk import WebClient

from docassist.bot.slack.audience import slack_audience
from docassist.bot.slack.config import SlackConfig
from docassist.bot.slack.render import render, share_block, shared
from docassist.core import i18n
from docassist.core.errors import StorageError
from docassist.core.messages import ChatMessage, ConversationKey
from docassist.core.ports import AdapterStore, Catalog
from docassist.core.results import TurnResult
from docassist.core.scopes import Audience
from docassist.core.sharing import cited_document_ids, may_share, shareable_answer
from docassist.core.statuses import language_of
from docassist.core.trace import sha256_text

logger = logging.getLogger(__name__)

EPHEMERAL_POSTED = "ephemeral"
"""Stored as the posted id of an ephemeral reply when Slack gives no ts for it."""


class ChannelCatalogs(Protocol):
    def catalog_for(self, audience: Audience) -> Catalog: ...


class SlackAdapter(Protocol):
    """What private answers need of the adapter (a protocol: no import of app.py back)."""

    @property
    def config(self) -> SlackConfig: ...

    @property
    def client(self) -> WebClient: ...

    @property
    def store(self) -> AdapterStore: ...

    @property
    def engine(self) -> ChannelCatalogs: ...

    @staticmethod
    def thread_ts(key: ConversationKey) -> str | None: ...

    def thread_of_result(self, result_id: str) -> str | None: ...


class PrivateAnswers:
    def __init__(self, adapter: SlackAdapter) -> None:
        self.adapter = adapter

    def applies(self, key: ConversationKey) -> bool:
        return key.channel in self.adapter.config.private_channels

    def deliver(self, message: ChatMessage, result: TurnResult) -> None:
        """The answer to the asker only; its posted id is stored before the event is done
        (an ephemeral message cannot be found in the thread's history after a restart)."""
        adapter, key = self.adapter, message.key
        parts = render(result)
        cited = cited_document_ids(result.answer, result.sources)
        channel = self._channel(key, message.user)
        if result.status == "answered" and cited and may_share(cited, channel):
            parts[-1]["blocks"].append(share_block(result.result_id, result.language))
        posted: str | None = None
        for part in parts:
            answer = adapter.client.chat_postEphemeral(
                channel=key.channel, user=message.user, thread_ts=adapter.thread_ts(key),
                **part)
            posted = str(answer.get("message_ts") or EPHEMERAL_POSTED)
        if posted is not None:
            adapter.store.record_posted(key.platform, str(message.event_id), posted)

    def share(self, user: str, channel: str, result_id: str) -> None:
        """A click on "Share in channel": posted once; every refusal is a short ephemeral
        note, and nothing else happens."""
        language = self.adapter.config.default_language
        refusal, result = self._shareable(user, result_id)
        if result is None:
            self._tell(channel, user, refusal or "share_gone", language)
            return
        language = result.language
        try:
            first = self.adapter.store.record_share(result_id, user)
        except StorageError as error:
            logger.warning("share of %s not stored: %s", result_id, error)
            self._tell(channel, user, "post_failed", language)
            return
        if not first:
            self._tell(channel, user, "share_already", language)
            return
        key_thread = self.adapter.thread_of_result(result_id)
        try:
            for part in shared(result, user):
                self.adapter.client.chat_postMessage(channel=channel, thread_ts=key_thread,
                                                     **part)
        except Exception as error:  # a later click tries again
            logger.warning("share of %s not posted: %s", result_id, error)
            self.adapter.store.withdraw_share(result_id)
            self._tell(channel, user, "post_failed", language)

    def _shareable(self, user: str, result_id: str) -> tuple[str | None, TurnResult | None]:
        """The answer as it may be shared, or the reason (an i18n key) it may not."""
        store = self.adapter.store
        rows = store.conversation_of_result(result_id)
        if not rows:
            return "share_gone", None
        key = ConversationKey(**{k: str(rows[0][k])
                                 for k in ("platform", "workspace", "channel", "thread")})
        turn = next((t for t in store.turns(key.conversation_id)
                     if t["result_id"] == result_id), None)
        if turn is None or turn["user_sha256"] != sha256_text(user):
            return "share_not_yours", None
        state = store.load(key).state
        rag = shareable_answer(state, result_id)
        if rag is None:
            return "share_gone", None
        if not may_share(cited_document_ids(rag.answer, rag.sources), self._channel(key, user)):
            return "share_not_allowed", None
        return None, TurnResult(
            result_id=result_id, conversation_id=key.conversation_id,
            generation=state.generation, turn_id=int(turn["turn_id"]), status="answered",
            answer=rag.answer, language=language_of(str(turn["language"])), sources=rag.sources)

    def _channel(self, key: ConversationKey, user: str) -> Catalog:
        """The catalog as everyone in the channel sees it (a thread once seen shared with
        another organization is judged as shared)."""
        state = self.adapter.store.load(key).state
        audience = slack_audience(key.channel, user, private=False,
                                  shared=state.shared_outside)
        return self.adapter.engine.catalog_for(audience)

    def _tell(self, channel: str, user: str, text_key: str, language: i18n.Language) -> None:
        self.adapter.client.chat_postEphemeral(channel=channel, user=user,
                                               text=i18n.text(text_key, language))

