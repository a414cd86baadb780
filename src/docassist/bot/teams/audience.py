"""The audience of a Teams reply, from the activity (translation only: the core decides what
it may be answered from)."""

from __future__ import annotations

from typing import Final

from microsoft_agents.activity import Activity

from docassist.core.messages import ConversationKey
from docassist.core.scopes import Audience, AudienceKind

PLATFORM: Final = "teams"
THREAD_MARKER: Final = ";messageid="
"""What a channel thread's conversation id carries after the channel's id."""
CHAT_THREAD: Final = "chat"
"""The one thread of a personal or group chat."""


def teams_audience(activity: Activity, key: ConversationKey, user: str,
                   our_tenant: str) -> Audience:
    """Who reads the reply: the asker alone (a personal chat), a conversation shared with
    another organization (another tenant's conversation, or a guest sender), or the channel
    or group chat (the key's channel: the conversation id without `;messageid=…`, so every
    thread inherits the channel's scope)."""
    conversation = activity.conversation
    if conversation is not None and conversation.conversation_type == "personal":
        return Audience(kind="private", platform=PLATFORM, user=user)
    sender = activity.from_property
    extra = (sender.model_extra or {}) if sender is not None else {}
    guest = sender is not None and "guest" in (sender.role, extra.get("userRole"))
    other_tenant = bool(our_tenant and key.workspace and key.workspace != our_tenant)
    kind: AudienceKind = "shared" if guest or other_tenant else "channel"
    return Audience(kind=kind, platform=PLATFORM, channel=key.channel, user=user)


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
