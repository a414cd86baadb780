"""The Slack adapter: Bolt listeners translate events to core messages and results to posts.

Events are stored in the durable inbox before Bolt acks them (`process_before_response`),
answered by the inbox worker in order per thread, and posted in the thread.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from slack_bolt import App, Assistant, BoltRequest
from slack_sdk import WebClient
from slack_sdk.http_retry.builtin_handlers import (
    ConnectionErrorRetryHandler,
    RateLimitErrorRetryHandler,
    ServerErrorRetryHandler,
)

from docassist.bot.commands import parse_text_command
from docassist.bot.slack.admin import AdminCommands
from docassist.bot.slack.render import (
    ASK_HUMAN_ACTION,
    CLEAR_THREAD_ACTION,
    CLEAR_THREAD_SHORTCUT,
    FEEDBACK_ACTION,
    SHOW_SOURCES_ACTION,
    ask_human_blocks,
    catalog_message,
    escape,
    mrkdwn,
    prompt_title,
    render,
    unescape,
)
from docassist.core import i18n
from docassist.core.errors import StorageError, StorageUnavailableError
from docassist.core.inbox import InboxWorker
from docassist.core.limits import INBOX_WORKERS
from docassist.core.messages import ChatMessage, Command, ConversationKey
from docassist.core.ratelimit import DEFAULT_GLOBAL, DEFAULT_PER_USER, RateLimiter
from docassist.core.replies import storage_problem_text
from docassist.core.results import TurnResult
from docassist.core.trace import sha256_text
from docassist.core.turn import TurnEngine
from docassist.storage import Store

logger = logging.getLogger(__name__)

PLATFORM: Final = "slack"
DM_THREAD: Final = "dm"
"""Top-level direct messages continue one conversation per DM channel."""
_MENTION: Final = re.compile(r"<@[A-Z0-9]+>")
PROMPT_COUNT: Final = 4
PROMPT_TITLE_CHARS: Final = 60
_IGNORED_SUBTYPES: Final = frozenset({
    "message_changed", "message_deleted", "bot_message", "channel_join", "channel_leave",
    "message_replied", "thread_broadcast", "channel_topic", "channel_purpose"})


@dataclass(frozen=True)
class SlackConfig:
    bot_token: str
    signing_secret: str
    api_url: str = "https://slack.com/api/"
    default_language: i18n.Language = "en"
    admin_users: frozenset[str] = frozenset()
    human_channel: str = "#docassist-help"
    per_user_per_minute: int = DEFAULT_PER_USER
    global_per_minute: int = DEFAULT_GLOBAL
    inbox_workers: int = INBOX_WORKERS


HISTORY_PAGE_SIZE: Final = 200
HISTORY_PAGES: Final = 5
"""How far back a restarted bot looks for an answer it may have posted before it died."""
ANSWER_EVENT_TYPE: Final = "docassist_answer"


def _answer_metadata(result: TurnResult) -> dict[str, Any]:
    return {"event_type": ANSWER_EVENT_TYPE, "event_payload": {"result_id": result.result_id}}


def _names_result(message: dict[str, Any], result_id: str) -> bool:
    payload = (message.get("metadata") or {}).get("event_payload") or {}
    if payload.get("result_id") == result_id:
        return True
    return f":{result_id}" in json.dumps(message.get("blocks") or [])  # feedback button values


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


def web_client(config: SlackConfig) -> WebClient:
    client = WebClient(token=config.bot_token, base_url=config.api_url)
    client.retry_handlers.extend([RateLimitErrorRetryHandler(max_retry_count=2),
                                  ServerErrorRetryHandler(max_retry_count=2),
                                  ConnectionErrorRetryHandler(max_retry_count=1)])
    return client


class SlackAdapter:
    def __init__(self, engine: TurnEngine, store: Store, config: SlackConfig,
                 client: WebClient | None = None) -> None:
        self.engine = engine
        self.store = store
        self.config = config
        self.client = client or web_client(config)
        self.worker = InboxWorker(engine, store, self.deliver, workers=config.inbox_workers,
                                  on_undeliverable=self.tell_undeliverable,
                                  partial_sink=self.stream_for,
                                  already_delivered=self.already_delivered)
        self.limiter = RateLimiter(config.per_user_per_minute, config.global_per_minute)
        self._streams: dict[str, SlackStream] = {}
        self._streams_lock = threading.Lock()
        # The bot token lives in the client; Bolt uses the client's.
        self.app = App(signing_secret=config.signing_secret, client=self.client,
                       process_before_response=True)
        self.admin = AdminCommands(store, self.client, config.admin_users,
                                   config.default_language)
        self._register()

    # --- translation ------------------------------------------------------------------

    @staticmethod
    def key_for(team: str, channel: str, thread_ts: str | None, ts: str,
                channel_type: str | None) -> ConversationKey:
        thread = DM_THREAD if channel_type == "im" and not thread_ts else thread_ts or ts
        return ConversationKey(platform=PLATFORM, workspace=team, channel=channel, thread=thread)

    def _is_bot_thread(self, key: ConversationKey) -> bool:
        """A thread DocAssist answers in, or was asked in: under load the first answer may
        not be committed yet when the follow-up arrives."""
        return (self.store.inbox_has_conversation(key.conversation_id)
                or self.store.load(key).version > 0)

    def _submit_event(self, body: dict[str, Any], event: dict[str, Any], mentioned: bool,
                      req: BoltRequest | None = None) -> None:
        if event.get("subtype") in _IGNORED_SUBTYPES or event.get("bot_id"):
            return  # edits, deletions, bots (our own messages included)
        team = str(body.get("team_id") or event.get("team") or "")
        channel, ts = str(event.get("channel")), str(event.get("ts"))
        channel_type = event.get("channel_type")
        key = self.key_for(team, channel, event.get("thread_ts"), ts, channel_type)
        in_dm = channel_type == "im"
        if not (mentioned or in_dm or (event.get("thread_ts") and self._is_bot_thread(key))):
            return  # channel chatter that is not addressed to us
        event_id, dedupe_key = str(body.get("event_id") or f"{channel}:{ts}"), f"{channel}:{ts}"
        if self.store.inbox_seen(PLATFORM, event_id, dedupe_key):
            return  # a retry or the same message as another event: already handled
        language = i18n.detect_language(str(event.get("text") or ""),
                                        self.config.default_language)
        user_team = event.get("user_team")
        if user_team and team and user_team != team:
            self._post_text(key, i18n.text("external_user", language))
            return
        text = unescape(_MENTION.sub("", str(event.get("text") or ""))).strip()
        if event.get("files"):
            self._post_text(key, i18n.text("attachments_ignored", language))
            if not text:
                return
        wait = self.limiter.check(str(event.get("user")))
        if wait:
            logger.warning("rate limit: event %s from %s answered with a retry hint",
                           body.get("event_id"), sha256_text(str(event.get("user"))))
            self._post_text(key, i18n.text("rate_limited", language, seconds=wait))
            return
        parsed = parse_text_command(text)
        command = Command.CLEAR if parsed is not None and parsed.name == "clear" else None
        message = ChatMessage(key=key, user=str(event.get("user")), text=text, command=command,
                              event_id=event_id)
        try:
            self.worker.submit(message, dedupe_key=dedupe_key)
        except StorageUnavailableError as error:
            # Not stored, so not acked: Bolt answers 500 and Slack redelivers the event (up to
            # three times). The user hears about it once, on the first delivery.
            retries = req.headers.get("x-slack-retry-num") if req else None
            retry = retries[0] if retries else None
            logger.error("event %s not stored, Slack gets a 500 (retry %s): %s",
                         event_id, retry or 0, error)
            if retry is None:
                self._tell_not_stored(key, language, error)
            raise

    def _submit_command(self, key: ConversationKey, user: str, event_id: str,
                        command: Command) -> None:
        try:
            self.worker.submit(ChatMessage(key=key, user=user, text="", command=command,
                                           event_id=event_id))
        except StorageUnavailableError as error:  # Slack does not redeliver button presses
            logger.error("action %s not stored: %s", event_id, error)
            self._tell_not_stored(key, self.config.default_language, error)

    def _tell_not_stored(self, key: ConversationKey, language: i18n.Language,
                         error: StorageUnavailableError) -> None:
        try:
            self._post_text(key, storage_problem_text(error, language))
        except Exception as problem:
            logger.warning("could not tell the user that an event was not stored: %s", problem)

    # --- posting ----------------------------------------------------------------------

    @staticmethod
    def _thread_ts(key: ConversationKey) -> str | None:
        return None if key.thread == DM_THREAD else key.thread

    def stream_for(self, message: ChatMessage) -> Callable[[str], None]:
        """Streamed sentences go to a Slack message stream (where the workspace allows)."""
        stream = SlackStream(self.client, message.key.channel, self._thread_ts(message.key),
                             message.key.workspace, message.user)
        with self._streams_lock:
            self._streams[str(message.event_id)] = stream
        return stream.append

    def deliver(self, message: ChatMessage, result: TurnResult) -> None:
        with self._streams_lock:
            stream = self._streams.pop(str(message.event_id), None)
        if stream is not None and stream.finish(result):
            return  # the answer was streamed; the stream now carries sources and buttons
        if message.key.channel.startswith("D") and message.key.thread != DM_THREAD:
            self._set_status(message.key, "slack_status_writing")
        parts = render(result)
        for index, part in enumerate(parts):
            # The last part names its result: a restarted bot can see it was posted.
            metadata = _answer_metadata(result) if index == len(parts) - 1 else None
            self.client.chat_postMessage(channel=message.key.channel,
                                         thread_ts=self._thread_ts(message.key),
                                         metadata=metadata, **part)

    def already_delivered(self, message: ChatMessage, result: TurnResult) -> bool:
        """Is the answer with this result id in the thread already (a post's metadata, or the
        feedback buttons a finished stream carries)? Asked only for events resumed after a
        restart, whose previous process may have died between the post and `done`."""
        thread_ts = self._thread_ts(message.key)
        cursor: str | None = None
        for _ in range(HISTORY_PAGES):
            if thread_ts is None:
                page = self.client.conversations_history(
                    channel=message.key.channel, limit=HISTORY_PAGE_SIZE, cursor=cursor,
                    include_all_metadata=True)
            else:
                page = self.client.conversations_replies(
                    channel=message.key.channel, ts=thread_ts, limit=HISTORY_PAGE_SIZE,
                    cursor=cursor, include_all_metadata=True)
            messages: list[dict[str, Any]] = page.get("messages") or []
            if any(_names_result(item, result.result_id) for item in messages):
                return True
            cursor = (page.get("response_metadata") or {}).get("next_cursor")
            if not page.get("has_more") or not cursor:
                return False
        return False

    def _set_status(self, key: ConversationKey, text_key: str) -> None:
        """The assistant pane's status line; harmless to fail outside the pane."""
        try:
            self.client.assistant_threads_setStatus(
                channel_id=key.channel, thread_ts=key.thread,
                status=i18n.text(text_key, self.config.default_language))
        except Exception as error:
            logger.info("status not set: %s", error)

    def suggested_prompts(self, language: i18n.Language) -> list[dict[str, str]]:
        prompts = []
        for document in self.store.documents()[:PROMPT_COUNT]:
            text = i18n.text("slack_prompt", language, title=document.title)
            prompts.append({"title": prompt_title(text[:PROMPT_TITLE_CHARS]),
                            "message": escape(text)})
        return prompts

    def _post_text(self, key: ConversationKey, text: str) -> None:
        self.client.chat_postMessage(channel=key.channel, thread_ts=self._thread_ts(key),
                                     text=text)

    def tell_undeliverable(self, message: ChatMessage, _reason: str) -> None:
        self._post_text(message.key, i18n.text("post_failed",
                                               self.config.default_language))

    # --- listeners --------------------------------------------------------------------

    def _register(self) -> None:
        app = self.app
        assistant = Assistant()

        @assistant.thread_started
        def on_thread_started(set_suggested_prompts: Any) -> None:
            language = self.config.default_language
            set_suggested_prompts(prompts=self.suggested_prompts(language),
                                  title=i18n.text("slack_prompts_title", language))

        @assistant.user_message
        def on_assistant_message(body: dict[str, Any], event: dict[str, Any], req: BoltRequest,
                                 set_title: Any, set_status: Any) -> None:
            self._submit_event(body, event, mentioned=True, req=req)  # stored first
            text = str(event.get("text") or "")
            language = i18n.detect_language(text, self.config.default_language)
            try:  # a DM thread outside the pane has no title or status to set
                set_title(text[:PROMPT_TITLE_CHARS])
                set_status(i18n.text("slack_status_searching", language))
            except Exception as error:
                logger.info("assistant title/status not set: %s", error)

        app.assistant(assistant)

        @app.event("app_mention")
        def on_mention(body: dict[str, Any], event: dict[str, Any], req: BoltRequest) -> None:
            self._submit_event(body, event, mentioned=True, req=req)

        @app.event("message")
        def on_message(body: dict[str, Any], event: dict[str, Any], req: BoltRequest) -> None:
            self._submit_event(body, event, mentioned=False, req=req)

        @app.error
        def on_error(error: Exception, logger: logging.Logger) -> None:
            if isinstance(error, StorageUnavailableError):
                return  # logged once where it happened; Bolt still answers 500
            logger.exception(f"Failed to run listener function (error: {error})")

        def on_button(command: Command) -> Any:
            def listener(ack: Any, body: dict[str, Any]) -> None:
                ack()
                container = body.get("container") or {}
                message = body.get("message") or {}
                team = str((body.get("team") or {}).get("id") or "")
                channel = str(container.get("channel_id") or (body.get("channel") or {})["id"])
                thread = message.get("thread_ts") or container.get("thread_ts")
                channel_type = "im" if channel.startswith("D") else None
                key = self.key_for(team, channel, thread, str(message.get("ts")), channel_type)
                action_ts = str(body["actions"][0].get("action_ts") or body.get("trigger_id"))
                self._submit_command(key, str(body["user"]["id"]), f"action:{action_ts}",
                                     command)
            return listener

        app.action(SHOW_SOURCES_ACTION)(on_button(Command.SHOW_SOURCES))
        app.action(CLEAR_THREAD_ACTION)(on_button(Command.CLEAR))

        @app.shortcut(CLEAR_THREAD_SHORTCUT)
        def on_clear_shortcut(ack: Any, body: dict[str, Any]) -> None:
            ack()
            message = body["message"]
            channel = str(body["channel"]["id"])
            team = str((body.get("team") or {}).get("id") or "")
            channel_type = "im" if channel.startswith("D") else None
            key = self.key_for(team, channel, message.get("thread_ts"), str(message["ts"]),
                               channel_type)
            self._submit_command(key, str(body["user"]["id"]),
                                 f"shortcut:{body.get('trigger_id')}", Command.CLEAR)

        @app.action(FEEDBACK_ACTION)
        def on_feedback(ack: Any, body: dict[str, Any]) -> None:
            ack()
            verdict, _, result_id = str(body["actions"][0].get("value", "")).partition(":")
            user, channel = str(body["user"]["id"]), self._action_channel(body)
            language = self.config.default_language
            try:
                self.store.record_feedback(result_id, user, positive=verdict == "good")
            except StorageError as error:
                logger.warning("feedback not stored: %s", error)
                if isinstance(error, StorageUnavailableError):
                    self.client.chat_postEphemeral(channel=channel, user=user,
                                                   text=storage_problem_text(error, language))
                return
            if verdict == "good":
                self.client.chat_postEphemeral(channel=channel, user=user,
                                               text=i18n.text("feedback_thanks", language))
            else:
                self.client.chat_postEphemeral(
                    channel=channel, user=user, blocks=ask_human_blocks(result_id, language),
                    text=i18n.text("slack_ask_human_offer", language))

        @app.action(ASK_HUMAN_ACTION)
        def on_ask_human(ack: Any, body: dict[str, Any]) -> None:
            ack()
            user, channel = str(body["user"]["id"]), self._action_channel(body)
            language = self.config.default_language
            thread = self._thread_of_result(str(body["actions"][0].get("value", "")))
            link = thread
            if thread is not None:
                link = str(self.client.chat_getPermalink(channel=channel,
                                                         message_ts=thread)["permalink"])
            self.client.chat_postMessage(
                channel=self.config.human_channel,
                text=i18n.text("slack_human_request", language, user=user,
                               link=link or channel))
            self.client.chat_postEphemeral(
                channel=channel, user=user,
                text=i18n.text("slack_human_requested", language,
                               channel=self.config.human_channel))

        @app.command("/docassist-admin")
        def on_admin(ack: Any, body: dict[str, Any]) -> None:
            ack()
            self.admin.handle(str(body["user_id"]), str(body["channel_id"]),
                              str(body.get("text") or ""))

        @app.command("/docassist-meta")
        def on_meta(ack: Any, body: dict[str, Any]) -> None:
            ack()
            key = ConversationKey(platform=PLATFORM, workspace=str(body.get("team_id")),
                                  channel=str(body["channel_id"]),
                                  thread=f"slash-{body['user_id']}")
            result = self.engine.handle(ChatMessage(
                key=key, user=str(body["user_id"]), text=f"/docassist-meta {body.get('text')}",
                command=Command.METADATA, command_argument=str(body.get("text") or "")))
            if result is not None:
                self._ephemeral(body, mrkdwn(result.answer))

        @app.command("/docassist-docs")
        def on_docs(ack: Any, body: dict[str, Any]) -> None:
            ack()
            message = catalog_message(self.store.documents(), self.config.default_language)
            self.client.chat_postEphemeral(channel=str(body["channel_id"]),
                                           user=str(body["user_id"]), **message)

        @app.command("/docassist-help")
        def on_help(ack: Any, body: dict[str, Any]) -> None:
            ack()
            language = i18n.detect_language(str(body.get("text") or ""),
                                            self.config.default_language)
            self._ephemeral(body, i18n.text("slack_help", language))

    @staticmethod
    def _action_channel(body: dict[str, Any]) -> str:
        container = body.get("container") or {}
        return str(container.get("channel_id") or (body.get("channel") or {}).get("id"))

    def _thread_of_result(self, result_id: str) -> str | None:
        """The Slack thread ts of the turn a result id belongs to."""
        for row in self.store.conversation_of_result(result_id):
            thread = str(row["thread"])
            return None if thread == DM_THREAD else thread
        return None

    def _ephemeral(self, body: dict[str, Any], text: str) -> None:
        self.client.chat_postEphemeral(channel=str(body["channel_id"]),
                                       user=str(body["user_id"]), text=text)
