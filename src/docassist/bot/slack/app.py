"""The Slack adapter: Bolt listeners translate events to core messages and results to posts.

Events are stored in the durable inbox before Bolt acks them (`process_before_response`),
answered by the inbox worker in order per thread, and posted in the thread.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, Final

from slack_bolt import App
from slack_sdk import WebClient
from slack_sdk.http_retry.builtin_handlers import (
    ConnectionErrorRetryHandler,
    RateLimitErrorRetryHandler,
    ServerErrorRetryHandler,
)

from docassist.bot.commands import parse_text_command
from docassist.bot.slack.admin import AdminCommands
from docassist.bot.slack.audience import PLATFORM, click_audience, slack_audience
from docassist.bot.slack.bolt_log import quiet_token_warning
from docassist.bot.slack.config import SlackConfig as SlackConfig  # its import path so far
from docassist.bot.slack.interactions import register_interactions
from docassist.bot.slack.listeners import register_listeners
from docassist.bot.slack.posted import in_history, metadata_for
from docassist.bot.slack.private import PrivateAnswers
from docassist.bot.slack.render import escape, prompt_title, render, unescape
from docassist.bot.slack.stale import SlackStaleNotes
from docassist.bot.slack.stream import SlackStream
from docassist.bot.slack.web_api import KeptAliveWebClient
from docassist.core import i18n
from docassist.core.errors import AckDeadlineError, StorageUnavailableError
from docassist.core.limits import ACK_DEADLINE_SECONDS
from docassist.core.messages import ChatMessage, Command, ConversationKey
from docassist.core.ports import AdapterStore
from docassist.core.replies import storage_problem_text
from docassist.core.results import TurnResult
from docassist.core.statuses import Verdict
from docassist.core.turn import TurnEngine
from docassist.serving.ack_writes import stored_within
from docassist.serving.admission import Admission, Arrival
from docassist.serving.delivery import Outlet
from docassist.serving.inbox import InboxWorker
from docassist.serving.ratelimit import SharedRateLimiter

logger = logging.getLogger(__name__)

DM_THREAD: Final = "dm"
"""Top-level direct messages continue one conversation per DM channel."""
_MENTION: Final = re.compile(r"<@[A-Z0-9]+>")
PROMPT_COUNT: Final = 4
PROMPT_TITLE_CHARS: Final = 60
ANSWERED_SUBTYPES: Final = frozenset({None, "thread_broadcast", "file_share", "me_message"})
"""Messages people write (a reply also sent to the channel is one). Everything else — edits,
deletions, bots, and system messages such as channel_join, channel_name or pinned_item — is
not a question, even in a thread DocAssist answers in."""
BACKGROUND_WORKERS: Final = 8


def web_client(config: SlackConfig) -> WebClient:
    client = KeptAliveWebClient(token=config.bot_token, base_url=config.api_url)
    client.retry_handlers.extend([RateLimitErrorRetryHandler(max_retry_count=2),
                                  ServerErrorRetryHandler(max_retry_count=2),
                                  ConnectionErrorRetryHandler(max_retry_count=1)])
    return client


class SlackAdapter:
    def __init__(self, engine: TurnEngine, store: AdapterStore, config: SlackConfig,
                 client: WebClient | None = None,
                 handoff: Callable[[], None] | None = None) -> None:
        """With `handoff`, this process stores events and runs no turn: `handoff` wakes
        the turn processes that do (turn_processes.py)."""
        self.engine = engine
        self.store = store
        self.config = config
        self.client = client or web_client(config)
        outlet = Outlet(self.deliver, PLATFORM, notice=self.deliver_notice,
                        already_delivered=self.already_delivered,
                        undeliverable=self.tell_undeliverable, stream_for=self.stream_for,
                        before_turn=self.before_turn)
        self.worker = InboxWorker(engine, store, outlet,
                                  workers=0 if handoff else config.inbox_workers,
                                  on_stored=handoff, replica=config.replica,
                                  lease_seconds=config.inbox_lease)
        self.limiter = SharedRateLimiter(store, config.per_user_per_minute,
                                         config.global_per_minute)
        self.admission = Admission(store, self.limiter, self.worker)
        self._background = ThreadPoolExecutor(max_workers=BACKGROUND_WORKERS,
                                              thread_name_prefix="slack-work")
        self._streams: dict[str, SlackStream] = {}
        self._streams_lock = threading.Lock()
        # The bot token lives in the client; Bolt uses the client's (bolt_log.py: no warning).
        quiet_token_warning()
        self.app = App(signing_secret=config.signing_secret, client=self.client,
                       process_before_response=True)
        self.admin = AdminCommands(store, self.client, config.admin_users,
                                   config.default_language)
        self.private = PrivateAnswers(self)  # ephemeral answers and "share" (private.py)
        register_listeners(self)
        register_interactions(self)
        self.stale_notes = SlackStaleNotes(self)  # notes about changed citations (stale.py)

    # --- translation ------------------------------------------------------------------

    @staticmethod
    def key_for(team: str, channel: str, thread_ts: str | None, ts: str,
                channel_type: str | None) -> ConversationKey:
        thread = DM_THREAD if channel_type == "im" and not thread_ts else thread_ts or ts
        return ConversationKey(platform=PLATFORM, workspace=team, channel=channel, thread=thread)

    @staticmethod
    def slash_key(team: str, channel: str, user: str) -> ConversationKey:
        """Slash commands answer ephemerally: one conversation per user and channel."""
        return ConversationKey(platform=PLATFORM, workspace=team, channel=channel,
                               thread=f"slash-{user}")

    @staticmethod
    def title_for(text: str) -> str:
        return text[:PROMPT_TITLE_CHARS]

    def _is_bot_thread(self, key: ConversationKey) -> bool:
        """A thread DocAssist answers in, or was asked in: under load the first answer may
        not be committed yet when the follow-up arrives."""
        return self.store.conversation_known(key.conversation_id)

    @staticmethod
    def needs_thread_lookup(event: dict[str, Any], mentioned: bool) -> bool:
        """Whether translating this event reads the store: a reply in a channel thread that
        does not mention the bot is ours only in a thread DocAssist takes part in."""
        return (not mentioned and event.get("channel_type") != "im"
                and bool(event.get("thread_ts")))

    def arrival_for(self, body: dict[str, Any], event: dict[str, Any], mentioned: bool,
                    retry: str | None = None) -> Arrival | None:
        """A message event as admission sees it; None when it is not for us."""
        if event.get("subtype") not in ANSWERED_SUBTYPES or event.get("bot_id"):
            return None  # edits, deletions, system messages, bots (our own included)
        team = str(body.get("team_id") or event.get("team") or "")
        channel, ts = str(event.get("channel")), str(event.get("ts"))
        channel_type = event.get("channel_type")
        key = self.key_for(team, channel, event.get("thread_ts"), ts, channel_type)
        in_dm = channel_type == "im"
        if self.needs_thread_lookup(event, mentioned):
            if not self._is_bot_thread(key):
                return None  # channel chatter in a thread that is not ours
        elif not (mentioned or in_dm):
            return None  # channel chatter that is not addressed to us
        event_id, dedupe_key = str(body.get("event_id") or f"{channel}:{ts}"), f"{channel}:{ts}"
        raw = str(event.get("text") or "")
        language = i18n.detect_language(raw, self.config.default_language)
        text = unescape(_MENTION.sub("", raw)).strip()
        parsed = parse_text_command(text)
        command = Command.CLEAR if parsed is not None and parsed.name == "clear" else None
        user_team = event.get("user_team")
        user = str(event.get("user"))
        external = bool(user_team and team and user_team != team)
        # In a private-answers channel only the asker sees the answer (ephemeral): their
        # own scope; sharing it is checked against the channel's (core.sharing.may_share).
        private = in_dm or self.private.applies(key)
        audience = slack_audience(channel, user, private=private,
                                  shared=bool(body.get("is_ext_shared_channel")) or external)
        message = ChatMessage(key=key, user=user, text=text, command=command,
                              event_id=event_id, audience=audience)
        return Arrival(message, language, dedupe_key, external_user=external,
                       attachments=bool(event.get("files")), redelivered=retry is not None)

    def submit_event(self, body: dict[str, Any], event: dict[str, Any], mentioned: bool,
                     retry: str | None = None) -> Future[Verdict] | None:
        """A message event, translated and handed to admission: the one way in, whether it
        came through the events lane (on the event loop), Bolt or Socket Mode. Returns at
        once: None when it is not for us, else a Future of its verdict once committed. A
        caller on the event loop must have checked `needs_thread_lookup` (that read would
        block). Not stored, the Future says why (Slack gets a 500, or the 503 it got at the
        deadline, and redelivers); the user hears of it once, on the first delivery."""
        arrival = self.arrival_for(body, event, mentioned, retry)
        if arrival is None:
            return None
        verdict = self.admission.store(arrival)
        key, language = arrival.message.key, arrival.language

        def failed(done: Future[Verdict]) -> None:  # on the group commit's thread
            error = done.exception()
            if not isinstance(error, StorageUnavailableError):
                return  # stored, or a bug the server logs with its 500
            logger.error("event %s not stored, Slack redelivers it (retry %s): %s",
                         arrival.message.event_id, retry or 0, error)  # a 500, or the 503
            if not arrival.redelivered:  # once, on the first delivery; not on this thread
                self.soon(lambda: self.tell_not_stored(key, language, error),
                          "storage problem note", wait=False)

        verdict.add_done_callback(failed)
        return verdict

    def stored_verdict(self, body: dict[str, Any], event: dict[str, Any], mentioned: bool,
                       retry: str | None = None) -> Verdict | None:
        """`submit_event` for a listener on a thread of its own (Bolt's, Socket Mode's): its
        verdict, waited for at most the ack deadline. Raises when the event was not stored
        (StorageUnavailableError: a 500) or not yet (AckDeadlineError: a 503, the write
        going on); Slack redelivers either way."""
        verdict = self.submit_event(body, event, mentioned, retry)
        if verdict is None:
            return None
        event_id = str(body.get("event_id") or "")
        try:
            return stored_within(verdict, ACK_DEADLINE_SECONDS, f"event {event_id}")
        except AckDeadlineError:
            logger.warning("event %s not stored in time, Slack gets a 503 (retry %s)",
                           event_id, retry or 0)
            raise

    def submit_command(self, key: ConversationKey, user: str, event_id: str,
                       command: Command, argument: str | None = None) -> None:
        """A button or shortcut: rate-limited (told ephemerally), then through the inbox."""
        self._submit_click(ChatMessage(key=key, user=user, text="", command=command,
                                       command_argument=argument, event_id=event_id,
                                       audience=click_audience(key, user)))

    def submit_choice(self, key: ConversationKey, user: str, event_id: str, reply: str,
                      result_id: str) -> None:
        """A clarification's button: its reply, as if typed, through the same inbox and turn."""
        self._submit_click(ChatMessage(key=key, user=user, text=reply, event_id=event_id,
                                       choice_for=result_id,
                                       audience=click_audience(key, user)))

    def _submit_click(self, message: ChatMessage) -> None:
        key, user, event_id = message.key, message.user, str(message.event_id)
        language = self.config.default_language
        refused = self.admission.limit(user, event_id, language)
        if refused is not None:
            if refused.notice is not None:
                self.client.chat_postEphemeral(channel=key.channel, user=user,
                                               text=refused.notice.text(),
                                               thread_ts=self.thread_ts(key))
            return
        try:
            self.worker.submit(message, deadline=ACK_DEADLINE_SECONDS,
                               on_late_failure=lambda error: self.tell_not_stored(
                                   key, language, error))
        except AckDeadlineError as error:  # stored later and answered, or told then
            logger.warning("action %s not stored in time: %s", event_id, error)
        except StorageUnavailableError as error:  # Slack does not redeliver button presses
            logger.error("action %s not stored: %s", event_id, error)
            self.tell_not_stored(key, language, error)

    def share(self, user: str, channel: str, result_id: str) -> None:
        self.private.share(user, channel, result_id)

    def soon(self, task: Callable[[], None], what: str, wait: bool = True) -> None:
        """Work that needs the database but is not an event (commands, feedback): off the
        request thread, waited for up to the ack deadline, then left to finish in the
        background — Slack's ack never waits for a database lock held elsewhere. Without
        `wait`, not waited for at all: an event listener's Web API calls (the assistant
        pane's prompts and title), which no ack should hold."""
        def run() -> None:
            try:
                task()
            except Exception:
                logger.exception("%s failed", what)

        future = self._background.submit(run)
        if not wait:
            return
        try:
            future.result(timeout=ACK_DEADLINE_SECONDS)
        except FutureTimeout:
            logger.warning("%s outlived the ack deadline; it finishes in the background", what)

    def tell_not_stored(self, key: ConversationKey, language: i18n.Language,
                         error: StorageUnavailableError) -> None:
        try:
            self.post_text(key, storage_problem_text(error, language))
        except Exception as problem:
            logger.warning("could not tell the user that an event was not stored: %s", problem)

    # --- posting ----------------------------------------------------------------------

    @staticmethod
    def thread_ts(key: ConversationKey) -> str | None:
        return None if key.thread == DM_THREAD else key.thread

    @staticmethod
    def _in_assistant_thread(key: ConversationKey) -> bool:
        return key.channel.startswith("D") and key.thread != DM_THREAD

    def before_turn(self, message: ChatMessage) -> None:
        """The assistant pane's "Searching documents…", set by the worker as the turn starts:
        after the event was stored and before its answer (which clears it), never for a
        retry or a refusal."""
        if self._in_assistant_thread(message.key):
            text = message.text if isinstance(message.text, str) else ""
            self._set_status(message.key, "slack_status_searching",
                             i18n.detect_language(text, self.config.default_language))

    def deliver_notice(self, message: ChatMessage, text: str) -> None:
        if self.private.applies(message.key):  # a refusal or note is as private as answers
            self.client.chat_postEphemeral(channel=message.key.channel, user=message.user,
                                           thread_ts=self.thread_ts(message.key), text=text)
            return
        self.post_text(message.key, text)

    def stream_for(self, message: ChatMessage) -> Callable[[str], None] | None:
        """Streamed sentences go to a Slack message stream (where the workspace allows);
        private answers are ephemeral, which Slack does not stream."""
        if self.private.applies(message.key):
            return None
        stream = SlackStream(self.client, message.key.channel, self.thread_ts(message.key),
                             message.key.workspace, message.user)
        with self._streams_lock:
            self._streams[str(message.event_id)] = stream
        return stream.append

    def deliver(self, message: ChatMessage, result: TurnResult) -> None:
        with self._streams_lock:
            stream = self._streams.pop(str(message.event_id), None)
        if stream is not None and result.status == "storage_unavailable":
            # Sentences were streamed, then the turn could not be saved: end the stream as
            # it stands and say so in a post of its own (a stream's stop carries no text).
            stream.abandon()
        elif stream is not None and stream.finish(result):
            return  # the answer was streamed; the stream now carries sources and buttons
        if self.private.applies(message.key):
            self.private.deliver(message, result)
            return
        if self._in_assistant_thread(message.key):
            self._set_status(message.key, "slack_status_writing")
        parts = render(result)
        for index, part in enumerate(parts):
            # The last part names its result: a restarted bot can see it was posted.
            metadata = metadata_for(result) if index == len(parts) - 1 else None
            self.client.chat_postMessage(channel=message.key.channel,
                                         thread_ts=self.thread_ts(message.key),
                                         metadata=metadata, **part)

    def already_delivered(self, message: ChatMessage, result: TurnResult) -> bool:
        """Is the answer with this result id in the thread already (a post's metadata, or the
        feedback buttons a finished stream carries)? Asked only for events resumed after a
        restart, whose previous process may have died between the post and `done`."""
        if self.store.posted_id(PLATFORM, str(message.event_id)) is not None:
            return True  # an ephemeral answer, which no history shows
        return in_history(self.client, message.key.channel, self.thread_ts(message.key),
                          result.result_id)

    def _set_status(self, key: ConversationKey, text_key: str,
                    language: i18n.Language | None = None) -> None:
        """The assistant pane's status line; harmless to fail outside the pane."""
        try:
            self.client.assistant_threads_setStatus(
                channel_id=key.channel, thread_ts=key.thread,
                status=i18n.text(text_key, language or self.config.default_language))
        except Exception as error:
            logger.info("status not set: %s", error)

    def suggested_prompts(self, language: i18n.Language,
                          user: str = "") -> list[dict[str, str]]:
        """Prompts from the documents the user may read (the pane is private to them)."""
        prompts = []
        catalog = self.engine.catalog_for(slack_audience("", user, private=True))
        for document in catalog.documents()[:PROMPT_COUNT]:
            text = i18n.text("slack_prompt", language, title=document.title)
            prompts.append({"title": prompt_title(text[:PROMPT_TITLE_CHARS]),
                            "message": escape(text)})
        return prompts

    def post_text(self, key: ConversationKey, text: str) -> None:
        self.client.chat_postMessage(channel=key.channel, thread_ts=self.thread_ts(key),
                                     text=text)

    def tell_undeliverable(self, message: ChatMessage, _reason: str) -> None:
        self.post_text(message.key, i18n.text("post_failed",
                                               self.config.default_language))

    def thread_of_result(self, result_id: str) -> str | None:
        """The Slack thread ts of the turn a result id belongs to."""
        for row in self.store.conversation_of_result(result_id):
            thread = str(row["thread"])
            return None if thread == DM_THREAD else thread
        return None

    def close(self) -> None:
        self._background.shutdown(wait=True)
        self.worker.close()

