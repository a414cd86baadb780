"""What the Teams bot sends on its own, from inbox worker threads onto the serving loop:
replies to a stored message (their ids returned, so they can be recorded), in-place
updates of a posted message, and new messages in a team channel."""

from __future__ import annotations

import asyncio
from typing import Final

from microsoft_agents.activity import (
    Activity,
    ChannelAccount,
    ConversationAccount,
    ConversationReference,
)
from microsoft_agents.hosting.aiohttp import CloudAdapter
from microsoft_agents.hosting.core import ClaimsIdentity, TurnContext

from docassist.core.messages import ChatMessage

DELIVERY_TIMEOUT_SECONDS: Final = 30.0


class Outbound:
    def __init__(self, cloud: CloudAdapter, app_id: str) -> None:
        self.cloud = cloud
        self.app_id = app_id
        self.loop: asyncio.AbstractEventLoop | None = None

    def require_loop(self) -> asyncio.AbstractEventLoop:
        if self.loop is None:
            raise RuntimeError("the Teams adapter is not started")
        return self.loop

    async def send(self, reference: ConversationReference, activities: list[Activity],
                   reply: bool = True) -> list[str]:
        """Send through the connector at the reference's `serviceUrl`: as replies to the
        referenced activity, or (`reply=False`) as new messages; the ids Teams gave them."""
        continuation = reference.get_continuation_activity()
        continuation.id = reference.activity_id if reply else None
        posted: list[str] = []

        async def send_all(context: TurnContext) -> None:
            responses = await context.send_activities(activities)
            posted.extend(str(r.id) for r in responses or [] if r is not None and r.id)

        await self.cloud.continue_conversation_with_claims(self.identity(), continuation,
                                                           send_all)
        return posted

    def reply(self, message: ChatMessage, activities: list[Activity]) -> list[str]:
        """Replies to a stored message, from a worker thread; the posted ids."""
        future = asyncio.run_coroutine_threadsafe(
            self.send(_reference(message), activities), self.require_loop())
        return future.result(timeout=DELIVERY_TIMEOUT_SECONDS)

    def reply_one(self, message: ChatMessage, activity: Activity) -> str | None:
        posted = self.reply(message, [activity])
        return posted[0] if posted else None

    def update(self, message: ChatMessage, posted_id: str, activity: Activity) -> None:
        """Replace an activity this bot posted in the message's conversation (PUT)."""
        continuation = _reference(message).get_continuation_activity()
        activity.id = posted_id

        async def replace(context: TurnContext) -> None:
            await context.update_activity(activity)

        future = asyncio.run_coroutine_threadsafe(
            self.cloud.continue_conversation_with_claims(self.identity(), continuation,
                                                         replace),
            self.require_loop())
        future.result(timeout=DELIVERY_TIMEOUT_SECONDS)

    def post_to_channel(self, service_url: str, channel_id: str, activity: Activity) -> None:
        """A new message in a team channel (the help channel), from a worker thread."""
        reference = ConversationReference(
            channel_id="msteams", service_url=service_url,
            conversation=ConversationAccount(id=channel_id, conversation_type="channel"),
            bot=ChannelAccount(id=self.app_id or "docassist"))
        future = asyncio.run_coroutine_threadsafe(self.send(reference, [activity], reply=False),
                                                  self.require_loop())
        future.result(timeout=DELIVERY_TIMEOUT_SECONDS)

    def identity(self) -> ClaimsIdentity:
        if not self.app_id:  # anonymous mode: no token on outgoing calls
            return ClaimsIdentity({}, authentication_type="anonymous")
        return self.cloud.create_claims_identity(self.app_id)


def _reference(message: ChatMessage) -> ConversationReference:
    if message.reply_to is None:
        raise ValueError(f"event {message.event_id} has no reply address")
    return ConversationReference.model_validate_json(message.reply_to)
