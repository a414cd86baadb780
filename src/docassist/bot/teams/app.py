"""The Teams adapter: an `AgentApplication` whose message route translates activities to core
messages and results to Adaptive Cards.

Messages for the core go through the durable inbox (stored before the HTTP response, answered
in order per conversation). Replies go to the activity's `serviceUrl` through the SDK's
connector; with `deliveryMode: expectReplies` the caller waits and gets them in the response.
Catalog, help and admin commands need no turn and are answered directly.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from dataclasses import dataclass, field
from typing import Any, Final

from microsoft_agents.activity import (
    Activity,
    ActivityTypes,
    Attachment,
    ConversationReference,
    DeliveryModes,
)
from microsoft_agents.hosting.aiohttp import CloudAdapter
from microsoft_agents.hosting.core import (
    AgentApplication,
    ClaimsIdentity,
    MemoryStorage,
    TurnContext,
    TurnState,
)
from microsoft_agents.hosting.core.authorization import Connections

from docassist.bot.commands import parse_text_command
from docassist.bot.hygiene import without_lone_surrogates
from docassist.bot.limits import AdapterConfig
from docassist.bot.teams import cards
from docassist.bot.teams.stale import ASK_AGAIN, TeamsStaleNotes
from docassist.core import i18n
from docassist.core.admission import Admission, Arrival
from docassist.core.errors import AckDeadlineError, StorageError, StorageUnavailableError
from docassist.core.inbox import InboxWorker
from docassist.core.messages import ChatMessage, Command, ConversationKey
from docassist.core.ports import AdapterStore
from docassist.core.ratelimit import SharedRateLimiter
from docassist.core.replies import storage_problem_text
from docassist.core.results import TurnResult
from docassist.core.trace import sha256_text
from docassist.core.turn import TurnEngine
from docassist.storage.exports import activity_summary

logger = logging.getLogger(__name__)

PLATFORM: Final = "teams"
CHAT_THREAD: Final = "chat"
"""Personal and group chats have no threads: one conversation per chat."""
THREAD_MARKER: Final = ";messageid="
DELIVERY_TIMEOUT_SECONDS: Final = 30.0
READABLE_ATTACHMENTS: Final = frozenset({"text/html"})
"""Teams adds the message itself as `text/html`; anything else (files, images) is not read."""
EXPECT_REPLIES_TIMEOUT_SECONDS: Final = 60.0
"""How long an `expectReplies` request waits for its turn before answering without it."""


@dataclass(frozen=True)
class TeamsConfig(AdapterConfig):
    """`admin_users` are AAD object ids here."""

    app_id: str = ""


def thread_address(activity: Activity) -> tuple[ConversationKey, str]:
    """The conversation key and the conversation id replies go to. A channel thread's
    conversation id carries `;messageid=<root>`; a top-level channel post is its own root."""
    conversation = activity.conversation
    base, _, root = str(conversation.id).partition(THREAD_MARKER)
    if not root and conversation.conversation_type == "channel":
        root = str(activity.id)
    tenant = conversation.tenant_id or _channel_data_tenant(activity) or ""
    key = ConversationKey(platform=PLATFORM, workspace=tenant, channel=base,
                          thread=root or CHAT_THREAD)
    return key, f"{base}{THREAD_MARKER}{root}" if root else base


def _channel_data_tenant(activity: Activity) -> str | None:
    data = activity.channel_data
    if isinstance(data, dict):
        tenant = data.get("tenant")
        if isinstance(tenant, dict) and tenant.get("id"):
            return str(tenant["id"])
    return None


def user_id(activity: Activity) -> str:
    sender = activity.from_property
    if sender is None:
        return ""
    return str(sender.aad_object_id or sender.id or "")


def reply_activity(card: cards.Card) -> Activity:
    return Activity(type=ActivityTypes.message, attachments=[
        Attachment(content_type=cards.CARD_CONTENT_TYPE, content=card)])


def text_activity(text: str) -> Activity:
    return Activity(type=ActivityTypes.message, text=text)


@dataclass
class _Waiting:
    """A turn whose caller waits for the replies in the HTTP response (expectReplies)."""

    future: asyncio.Future[list[Activity]]
    notes: list[Activity] = field(default_factory=list)
    """A note said before the answer (attachments not read), sent with it."""


class TeamsAdapter:
    def __init__(self, engine: TurnEngine, store: AdapterStore, config: TeamsConfig,
                 connections: Connections) -> None:
        self.engine = engine
        self.store = store
        self.config = config
        self.worker = InboxWorker(engine, store, self.deliver, workers=config.inbox_workers,
                                  on_undeliverable=self.tell_undeliverable,
                                  deliver_notice=self.deliver_notice, platform=PLATFORM,
                                  lease_seconds=config.inbox_lease)
        self.limiter = SharedRateLimiter(store, config.per_user_per_minute,
                                         config.global_per_minute)
        self.admission = Admission(store, self.limiter, self.worker)
        self.cloud = CloudAdapter(connection_manager=connections)
        # The SDK's default handler posts the exception text into the conversation; ours
        # lets it propagate: inbound, the request fails (and the platform retries); outbound,
        # the inbox counts a failed delivery.
        self.cloud.on_turn_error = _propagate
        self.agent: AgentApplication[TurnState] = AgentApplication[TurnState](
            storage=MemoryStorage(), connection_manager=connections,
            start_typing_timer=False, remove_recipient_mention=False)
        self.loop: asyncio.AbstractEventLoop | None = None
        self._waiting: dict[str, _Waiting] = {}
        self._waiting_lock = threading.Lock()
        self.agent.activity(ActivityTypes.message)(self.on_message)
        self.agent.members_added()(self.on_members_added)
        self.stale_notes = TeamsStaleNotes(self)  # notes about changed citations (stale.py)

    def start(self, loop: asyncio.AbstractEventLoop) -> int:
        """Bind to the serving loop (replies are sent from it) and resume unfinished events."""
        self.loop = loop
        return self.worker.resume()

    # --- translation ------------------------------------------------------------------

    async def on_members_added(self, context: TurnContext, _state: TurnState) -> None:
        """Say what DocAssist does when it is added to a chat or team (not for every person
        who joins later)."""
        activity = context.activity
        bot = activity.recipient.id if activity.recipient else None
        if any(member.id == bot for member in activity.members_added or []):
            await context.send_activity(text_activity(i18n.text(
                "teams_help", self.config.default_language)))

    async def on_message(self, context: TurnContext, _state: TurnState) -> None:
        activity = context.activity
        key, reply_conversation = thread_address(activity)
        event_id = f"{reply_conversation}|{activity.id}"
        user = user_id(activity)
        text = without_lone_surrogates(activity.remove_recipient_mention()
                                       if activity.text else "")
        language = i18n.detect_language(text, self.config.default_language)
        value = activity.value if isinstance(activity.value, dict) else {}
        action = value.get(cards.ACTION_KEY)
        if action == cards.FEEDBACK:
            await self._feedback(context, user, value, language)
            return
        if action == ASK_AGAIN:
            await self.stale_notes.ask_again(context, value, user, language)
            return
        command: Command | None = None
        argument: str | None = None
        if action == cards.SHOW_SOURCES:
            command = Command.SHOW_SOURCES
        elif action == cards.CLEAR_THREAD:
            command = Command.CLEAR
        elif action is None:
            parsed = parse_text_command(text)
            if parsed is not None and (parsed.name in ("docs", "help", "stats", "sources")
                                       or (parsed.name == "meta" and not parsed.argument)):
                await self._direct_command(context, parsed.name, user, language, event_id)
                return
            if parsed is not None and parsed.name == "meta":
                command, argument = Command.METADATA, parsed.argument
            elif parsed is not None and parsed.name == "clear":
                command = Command.CLEAR
        else:
            return  # another app's card data: not ours to act on
        reference = activity.get_conversation_reference()
        reference.conversation.id = reply_conversation
        message = ChatMessage(
            key=key, user=user, text=text, command=command, command_argument=argument,
            event_id=event_id,
            reply_to=reference.model_dump_json(by_alias=True, exclude_none=True))
        attachments = any(a.content_type not in READABLE_ATTACHMENTS
                          for a in activity.attachments or [])
        await self._submit(context, Arrival(message, language, attachments=attachments))

    async def _submit(self, context: TurnContext, arrival: Arrival) -> None:
        """Admit the message (stored before the request is answered); wait for the turn when
        the caller expects the replies inline."""
        message = arrival.message
        expects_replies = context.activity.delivery_mode == DeliveryModes.expect_replies
        event_id = str(message.event_id)
        waiting: _Waiting | None = None
        if expects_replies:
            waiting = _Waiting(asyncio.get_running_loop().create_future())
            with self._waiting_lock:
                self._waiting[event_id] = waiting

        def tell_late(error: StorageUnavailableError) -> None:
            self._send_from_thread(message, [text_activity(
                storage_problem_text(error, arrival.language))])

        try:
            verdict = await asyncio.to_thread(self.admission.admit, arrival, tell_late)
        except AckDeadlineError as error:
            self._forget(event_id)
            logger.warning("activity %s not stored in time, answered 503: %s", event_id, error)
            raise  # the endpoint answers 503 (see server.py)
        except StorageError as error:
            self._forget(event_id)
            logger.error("activity %s not stored: %s", event_id, error)
            await context.send_activity(text_activity(
                storage_problem_text(error, arrival.language)
                if isinstance(error, StorageUnavailableError)
                else i18n.text("post_failed", arrival.language)))
            return
        if verdict == "duplicate":  # a redelivery of an activity we have (or are) answering
            self._forget(event_id)
            return
        if waiting is None:
            return
        try:
            activities = await asyncio.wait_for(waiting.future, EXPECT_REPLIES_TIMEOUT_SECONDS)
        except TimeoutError:
            self._forget(event_id)
            logger.warning("expectReplies turn %s outlived the request", event_id)
            return
        for activity in activities:
            await context.send_activity(activity)

    def _forget(self, event_id: str) -> None:
        with self._waiting_lock:
            self._waiting.pop(event_id, None)

    async def _direct_command(self, context: TurnContext, name: str, user: str,
                              language: i18n.Language, event_id: str) -> None:
        """Commands answered at once (no turn), rate-limited like the rest."""
        limited = await asyncio.to_thread(self.admission.limit, user, event_id, language)
        if limited is not None:
            await context.send_activity(text_activity(limited.text()))
        elif name == "meta":
            documents = await asyncio.to_thread(self.store.documents)
            example = next((d.document_id for d in documents), "DOC-ID")
            await context.send_activity(text_activity(
                i18n.text("teams_meta_usage", language, example=example)))
        elif name == "help":
            await context.send_activity(text_activity(i18n.text("teams_help", language)))
        elif name == "docs":
            documents = await asyncio.to_thread(self.store.documents)
            await context.send_activity(reply_activity(cards.catalog_card(documents, language)))
        elif user not in self.config.admin_users:
            logger.warning("refused %s from user %s", name, sha256_text(user))
            await context.send_activity(text_activity(i18n.text("admin_refused", language)))
        elif name == "sources":
            statuses = await asyncio.to_thread(self.store.source_statuses)
            await context.send_activity(reply_activity(cards.sources_card(statuses, language)))
        else:
            summary = await asyncio.to_thread(activity_summary, self.store)
            await context.send_activity(reply_activity(cards.stats_card(summary, language)))

    async def _feedback(self, context: TurnContext, user: str, value: dict[str, Any],
                        language: i18n.Language) -> None:
        result_id = str(value.get("result_id") or "")
        try:
            await asyncio.to_thread(self.store.record_feedback, result_id, user,
                                    value.get("verdict") == "good")
        except StorageError as error:
            logger.warning("feedback not stored: %s", error)
            return
        await context.send_activity(text_activity(i18n.text("feedback_thanks", language)))

    # --- delivery (inbox worker threads) ----------------------------------------------

    def deliver(self, message: ChatMessage, result: TurnResult) -> None:
        self.stale_notes.remember(message)
        with self._waiting_lock:
            waiting = self._waiting.pop(str(message.event_id), None)
        activities = [reply_activity(card) for card in cards.render(result)]
        if waiting is not None:
            self._require_loop().call_soon_threadsafe(_settle, waiting.future,
                                                      waiting.notes + activities)
            return
        self._send_from_thread(message, activities)

    def deliver_notice(self, message: ChatMessage, text: str) -> None:
        """A refusal or note decided at admission: inline when the caller waits for it."""
        final = message.notice is None or message.notice.replaces_turn
        with self._waiting_lock:
            waiting = self._waiting.get(str(message.event_id))
            if waiting is not None and final:
                del self._waiting[str(message.event_id)]
        if waiting is None:
            self._send_from_thread(message, [text_activity(text)])
        elif final:
            self._require_loop().call_soon_threadsafe(
                _settle, waiting.future, [*waiting.notes, text_activity(text)])
        else:
            waiting.notes.append(text_activity(text))

    def tell_undeliverable(self, message: ChatMessage, _reason: str) -> None:
        self._send_from_thread(message, [text_activity(
            i18n.text("post_failed", self.config.default_language))])

    def _require_loop(self) -> asyncio.AbstractEventLoop:
        if self.loop is None:
            raise RuntimeError("the Teams adapter is not started")
        return self.loop

    def _send_from_thread(self, message: ChatMessage, activities: list[Activity]) -> None:
        if message.reply_to is None:
            raise ValueError(f"event {message.event_id} has no reply address")
        reference = ConversationReference.model_validate_json(message.reply_to)
        future = asyncio.run_coroutine_threadsafe(self.send(reference, activities),
                                                  self._require_loop())
        future.result(timeout=DELIVERY_TIMEOUT_SECONDS)

    async def send(self, reference: ConversationReference, activities: list[Activity]) -> None:
        """Reply to the referenced activity through the connector at its `serviceUrl`."""
        continuation = reference.get_continuation_activity()
        continuation.id = reference.activity_id  # replies answer the user's message
        identity = self._outbound_identity()

        async def send_all(context: TurnContext) -> None:
            await context.send_activities(activities)

        await self.cloud.continue_conversation_with_claims(identity, continuation, send_all)

    def _outbound_identity(self) -> ClaimsIdentity:
        if not self.config.app_id:  # anonymous mode: no token on outgoing calls
            return ClaimsIdentity({}, authentication_type="anonymous")
        return self.cloud.create_claims_identity(self.config.app_id)


async def _propagate(_context: TurnContext, error: Exception) -> None:
    raise error


def _settle(waiter: asyncio.Future[list[Activity]], activities: list[Activity]) -> None:
    if not waiter.done():
        waiter.set_result(activities)
