"""The Teams adapter: an `AgentApplication` whose message route translates activities to core
messages and results to Adaptive Cards.

Messages for the core go through the durable inbox (stored before the HTTP response, answered
in order per conversation), by turn processes unless DOCASSIST_TURN_PROCESSES=0. Replies go
to the activity's `serviceUrl` through the SDK's connector; with `deliveryMode:
expectReplies` the caller waits and gets them in the response: that turn runs in the process
holding the request (the inbox write claims it for this process, see ports.Hold), unless an
earlier activity of the conversation is unfinished (then it is answered after it, through
the connector, as a turn that outlives its request is).
Catalog, help and admin commands need no turn and are answered directly.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from microsoft_agents.activity import (
    Activity,
    ActivityTypes,
    ConversationReference,
    DeliveryModes,
)
from microsoft_agents.hosting.aiohttp import CloudAdapter
from microsoft_agents.hosting.core import (
    AgentApplication,
    MemoryStorage,
    TurnContext,
    TurnState,
)
from microsoft_agents.hosting.core.authorization import Connections

from docassist.bot.hygiene import without_lone_surrogates
from docassist.bot.limits import AdapterConfig
from docassist.bot.teams import cards
from docassist.bot.teams.audience import (
    PLATFORM,
    teams_audience,
    thread_address,
)
from docassist.bot.teams.direct import (
    READ_ONLY_REQUESTS,
    DirectReplies,
    DirectRequest,
    route,
    text_activity,
)
from docassist.bot.teams.direct import card_activity as reply_activity
from docassist.bot.teams.outbound import Outbound
from docassist.bot.teams.stale import TeamsStaleNotes
from docassist.bot.teams.streaming import TeamsStream, TeamsUpdates
from docassist.core import i18n
from docassist.core.errors import AckDeadlineError, StorageError, StorageUnavailableError
from docassist.core.messages import ChatMessage
from docassist.core.ports import AdapterStore
from docassist.core.replies import storage_problem_text
from docassist.core.results import TurnResult
from docassist.core.turn import TurnEngine
from docassist.serving.admission import Admission, Arrival
from docassist.serving.delivery import Outlet
from docassist.serving.inbox import InboxWorker
from docassist.serving.ratelimit import SharedRateLimiter

logger = logging.getLogger(__name__)

READABLE_ATTACHMENTS: Final = frozenset({"text/html"})
"""Teams adds the message itself as `text/html`; anything else (files, images) is not read."""
EXPECT_REPLIES_TIMEOUT_SECONDS: Final = 60.0
"""How long an `expectReplies` request waits for its turn before answering without it."""


@dataclass(frozen=True)
class TeamsConfig(AdapterConfig):
    """`admin_users` are AAD object ids here."""

    app_id: str = ""
    tenant_id: str = ""
    """Our Entra tenant: a conversation of another tenant is shared with another
    organization (empty: not known, no conversation counts as shared by tenant)."""
    human_channel: str = "#docassist-help"
    """Where users are sent while the Teams help channel cannot be reached."""
    teams_human_channel: str = ""
    """The help channel's conversation id (`DOCASSIST_TEAMS_HUMAN_CHANNEL`); empty = none."""


def user_id(activity: Activity) -> str:
    sender = activity.from_property
    if sender is None:
        return ""
    return str(sender.aad_object_id or sender.id or "")


@dataclass
class _Waiting:
    """A turn whose caller waits for the replies in the HTTP response (expectReplies)."""

    future: asyncio.Future[list[Activity]]
    notes: list[Activity] = field(default_factory=list)
    """A note said before the answer (attachments not read), sent with it."""


class TeamsAdapter:
    def __init__(self, engine: TurnEngine, store: AdapterStore, config: TeamsConfig,
                 connections: Connections, handoff: Callable[[], None] | None = None) -> None:
        """With `handoff`, this process stores activities and runs only the turns whose
        caller waits for the replies in its request (expectReplies); `handoff` wakes the
        turn processes that answer the rest (serving/turn_processes.py)."""
        self.engine = engine
        self.store = store
        self.config = config
        outlet = Outlet(self.deliver, PLATFORM, notice=self.deliver_notice,
                        already_delivered=self.already_delivered,
                        undeliverable=self.tell_undeliverable, stream_for=self.stream_for,
                        direct=self.direct)
        self.worker = InboxWorker(engine, store, outlet,
                                  workers=0 if handoff else config.inbox_workers,
                                  held=config.inbox_workers if handoff else 0,
                                  lease_seconds=config.inbox_lease, on_stored=handoff,
                                  replica=config.replica)
        self._streams: dict[str, TeamsStream | TeamsUpdates] = {}
        self._streams_lock = threading.Lock()
        self.limiter = SharedRateLimiter(store, config.per_user_per_minute,
                                         config.global_per_minute)
        self.admission = Admission(store, self.limiter, self.worker)
        self.cloud = CloudAdapter(connection_manager=connections)
        # The SDK's default handler posts the exception text into the conversation; ours
        # lets it propagate: inbound, the request fails (and the platform retries); outbound,
        # the inbox counts a failed delivery.
        self.cloud.on_turn_error = _propagate
        self.outbound = Outbound(self.cloud, config.app_id)
        self.direct_replies = DirectReplies(store, config.admin_users, config.human_channel,
                                            config.teams_human_channel,
                                            self.outbound.post_to_channel,
                                            engine.catalog_for)
        self.agent: AgentApplication[TurnState] = AgentApplication[TurnState](
            storage=MemoryStorage(), connection_manager=connections,
            start_typing_timer=False, remove_recipient_mention=False)
        self.loop: asyncio.AbstractEventLoop | None = None
        self._waiting: dict[str, _Waiting] = {}
        self._waiting_lock = threading.Lock()
        self.agent.activity(ActivityTypes.message)(self.on_message)
        self.agent.members_added()(self.on_members_added)
        self.agent.activity(ActivityTypes.installation_update)(self.on_installation)
        self.stale_notes = TeamsStaleNotes(self)  # notes about changed citations (stale.py)
        self._on_start: list[Callable[[], None]] = []

    def start(self, loop: asyncio.AbstractEventLoop) -> int:
        """Bind to the serving loop (replies are sent from it), start what waited for it and
        resume unfinished events."""
        self.loop = loop
        self.outbound.loop = loop
        for callback in self._on_start:
            callback()
        return self.worker.resume()

    def when_started(self, callback: Callable[[], None]) -> None:
        """Run `callback` once the loop is bound (now, if it is): work that sends on its own
        (the gaps digest, digest.py). It is called on the loop: it must not block."""
        self._on_start.append(callback)
        if self.loop is not None:
            callback()

    # --- translation ------------------------------------------------------------------

    async def on_members_added(self, context: TurnContext, _state: TurnState) -> None:
        """Say what DocAssist does when it is added to a chat or team (not for every person
        who joins later)."""
        activity = context.activity
        await self._remember_team(activity)
        bot = activity.recipient.id if activity.recipient else None
        if any(member.id == bot for member in activity.members_added or []):
            await context.send_activity(text_activity(i18n.text(
                "teams_help", self.config.default_language)))

    async def on_installation(self, context: TurnContext, _state: TurnState) -> None:
        await self._remember_team(context.activity)

    async def on_message(self, context: TurnContext, _state: TurnState) -> None:
        activity = context.activity
        await self._remember_team(activity)
        key, reply_conversation = thread_address(activity)
        user = user_id(activity)
        text = without_lone_surrogates(activity.remove_recipient_mention()
                                       if activity.text else "")
        language = i18n.detect_language(text, self.config.default_language)
        value = activity.value if isinstance(activity.value, dict) else {}
        routed = route(text, value, language)
        if routed is None:
            return  # another app's card data: not ours to act on
        if routed.direct is not None and routed.direct.name == cards.ASK_HUMAN:
            sender = activity.from_property
            routed.direct.value["user_name"] = (sender.name if sender else None) or user
        reference = activity.get_conversation_reference()
        reference.conversation.id = reply_conversation
        message = ChatMessage(
            key=key, user=user, text=routed.text, command=routed.command,
            command_argument=routed.argument, event_id=f"{reply_conversation}|{activity.id}",
            choice_for=routed.choice_for,
            direct=routed.direct.dump() if routed.direct is not None else None,
            reply_to=reference.model_dump_json(by_alias=True, exclude_none=True),
            audience=teams_audience(activity, key, user, self.config.tenant_id))
        attachments = any(a.content_type not in READABLE_ATTACHMENTS
                          for a in activity.attachments or [])
        await self.submit(context, Arrival(message, language, attachments=attachments))

    async def _remember_team(self, activity: Activity) -> None:
        """Where this team's channels are reached (for "Ask a human"), from any activity or
        installation update that names the team."""
        data = activity.channel_data if isinstance(activity.channel_data, dict) else {}
        team = data.get("team")
        if not isinstance(team, dict) or not team.get("id") or not activity.service_url:
            return
        channel = data.get("channel")
        if not isinstance(channel, dict):
            channel = {}
        channels = [str(team["id"]), *([str(channel["id"])] if channel.get("id") else [])]
        try:
            await asyncio.to_thread(self.store.record_team_address, channels, str(team["id"]),
                                    str(activity.service_url))
        except StorageError as error:  # learnt again from the next activity
            logger.warning("team address not stored: %s", error)

    async def submit(self, context: TurnContext, arrival: Arrival) -> None:
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
            verdict = await asyncio.to_thread(self.admission.admit, arrival, tell_late,
                                              expects_replies)
        except AckDeadlineError as error:
            self._forget(event_id)
            logger.warning("activity %s not stored in time, answered 503: %s", event_id, error)
            raise  # the endpoint answers 503 (see server.py)
        except StorageError as error:
            self._forget(event_id)
            logger.error("activity %s not stored: %s", event_id, error)
            await context.send_activities(await self._unstored_reply(message, error,
                                                                     arrival.language))
            return
        if verdict == "duplicate":  # a redelivery of an activity we have (or are) answering
            self._forget(event_id)
            return
        if waiting is None:
            return
        if not self.worker.took(event_id) and not self.worker.capacity:
            # An earlier activity of this conversation is still being answered: a turn
            # process answers this one after it, through the connector.
            self._forget(event_id)
            logger.info("expectReplies activity %s queued behind its conversation", event_id)
            return
        try:
            activities = await asyncio.wait_for(waiting.future, EXPECT_REPLIES_TIMEOUT_SECONDS)
        except TimeoutError:
            self._forget(event_id)
            logger.warning("expectReplies turn %s outlived the request", event_id)
            return
        for activity in activities:
            await context.send_activity(activity)

    async def _unstored_reply(self, message: ChatMessage, error: StorageError,
                              language: i18n.Language) -> list[Activity]:
        """What an activity the inbox could not store gets: a request that only reads (the
        catalog, help) is still answered, at once; anything else is told why not."""
        request = DirectRequest.load(message.direct) if message.direct else None
        if request is not None and request.name in READ_ONLY_REQUESTS:
            return await asyncio.to_thread(self.direct_replies.reply, message, request)
        return [text_activity(storage_problem_text(error, language)
                              if isinstance(error, StorageUnavailableError)
                              else i18n.text("post_failed", language))]

    def _forget(self, event_id: str) -> None:
        with self._waiting_lock:
            self._waiting.pop(event_id, None)

    # --- delivery (inbox worker threads) ----------------------------------------------

    def stream_for(self, message: ChatMessage) -> Callable[[str], None] | None:
        """Personal chats stream the answer (Teams streams nowhere else); never when the
        caller waits for the replies in the response (expectReplies)."""
        with self._waiting_lock:
            if str(message.event_id) in self._waiting or message.reply_to is None:
                return None
        reference = ConversationReference.model_validate_json(message.reply_to)
        stream: TeamsStream | TeamsUpdates
        if reference.conversation.conversation_type == "personal":
            stream = TeamsStream(lambda activity: self.outbound.reply_one(message, activity))
        else:  # channels and group chats: posted once, then updated in place
            stream = TeamsUpdates(
                lambda activity: self.outbound.reply_one(message, activity),
                lambda posted, activity: self.outbound.update(message, posted, activity))
        with self._streams_lock:
            self._streams[str(message.event_id)] = stream
        return stream.append

    def deliver(self, message: ChatMessage, result: TurnResult) -> None:
        self.stale_notes.remember(message)
        with self._streams_lock:
            stream = self._streams.pop(str(message.event_id), None)
        if result.status == "storage_unavailable":
            # Not the answer: the event is answered once the database takes it (its claim
            # ends, another look runs it), so this note is not recorded as its posted reply.
            self._deliver_activities(message, [reply_activity(card)
                                               for card in cards.render(result)], record=False)
            return
        if stream is not None:
            posted = (stream.finish(cards.trailer(result)) if isinstance(stream, TeamsStream)
                      else stream.finish(cards.render(result)))
            if posted is not None:  # the stream is the answer; its final carries the rest
                self.store.record_posted(PLATFORM, str(message.event_id), posted)
                return
        self._deliver_activities(message, [reply_activity(card)
                                           for card in cards.render(result)])

    def direct(self, message: ChatMessage) -> None:
        """A request answered without a turn (inbox worker): not again if its reply was
        posted before a restart."""
        if self.store.posted_id(PLATFORM, str(message.event_id)) is not None:
            return
        assert message.direct is not None
        self._deliver_activities(message, self.direct_replies.reply(
            message, DirectRequest.load(message.direct)))

    def already_delivered(self, message: ChatMessage, _result: TurnResult) -> bool:
        """A resumed answered event: the id its reply was posted as was stored before the
        event would have been marked done (Teams history cannot be read back)."""
        return self.store.posted_id(PLATFORM, str(message.event_id)) is not None

    def _deliver_activities(self, message: ChatMessage, activities: list[Activity],
                            record: bool = True) -> None:
        """Inline when the caller waits (expectReplies); otherwise sent, and (`record`) the
        posted id stored before the inbox marks the event done."""
        with self._waiting_lock:
            waiting = self._waiting.pop(str(message.event_id), None)
        if waiting is not None:
            self.require_loop().call_soon_threadsafe(_settle, waiting.future,
                                                      waiting.notes + activities)
            return
        posted = self._send_from_thread(message, activities)
        if posted and record:
            self.store.record_posted(PLATFORM, str(message.event_id), posted[-1])

    def deliver_notice(self, message: ChatMessage, text: str) -> None:
        """A refusal or note decided at admission: inline when the caller waits for it."""
        final = message.notice is None or message.notice.replaces_turn
        if final:
            self._deliver_activities(message, [text_activity(text)])
            return
        with self._waiting_lock:
            waiting = self._waiting.get(str(message.event_id))
        if waiting is None:
            self._send_from_thread(message, [text_activity(text)])
        else:
            waiting.notes.append(text_activity(text))

    def tell_undeliverable(self, message: ChatMessage, _reason: str) -> None:
        self._send_from_thread(message, [text_activity(
            i18n.text("post_failed", self.config.default_language))])

    def require_loop(self) -> asyncio.AbstractEventLoop:
        return self.outbound.require_loop()

    def _send_from_thread(self, message: ChatMessage, activities: list[Activity]
                          ) -> list[str]:
        return self.outbound.reply(message, activities)

    async def send(self, reference: ConversationReference, activities: list[Activity]
                   ) -> list[str]:
        """Reply to the referenced activity (stale notes, outbound.py)."""
        return await self.outbound.send(reference, activities)


async def _propagate(_context: TurnContext, error: Exception) -> None:
    raise error


def _settle(waiter: asyncio.Future[list[Activity]], activities: list[Activity]) -> None:
    if not waiter.done():
        waiter.set_result(activities)
