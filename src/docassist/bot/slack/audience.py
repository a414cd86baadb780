"""The audience of a Slack reply, from the event (translation only: the core decides what
it may be answered from)."""

from __future__ import annotations

from typing import Final

from docassist.core.messages import ConversationKey
from docassist.core.scopes import Audience, AudienceKind

PLATFORM: Final = "slack"


def slack_audience(channel: str, user: str, *, private: bool,
                   shared: bool = False) -> Audience:
    """Who reads the reply: the asker alone (DM, assistant pane, ephemeral), a channel
    shared with another organization (the envelope's `is_ext_shared_channel`, or a sender
    of another team), or a channel."""
    kind: AudienceKind = "private" if private else "shared" if shared else "channel"
    return Audience(kind=kind, platform=PLATFORM, channel=None if private else channel,
                    user=user)


def click_audience(key: ConversationKey, user: str) -> Audience:
    """A button press says only where it was pressed: a DM (`D…`) is private, anything else
    the channel (a thread once seen shared stays shared: the core remembers)."""
    return slack_audience(key.channel, user, private=key.channel.startswith("D"))
