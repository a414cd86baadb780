"""The Bolt listeners of the Slack app: each validates and translates a request, then calls
the adapter.

Interactive payloads and slash commands are checked (pydantic) before they are acked: one
that lacks what we need is answered 400 and nothing runs. Commands and buttons are
rate-limited like messages; the retry hint is ephemeral (Slack does not redeliver them).
Work that needs the database runs through `adapter.soon`, so an ack never waits for a lock.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from typing import Any, Final, Literal, Protocol

from slack_bolt import App, BoltRequest, BoltResponse
from slack_sdk import WebClient

from docassist.bot.hygiene import MalformedRequest
from docassist.bot.slack.admin import AdminCommands
from docassist.bot.slack.audience import slack_audience
from docassist.bot.slack.config import SlackConfig
from docassist.bot.slack.feedback import ask_reason, reason_view
from docassist.bot.slack.middleware import AssistantPane, ReadableText
from docassist.bot.slack.payloads import Interaction, SlashCommand, interaction, slash_command
from docassist.bot.slack.render import (
    ASK_HUMAN_ACTION,
    CLEAR_THREAD_ACTION,
    CLEAR_THREAD_SHORTCUT,
    FEEDBACK_ACTION,
    SHOW_SOURCES_ACTION,
    ask_human_blocks,
    catalog_message,
    mrkdwn,
)
from docassist.core import i18n
from docassist.core.errors import AckDeadlineError, StorageError, StorageUnavailableError
from docassist.core.feedback import answered_elsewhere
from docassist.core.messages import ChatMessage, Command, ConversationKey
from docassist.core.ports import Catalog, FeedbackLog
from docassist.core.replies import storage_problem_text
from docassist.core.results import TurnResult
from docassist.core.scopes import Audience
from docassist.core.statuses import Verdict
from docassist.serving.admission import Admission

logger = logging.getLogger(__name__)


class ListenerStore(Catalog, FeedbackLog, Protocol):
    """What the listeners read and write themselves (turns go through the adapter)."""

    def answer_place(self, result_id: str) -> tuple[str, str] | None: ...


class TurnHandler(Protocol):
    def handle(self, message: ChatMessage) -> TurnResult | None: ...

    def catalog_for(self, audience: Audience) -> Catalog: ...


class SlackAdapter(Protocol):
    """What the listeners need of the adapter (`app.SlackAdapter` is the one implementation);
    a protocol, so this module does not import the adapter back."""

    @property
    def app(self) -> App: ...

    @property
    def config(self) -> SlackConfig: ...

    @property
    def client(self) -> WebClient: ...

    @property
    def store(self) -> ListenerStore: ...

    @property
    def engine(self) -> TurnHandler: ...

    @property
    def admission(self) -> Admission: ...

    @property
    def admin(self) -> AdminCommands: ...


    @staticmethod
    def key_for(team: str, channel: str, thread_ts: str | None, ts: str,
                channel_type: str | None) -> ConversationKey: ...

    @staticmethod
    def slash_key(team: str, channel: str, user: str) -> ConversationKey: ...

    @staticmethod
    def title_for(text: str) -> str: ...

    def soon(self, task: Callable[[], None], what: str, wait: bool = True) -> None: ...

    def suggested_prompts(self, language: i18n.Language,
                          user: str = "") -> list[dict[str, str]]: ...

    def stored_verdict(self, body: dict[str, Any], event: dict[str, Any], mentioned: bool,
                       retry: str | None = None) -> Verdict | None: ...

    def submit_command(self, key: ConversationKey, user: str, event_id: str,
                       command: Command, argument: str | None = None) -> None: ...

    def share(self, user: str, channel: str, result_id: str) -> None: ...

    def submit_choice(self, key: ConversationKey, user: str, event_id: str, reply: str,
                      result_id: str) -> None: ...

    def thread_of_result(self, result_id: str) -> str | None: ...

def _retry(req: BoltRequest) -> str | None:
    retries = req.headers.get("x-slack-retry-num")
    return retries[0] if retries else None


def on_error(error: Exception, logger: logging.Logger) -> BoltResponse | None:
    if isinstance(error, MalformedRequest):
        logger.warning("malformed request answered 400: %s", error)
        return BoltResponse(status=400, body="malformed request")
    if isinstance(error, AckDeadlineError):  # logged where it happened; Slack retries
        return BoltResponse(status=503, body="busy, please retry")
    if isinstance(error, StorageUnavailableError):
        return None  # logged once where it happened; Bolt still answers 500
    logger.exception(f"Failed to run listener function (error: {error})")
    return None


ListenerKind = Literal["event", "action", "shortcut", "command"]
LISTENERS: Final[tuple[tuple[ListenerKind, str, str], ...]] = (
    ("event", "app_mention", "on_mention"),
    ("event", "message", "on_message"),
    ("action", SHOW_SOURCES_ACTION, "on_show_sources"),
    ("action", CLEAR_THREAD_ACTION, "on_clear_button"),
    ("shortcut", CLEAR_THREAD_SHORTCUT, "on_clear_shortcut"),
    ("action", FEEDBACK_ACTION, "on_feedback"),
    ("action", ASK_HUMAN_ACTION, "on_ask_human"),
    ("command", "/docassist-admin", "on_admin"),
    ("command", "/docassist-meta", "on_meta"),
    ("command", "/docassist-docs", "on_docs"),
    ("command", "/docassist-help", "on_help"),
)
"""Which request each listener (a method of SlackListeners) answers: the whole app at a
glance (manifest.yml declares the same commands; tests/slack/test_manifest.py checks)."""


def register_listeners(adapter: SlackAdapter) -> None:
    """The middleware, the error handler, the assistant pane, then the flat table."""
    app = adapter.app
    app.middleware(ReadableText())
    app.error(on_error)
    listeners = SlackListeners(adapter)
    assistant = AssistantPane()
    assistant.thread_started(listeners.on_thread_started)
    assistant.user_message(listeners.on_assistant_message)
    app.assistant(assistant)
    register = {"event": app.event, "action": app.action, "shortcut": app.shortcut,
                "command": app.command}
    for kind, name, method in LISTENERS:
        register[kind](name)(getattr(listeners, method))


class SlackListeners:
    """Every Bolt listener as a method; LISTENERS says which request each one answers."""

    def __init__(self, adapter: SlackAdapter) -> None:
        self.adapter = adapter

    # --- messages -----------------------------------------------------------------------

    def on_thread_started(self, set_suggested_prompts: Any, event: dict[str, Any]) -> None:
        adapter = self.adapter
        language = adapter.config.default_language
        user = str((event.get("assistant_thread") or {}).get("user_id") or "")
        adapter.soon(lambda: set_suggested_prompts(
            prompts=adapter.suggested_prompts(language, user),
            title=i18n.text("slack_prompts_title", language)), "suggested prompts", wait=False)

    def on_assistant_message(self, body: dict[str, Any], event: dict[str, Any],
                             req: BoltRequest, set_title: Any) -> None:
        verdict = self.adapter.stored_verdict(body, event, mentioned=True, retry=_retry(req))
        if verdict != "admitted":
            return  # a retry or a refusal: the pane stays as it is

        def title() -> None:
            try:  # a DM thread outside the pane has no title to set
                set_title(self.adapter.title_for(str(event.get("text") or "")))
            except Exception as error:
                logger.info("assistant title not set: %s", error)

        self.adapter.soon(title, "assistant title", wait=False)  # a Web API call: not in the ack

    def on_mention(self, body: dict[str, Any], event: dict[str, Any], req: BoltRequest) -> None:
        self.adapter.stored_verdict(body, event, mentioned=True, retry=_retry(req))

    def on_message(self, body: dict[str, Any], event: dict[str, Any], req: BoltRequest) -> None:
        self.adapter.stored_verdict(body, event, mentioned=False, retry=_retry(req))

    # --- buttons and the shortcut -------------------------------------------------------

    def _button(self, ack: Any, body: dict[str, Any], command: Command) -> None:
        pressed = interaction(body, message=True)
        ack()
        channel = pressed.channel_id
        key = self.adapter.key_for(pressed.team_id, channel, pressed.thread,
                                   str(pressed.message_ts), pressed.channel_type)
        action_ts = pressed.actions[0].action_ts or pressed.trigger_id
        self.adapter.submit_command(key, pressed.user.id, f"action:{action_ts}", command)

    def on_show_sources(self, ack: Any, body: dict[str, Any]) -> None:
        self._button(ack, body, Command.SHOW_SOURCES)

    def on_clear_button(self, ack: Any, body: dict[str, Any]) -> None:
        self._button(ack, body, Command.CLEAR)

    def on_clear_shortcut(self, ack: Any, body: dict[str, Any]) -> None:
        shortcut = interaction(body, action=False, message=True)
        ack()
        channel = shortcut.channel_id
        key = self.adapter.key_for(shortcut.team_id, channel, shortcut.thread,
                                   str(shortcut.message_ts), shortcut.channel_type)
        self.adapter.submit_command(key, shortcut.user.id, f"shortcut:{shortcut.trigger_id}",
                                    Command.CLEAR)

    def on_feedback(self, ack: Any, body: dict[str, Any]) -> None:
        vote = interaction(body)
        ack()
        verdict, _, result_id = vote.actions[0].value.partition(":")
        self.adapter.soon(lambda: _record_vote(self.adapter, vote, result_id,
                                               verdict == "good"), "feedback")

    def on_ask_human(self, ack: Any, body: dict[str, Any]) -> None:
        request = interaction(body)
        ack()
        self.adapter.soon(lambda: _escalate(self.adapter, request, request.actions[0].value),
                          "ask a human")

    # --- slash commands -----------------------------------------------------------------

    def _admitted(self, command: SlashCommand) -> bool:
        """Once per invocation (a signed request sent again within Slack's window carries
        the same trigger id) and rate-limited like messages; over the limit, the user is
        told when to retry."""
        adapter = self.adapter
        language = i18n.detect_language(command.text, adapter.config.default_language)
        arrival = f"command:{command.trigger_id or uuid.uuid4().hex}"
        refused = adapter.admission.limit(command.user_id, arrival, language,
                                          once_on="slack" if command.trigger_id else None)
        if refused is not None and refused.notice is not None:
            _ephemeral(adapter, command, refused.notice.text())
        return refused is None

    def on_admin(self, ack: Any, body: dict[str, Any]) -> None:
        command = slash_command(body)
        ack()
        if self._admitted(command):
            self.adapter.soon(lambda: self.adapter.admin.handle(
                command.user_id, command.channel_id, command.text), "admin command")

    def on_meta(self, ack: Any, body: dict[str, Any]) -> None:
        command = slash_command(body)
        ack()
        if self._admitted(command):
            self.adapter.soon(lambda: _metadata(self.adapter, command), "metadata command")

    def on_docs(self, ack: Any, body: dict[str, Any]) -> None:
        command = slash_command(body)
        ack()
        if self._admitted(command):
            self.adapter.soon(lambda: _docs(self.adapter, command), "docs command")

    def on_help(self, ack: Any, body: dict[str, Any]) -> None:
        command = slash_command(body)
        ack()
        if self._admitted(command):
            language = i18n.detect_language(command.text, self.adapter.config.default_language)
            _ephemeral(self.adapter, command, i18n.text("slack_help", language))


def _record_vote(adapter: SlackAdapter, vote: Interaction, result_id: str,
                 positive: bool) -> None:
    user, channel = vote.user.id, vote.channel_id
    language = adapter.config.default_language
    client = adapter.client
    if not _answered_here(adapter, result_id, channel, user):
        return
    try:
        adapter.store.record_feedback(result_id, user, positive=positive)
    except StorageError as error:
        logger.warning("feedback not stored: %s", error)
        if isinstance(error, StorageUnavailableError):
            client.chat_postEphemeral(channel=channel, user=user,
                                      text=storage_problem_text(error, language))
        return
    if positive:
        client.chat_postEphemeral(channel=channel, user=user,
                                  text=i18n.text("feedback_thanks", language))
    else:
        if vote.trigger_id:
            ask_reason(client, vote.trigger_id,
                       reason_view(result_id, channel, vote.thread, language))
        client.chat_postEphemeral(channel=channel, user=user,
                                  blocks=ask_human_blocks(result_id, language),
                                  text=i18n.text("slack_ask_human_offer", language))


def _escalate(adapter: SlackAdapter, request: Interaction, result_id: str) -> None:
    """One request to the human channel per answer, however many clicks."""
    user, channel = request.user.id, request.channel_id
    language = adapter.config.default_language
    client = adapter.client
    if not _answered_here(adapter, result_id, channel, user):
        return
    try:
        first = adapter.store.record_escalation(result_id, user)
    except StorageError as error:
        logger.warning("escalation not stored: %s", error)
        if isinstance(error, StorageUnavailableError):
            client.chat_postEphemeral(channel=channel, user=user,
                                      text=storage_problem_text(error, language))
        return
    human_channel = adapter.config.human_channel
    if first:
        try:
            thread = adapter.thread_of_result(result_id)
            link = thread
            if thread is not None:
                link = str(client.chat_getPermalink(channel=channel,
                                                    message_ts=thread)["permalink"])
            client.chat_postMessage(channel=human_channel, text=i18n.text(
                "slack_human_request", language, user=user, link=link or channel))
        except Exception as error:  # not passed on: a later click tries again
            logger.warning("escalation of %s not posted: %s", result_id, error)
            adapter.store.withdraw_escalation(result_id)
            client.chat_postEphemeral(channel=channel, user=user,
                                      text=i18n.text("post_failed", language))
            return
    text_key = "slack_human_requested" if first else "slack_human_already_requested"
    client.chat_postEphemeral(channel=channel, user=user,
                              text=i18n.text(text_key, language, channel=human_channel))


def _answered_here(adapter: SlackAdapter, result_id: str, channel: str, user: str) -> bool:
    """A vote or "ask a human" names its answer by id: one from another channel (a crafted
    payload) is refused, and the user told; nothing is recorded."""
    if not answered_elsewhere(adapter.store.answer_place(result_id), "slack", channel):
        return True
    logger.warning("refused a click naming answer %s from another channel", result_id[:16])
    adapter.client.chat_postEphemeral(channel=channel, user=user, text=i18n.text(
        "feedback_elsewhere", adapter.config.default_language))
    return False


def _metadata(adapter: SlackAdapter, command: SlashCommand) -> None:
    key = adapter.slash_key(command.team_id, command.channel_id, command.user_id)
    result = adapter.engine.handle(ChatMessage(
        key=key, user=command.user_id, text=f"/docassist-meta {command.text}",
        command=Command.METADATA, command_argument=command.text,
        audience=slack_audience(command.channel_id, command.user_id, private=True)))
    if result is not None:
        _ephemeral(adapter, command, mrkdwn(result.answer))


def _docs(adapter: SlackAdapter, command: SlashCommand) -> None:
    # The list is ephemeral: the user's own collections decide what it shows.
    audience = slack_audience(command.channel_id, command.user_id, private=True)
    message = catalog_message(adapter.engine.catalog_for(audience).documents(),
                              adapter.config.default_language)
    adapter.client.chat_postEphemeral(channel=command.channel_id, user=command.user_id,
                                      **message)


def _ephemeral(adapter: SlackAdapter, command: SlashCommand, text: str) -> None:
    adapter.client.chat_postEphemeral(channel=command.channel_id, user=command.user_id,
                                      text=text)
