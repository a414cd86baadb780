"""Teams requests answered without a turn — `help`, `docs`, `meta` without an id, the admin
`stats` and `sources`, votes, a 👎's reason, "Ask a human" — as replies computed on the inbox
worker (so a redelivered activity is answered once, and a reply posted before a crash is not
posted again; see TeamsAdapter.direct)."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import quote

from microsoft_agents.activity import Activity, ActivityTypes, Attachment

from docassist.bot.commands import parse_text_command
from docassist.bot.teams import cards
from docassist.bot.teams.audience import THREAD_MARKER
from docassist.core import i18n
from docassist.core.errors import StorageError, StorageUnavailableError
from docassist.core.feedback import answered_elsewhere, parse_reason, reason_label
from docassist.core.messages import ChatMessage, Command
from docassist.core.ports import AdapterStore, Catalog
from docassist.core.replies import storage_problem_text
from docassist.core.scope_commands import run_scope_command
from docassist.core.scopes import Audience
from docassist.core.trace import sha256_text
from docassist.storage.exports import activity_summary

logger = logging.getLogger(__name__)

COMMANDS: Final = frozenset({"docs", "help", "stats", "sources", "meta"})
ADMIN_COMMANDS: Final = frozenset({"stats", "sources", "scopes"})
READ_ONLY_REQUESTS: Final = frozenset({"docs", "help", "meta"})
"""Answered even when the inbox cannot store them (a read-only or full database)."""
ACTIONS: Final = frozenset({cards.FEEDBACK, cards.FEEDBACK_REASON, cards.ASK_HUMAN})
TEAMS_LINK: Final = "https://teams.microsoft.com/l"

PostToChannel = Callable[[str, str, Activity], None]
"""Posts a new message in a channel: (service url, channel id, activity)."""


@dataclass(frozen=True)
class DirectRequest:
    """What the activity asked, as stored with the inbox event (`ChatMessage.direct`)."""

    name: str
    language: i18n.Language
    value: dict[str, Any] = field(default_factory=dict)

    def dump(self) -> str:
        return json.dumps({"name": self.name, "language": self.language, "value": self.value})

    @classmethod
    def load(cls, raw: str) -> DirectRequest:
        data = json.loads(raw)
        language: i18n.Language = "pl" if data.get("language") == "pl" else "en"
        return cls(str(data["name"]), language, dict(data.get("value") or {}))


@dataclass
class Routed:
    """An activity's text and card data as the inbox event will carry them."""

    text: str
    command: Command | None = None
    argument: str | None = None
    choice_for: str | None = None
    direct: DirectRequest | None = None


def route(text: str, value: dict[str, Any], language: i18n.Language) -> Routed | None:
    """What a message or card action asks: a turn (maybe a command or a clicked choice) or
    a direct request; None for another app's card data."""
    action = value.get(cards.ACTION_KEY)
    if action in ACTIONS:
        return Routed("", direct=DirectRequest(str(action), language, dict(value)))
    if action == cards.CHOICE:  # a clarification's candidate: its reply, as if typed
        return Routed(str(value.get("reply") or ""),
                      choice_for=str(value.get("result_id") or ""))
    if action == cards.SHOW_SOURCES:
        return Routed(text, Command.SHOW_SOURCES)
    if action == cards.CLEAR_THREAD:
        return Routed(text, Command.CLEAR)
    if action == cards.ASK_AGAIN:  # the note is looked up when the turn runs (core/stale.py)
        return Routed(text, Command.ASK_AGAIN, str(value.get("note") or ""))
    if action is not None:
        return None
    parsed = parse_text_command(text)
    if parsed is None and text.split()[:1] == ["scopes"]:  # admins: core.scope_commands
        # A subject pasted from a thread names its channel: `;messageid=…` dropped.
        words = [word.partition(THREAD_MARKER)[0] for word in text.split()[1:]]
        return Routed(text, direct=DirectRequest("scopes", language, {"words": words}))
    if parsed is None:
        return Routed(text)
    if parsed.name in COMMANDS and not (parsed.name == "meta" and parsed.argument):
        return Routed(text, direct=DirectRequest(parsed.name, language))
    if parsed.name == "meta":
        return Routed(text, Command.METADATA, parsed.argument)
    if parsed.name == "clear":
        return Routed(text, Command.CLEAR)
    return Routed(text)


def text_activity(text: str) -> Activity:
    return Activity(type=ActivityTypes.message, text=text)


def card_activity(card: cards.Card) -> Activity:
    return Activity(type=ActivityTypes.message, attachments=[
        Attachment(content_type=cards.CARD_CONTENT_TYPE, content=card)])


@dataclass
class DirectReplies:
    store: AdapterStore
    admin_users: frozenset[str]
    human_channel: str
    """Where the user is sent while the Teams help channel cannot be reached."""
    teams_human_channel: str
    post_to_channel: PostToChannel
    catalog_for: Callable[[Audience], Catalog]
    """The catalog as a message's audience may see it (issue 22: lists show no more)."""

    def reply(self, message: ChatMessage, request: DirectRequest) -> list[Activity]:
        name, language, user = request.name, request.language, message.user
        if name in ADMIN_COMMANDS and user not in self.admin_users:
            logger.warning("refused %s from user %s", name, sha256_text(user))
            return [text_activity(i18n.text("admin_refused", language))]
        if name == "help":
            return [text_activity(i18n.text("teams_help", language))]
        catalog = self.catalog_for(message.audience)
        if name == "meta":
            example = next((d.document_id for d in catalog.documents()), "DOC-ID")
            return [text_activity(i18n.text("teams_meta_usage", language, example=example))]
        if name == "docs":
            return [card_activity(cards.catalog_card(catalog.documents(), language))]
        if name == "scopes":  # a change is logged with this admin
            words = [str(word) for word in request.value.get("words") or []]
            return [text_activity(run_scope_command(words, f"teams:{user}", self.store,
                                                    language).text)]
        if name == "sources":
            return [card_activity(cards.sources_card(self.store.source_statuses(), language))]
        if name == "stats":
            return [card_activity(cards.stats_card(activity_summary(self.store), language))]
        result_id = str(request.value.get("result_id") or "")
        if answered_elsewhere(self.store.answer_place(result_id), "teams", message.key.channel):
            logger.warning("refused %s naming an answer from another conversation", name)
            return [text_activity(i18n.text("feedback_elsewhere", language))]
        if name == cards.FEEDBACK:
            return self._vote(user, request)
        if name == cards.FEEDBACK_REASON:
            return self._reason(user, request)
        return self._ask_human(message, request)

    def _vote(self, user: str, request: DirectRequest) -> list[Activity]:
        result_id = str(request.value.get("result_id") or "")
        good = request.value.get("verdict") == "good"
        try:
            self.store.record_feedback(result_id, user, good)
        except StorageError as error:
            logger.warning("feedback not stored: %s", error)
            return [text_activity(self._problem(error, request.language))]
        if good:
            return [text_activity(i18n.text("feedback_thanks", request.language))]
        return [card_activity(cards.feedback_reason_card(result_id, request.language))]

    def _reason(self, user: str, request: DirectRequest) -> list[Activity]:
        """The 👎 card sent back: the reason stored with the vote (the words per save_raw)."""
        language = request.language
        reason = parse_reason(request.value.get(cards.REASON_INPUT))
        if reason is None:
            return [text_activity(i18n.text("feedback_reason_missing", language))]
        words = request.value.get(cards.REASON_TEXT_INPUT)
        try:
            self.store.record_feedback_reason(str(request.value.get("result_id") or ""), user,
                                              reason, str(words) if words else None)
        except StorageError as error:
            logger.warning("feedback reason not stored: %s", error)
            return [text_activity(self._problem(error, language))]
        return [text_activity(i18n.text("feedback_reason_thanks", language,
                                        reason=reason_label(reason, language)))]

    def _ask_human(self, message: ChatMessage, request: DirectRequest) -> list[Activity]:
        """One request in the help channel per answer, with a link back to the conversation;
        until the channel's team was seen, the user is sent to DOCASSIST_HUMAN_CHANNEL."""
        language, result_id = request.language, str(request.value.get("result_id") or "")
        service_url = (self.store.team_service_url(self.teams_human_channel)
                       if self.teams_human_channel else None)
        if service_url is None:
            return [text_activity(i18n.text("teams_human_unknown", language,
                                            channel=self.human_channel))]
        try:
            first = self.store.record_escalation(result_id, message.user)
        except StorageError as error:
            logger.warning("escalation not stored: %s", error)
            return [text_activity(self._problem(error, language))]
        if not first:
            return [text_activity(i18n.text("teams_human_already_requested", language))]
        name = str(request.value.get("user_name") or message.user)
        try:
            self.post_to_channel(service_url, self.teams_human_channel, text_activity(
                i18n.text("teams_human_request", language, user=name,
                          link=conversation_link(message))))
        except Exception as error:  # a later click tries again
            logger.warning("escalation of %s not posted: %s", result_id, error)
            self.store.withdraw_escalation(result_id)
            return [text_activity(i18n.text("post_failed", language))]
        return [text_activity(i18n.text("teams_human_requested", language))]

    @staticmethod
    def _problem(error: StorageError, language: i18n.Language) -> str:
        if isinstance(error, StorageUnavailableError):
            return storage_problem_text(error, language)
        return i18n.text("feedback_reason_unknown", language)


def conversation_link(message: ChatMessage) -> str:
    """A Teams deep link back to where the answer was given: the channel thread's root
    message, or the chat."""
    key = message.key
    if key.thread != "chat":
        return f"{TEAMS_LINK}/message/{quote(key.channel)}/{quote(key.thread)}"
    return f"{TEAMS_LINK}/chat/{quote(key.channel)}/0"
