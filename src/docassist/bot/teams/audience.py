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
