"""Who will read a reply (the audience) and what it may be answered from (the scope).

Values only: a leaf module that `core.ports` imports. Adapters translate a platform event
into an `Audience`; the core (`core.scoping`) decides the `Scope` from the configured
mappings. Subjects of a mapping are written as the CLI and the admin command take them:
`slack:CHANNEL_ID`, `teams:CONVERSATION_ID`, `user:PLATFORM:USER_ID`, `group:PLATFORM:GROUP_ID`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict

from docassist.core.documents import DEFAULT_COLLECTION
from docassist.core.sources import SOURCE_NAME_PATTERN

AudienceKind = Literal["unset", "operator", "channel", "private", "shared"]
"""unset: an adapter did not say (fail closed: `default` only); operator: the CLI (every
collection unless narrowed); channel: everyone in a channel;
private: only the asker (DM, assistant pane, ephemeral reply, personal chat); shared: a
channel shared with another organization (shareable collections only)."""

CHANNEL_PLATFORMS: Final = ("slack", "teams")
SUBJECT_PATTERN: Final = re.compile(
    r"^(?:(?:slack|teams):[^\s;]+|(?:user|group):(?:slack|teams):[^\s:;]+)$")
"""A channel's id has no `;` (a Teams thread's `;messageid=…` names a thread, not a channel)."""
COLLECTION_PATTERN: Final = SOURCE_NAME_PATTERN
"""A collection's name follows the source names' rule (sources and `index --collection`)."""


class Audience(BaseModel):
    """Who can read the reply to a message, as the adapter saw it in the event."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: AudienceKind = "unset"
    platform: str = "unknown"
    channel: str | None = None
    """The channel (Slack) or conversation id without `;messageid=…` (Teams)."""
    user: str | None = None
    """The asker's platform user id: their own scope in private, and the held-back note."""
    collections: tuple[str, ...] | None = None
    """Operator only: `--collections` narrowed the search to these."""

    def label(self) -> str:
        """How traces record the audience (no user id: traces keep users as hashes)."""
        if self.kind in ("operator", "unset"):
            return self.kind
        if self.kind == "private":
            return f"private:{self.platform}"
        return f"{self.kind}:{self.platform}:{self.channel}"


UNSET: Final = Audience()
OPERATOR: Final = Audience(kind="operator", platform="terminal")


@dataclass(frozen=True)
class Scope:
    """The collections a conversation may search; `None` = every collection."""

    collections: frozenset[str] | None

    @property
    def everything(self) -> bool:
        return self.collections is None

    def allows(self, collection: str) -> bool:
        return self.collections is None or collection in self.collections

    def names(self) -> list[str] | None:
        """Sorted names for traces and JSON; None for every collection."""
        return None if self.collections is None else sorted(self.collections)

    def without(self, other: Scope) -> Scope:
        """The collections of this scope that `other` does not allow."""
        if self.collections is None:
            return self if other.collections is not None else Scope(frozenset())
        return Scope(frozenset(c for c in self.collections if not other.allows(c)))


EVERYTHING: Final = Scope(None)
DEFAULT_SCOPE: Final = Scope(frozenset({DEFAULT_COLLECTION}))


def channel_subject(platform: str, channel: str) -> str:
    return f"{platform}:{channel}"


def user_subject(platform: str, user: str) -> str:
    return f"user:{platform}:{user}"


def group_subject(platform: str, group: str) -> str:
    return f"group:{platform}:{group}"
