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
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from slack_bolt import App, Assistant, BoltRequest, BoltResponse
from slack_sdk import WebClient

from docassist.bot.hygiene import MalformedRequest, without_lone_surrogates
from docassist.bot.slack.admin import AdminCommands
from docassist.bot.slack.config import SlackConfig
from docassist.bot.slack.feedback import ask_reason, reason_view
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
from docassist.core.admission import Admission, Verdict
from docassist.core.errors import AckDeadlineError, StorageError, StorageUnavailableError
from docassist.core.messages import ChatMessage, Command, ConversationKey
from docassist.core.ports import Catalog, FeedbackLog
from docassist.core.replies import storage_problem_text
from docassist.core.results import TurnResult

logger = logging.getLogger(__name__)


class ListenerStore(Catalog, FeedbackLog, Protocol):
    """What the listeners read and write themselves (turns go through the adapter)."""


class TurnHandler(Protocol):
    def handle(self, message: ChatMessage) -> TurnResult | None: ...


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

    def soon(self, task: Callable[[], None], what: str) -> None: ...

    def suggested_prompts(self, language: i18n.Language) -> list[dict[str, str]]: ...

    def submit_event(self, body: dict[str, Any], event: dict[str, Any], mentioned: bool,
                     retry: str | None = None) -> Verdict | None: ...

    def submit_command(self, key: ConversationKey, user: str, event_id: str,
                       command: Command) -> None: ...

    def share(self, user: str, channel: str, result_id: str) -> None: ...

    def submit_choice(self, key: ConversationKey, user: str, event_id: str, reply: str,
                      result_id: str) -> None: ...

    def thread_of_result(self, result_id: str) -> str | None: ...

class _Id(BaseModel):
    model_config = ConfigDict(extra="ignore")
    id: str


class _Action(BaseModel):
    model_config = ConfigDict(extra="ignore")
    action_id: str = ""
    value: str = ""
    action_ts: str | None = None


class Interaction(BaseModel):
    """A button press or message shortcut, as far as DocAssist reads it."""

    model_config = ConfigDict(extra="ignore")
    user: _Id
    team: _Id | None = None
    channel: _Id | None = None
    container: dict[str, Any] = Field(default_factory=dict)
    message: dict[str, Any] = Field(default_factory=dict)
    actions: list[_Action] = Field(default_factory=list)
    trigger_id: str | None = None

    @property
    def channel_id(self) -> str:
        return str(self.container.get("channel_id") or (self.channel.id if self.channel else ""))

    @property
    def team_id(self) -> str:
        return self.team.id if self.team else ""

    @property
    def thread(self) -> str | None:
        return self.message.get("thread_ts") or self.container.get("thread_ts")

    @property
    def message_ts(self) -> str | None:
        return self.message.get("ts") or self.container.get("message_ts")


class SlashCommand(BaseModel):
    model_config = ConfigDict(extra="ignore")
    user_id: str
    channel_id: str
    team_id: str = ""
    text: str = ""
    trigger_id: str = ""


def interaction(body: dict[str, Any], *, action: bool = True,
                message: bool = False) -> Interaction:
    try:
        parsed = Interaction.model_validate(body)
    except ValidationError as error:
        raise MalformedRequest(f"interactive payload: {error.error_count()} problem(s)") from None
    if not parsed.channel_id:
        raise MalformedRequest("interactive payload without a channel")
    if (action and not parsed.actions) or (message and not parsed.message_ts):
        raise MalformedRequest("interactive payload without its action or message")
    return parsed


def slash_command(body: dict[str, Any]) -> SlashCommand:
    try:
        return SlashCommand.model_validate(body)
    except ValidationError as error:
        raise MalformedRequest(f"slash command: {error.error_count()} problem(s)") from None


def _retry(req: BoltRequest) -> str | None:
    retries = req.headers.get("x-slack-retry-num")
    return retries[0] if retries else None


def register_listeners(adapter: SlackAdapter) -> None:
    app = adapter.app

    @app.middleware
    def readable_text(req: BoltRequest, resp: BoltResponse, next: Any) -> None:
        # After the signature check, before any listener: text that cannot be stored (a
        # lone surrogate escape) becomes U+FFFD instead of a 500 and no reply.
        req.body = without_lone_surrogates(req.body)
        next()

    @app.error
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

    _register_messages(adapter)
    _register_buttons(adapter)
    _register_commands(adapter)



def _register_messages(adapter: SlackAdapter) -> None:
    app = adapter.app
    assistant = Assistant()

    @assistant.thread_started
    def on_thread_started(set_suggested_prompts: Any) -> None:
        language = adapter.config.default_language
        adapter.soon(lambda: set_suggested_prompts(
            prompts=adapter.suggested_prompts(language),
            title=i18n.text("slack_prompts_title", language)), "suggested prompts")

    @assistant.user_message
    def on_assistant_message(body: dict[str, Any], event: dict[str, Any], req: BoltRequest,
                             set_title: Any) -> None:
        verdict = adapter.submit_event(body, event, mentioned=True, retry=_retry(req))
        if verdict != "admitted":
            return  # a retry or a refusal: the pane stays as it is
        try:  # a DM thread outside the pane has no title to set
            set_title(adapter.title_for(str(event.get("text") or "")))
        except Exception as error:
            logger.info("assistant title not set: %s", error)

    app.assistant(assistant)

    @app.event("app_mention")
    def on_mention(body: dict[str, Any], event: dict[str, Any], req: BoltRequest) -> None:
        adapter.submit_event(body, event, mentioned=True, retry=_retry(req))

    @app.event("message")
    def on_message(body: dict[str, Any], event: dict[str, Any], req: BoltRequest) -> None:
        adapter.submit_event(body, event, mentioned=False, retry=_retry(req))


def _register_buttons(adapter: SlackAdapter) -> None:
    app = adapter.app

    def on_button(command: Command) -> Any:
        def listener(ack: Any, body: dict[str, Any]) -> None:
            pressed = interaction(body, message=True)
            ack()
            channel = pressed.channel_id
            key = adapter.key_for(pressed.team_id, channel, pressed.thread,
                                  str(pressed.message_ts), _channel_type(channel))
            action_ts = pressed.actions[0].action_ts or pressed.trigger_id
            adapter.submit_command(key, pressed.user.id, f"action:{action_ts}", command)
        return listener

    app.action(SHOW_SOURCES_ACTION)(on_button(Command.SHOW_SOURCES))
    app.action(CLEAR_THREAD_ACTION)(on_button(Command.CLEAR))

    @app.shortcut(CLEAR_THREAD_SHORTCUT)
    def on_clear_shortcut(ack: Any, body: dict[str, Any]) -> None:
        shortcut = interaction(body, action=False, message=True)
        ack()
        channel = shortcut.channel_id
        key = adapter.key_for(shortcut.team_id, channel, shortcut.thread,
                              str(shortcut.message_ts), _channel_type(channel))
        adapter.submit_command(key, shortcut.user.id, f"shortcut:{shortcut.trigger_id}",
                               Command.CLEAR)

    @app.action(FEEDBACK_ACTION)
    def on_feedback(ack: Any, body: dict[str, Any]) -> None:
        vote = interaction(body)
        ack()
        verdict, _, result_id = vote.actions[0].value.partition(":")
        adapter.soon(lambda: _record_vote(adapter, vote, result_id, verdict == "good"),
                     "feedback")

    @app.action(ASK_HUMAN_ACTION)
    def on_ask_human(ack: Any, body: dict[str, Any]) -> None:
        request = interaction(body)
        ack()
        adapter.soon(lambda: _escalate(adapter, request, request.actions[0].value),
                     "ask a human")


def _channel_type(channel: str) -> str | None:
    return "im" if channel.startswith("D") else None


def _record_vote(adapter: SlackAdapter, vote: Interaction, result_id: str,
                 positive: bool) -> None:
    user, channel = vote.user.id, vote.channel_id
    language = adapter.config.default_language
    client = adapter.client
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


def _register_commands(adapter: SlackAdapter) -> None:
    app = adapter.app

    def admitted(command: SlashCommand) -> bool:
        """Rate-limited like messages; over the limit, the user is told when to retry."""
        language = i18n.detect_language(command.text, adapter.config.default_language)
        arrival = f"command:{command.trigger_id or uuid.uuid4().hex}"
        limited = adapter.admission.limit(command.user_id, arrival, language)
        if limited is not None:
            _ephemeral(adapter, command, limited.text())
        return limited is None

    @app.command("/docassist-admin")
    def on_admin(ack: Any, body: dict[str, Any]) -> None:
        command = slash_command(body)
        ack()
        if admitted(command):
            adapter.soon(lambda: adapter.admin.handle(command.user_id, command.channel_id,
                                                      command.text), "admin command")

    @app.command("/docassist-meta")
    def on_meta(ack: Any, body: dict[str, Any]) -> None:
        command = slash_command(body)
        ack()
        if admitted(command):
            adapter.soon(lambda: _metadata(adapter, command), "metadata command")

    @app.command("/docassist-docs")
    def on_docs(ack: Any, body: dict[str, Any]) -> None:
        command = slash_command(body)
        ack()
        if admitted(command):
            adapter.soon(lambda: _docs(adapter, command), "docs command")

    @app.command("/docassist-help")
    def on_help(ack: Any, body: dict[str, Any]) -> None:
        command = slash_command(body)
        ack()
        if admitted(command):
            language = i18n.detect_language(command.text, adapter.config.default_language)
            _ephemeral(adapter, command, i18n.text("slack_help", language))


def _metadata(adapter: SlackAdapter, command: SlashCommand) -> None:
    key = adapter.slash_key(command.team_id, command.channel_id, command.user_id)
    result = adapter.engine.handle(ChatMessage(
        key=key, user=command.user_id, text=f"/docassist-meta {command.text}",
        command=Command.METADATA, command_argument=command.text))
    if result is not None:
        _ephemeral(adapter, command, mrkdwn(result.answer))


def _docs(adapter: SlackAdapter, command: SlashCommand) -> None:
    message = catalog_message(adapter.store.documents(), adapter.config.default_language)
    adapter.client.chat_postEphemeral(channel=command.channel_id, user=command.user_id,
                                      **message)


def _ephemeral(adapter: SlackAdapter, command: SlashCommand, text: str) -> None:
    adapter.client.chat_postEphemeral(channel=command.channel_id, user=command.user_id,
                                      text=text)
