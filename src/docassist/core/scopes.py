"""Who will read a reply (the audience) and what it may be answered from (the scope).

Values only: a leaf module that `core.ports` imports. Adapters translate a platform event
into an `Audience`; the core (`core.scoping`) decides the `Scope` from the configured
mappings. Subjects of a mapping are written as the CLI and the admin command take them:
`slack:CHANNEL_ID`, `teams:CONVERSATION_ID`, `user:PLATFORM:USER_ID`, `group:PLATFORM:GROUP_ID`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
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
SLACK_IDS: Final = {"slack": ("C", re.compile(r"^[CGD][A-Z0-9_-]+$")),
                    "user:slack": ("U", re.compile(r"^[UW][A-Z0-9_-]+$")),
                    "group:slack": ("S", re.compile(r"^S[A-Z0-9_-]+$"))}
"""Slack's ids are upper case and start with their kind's letter (channels C/G/D…, users
U/W…, user groups S…): a subject naming a channel by its name (`slack:general`,
`slack:#ops`) could never match, so it is refused with a hint."""
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

    def kept(self) -> Audience:
        """As a conversation's saved state keeps it: the user id as a hash (states hold no
        raw platform user id; scopes still match it by its hash)."""
        if self.user is None or is_hashed_user(self.user):
            return self
        return self.model_copy(update={"user": hashed_user(self.user)})

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


def slack_id_expected(subject: str) -> str | None:
    """The id's first letter when a Slack subject names something by another spelling than
    its id (`slack:general`); None when the subject is fine (or not Slack's)."""
    prefix, _, value = subject.rpartition(":")
    expected = SLACK_IDS.get(prefix)
    if expected is None or expected[1].match(value):
        return None
    return expected[0]


def channel_subject(platform: str, channel: str) -> str:
    return f"{platform}:{channel}"


def user_subject(platform: str, user: str) -> str:
    return f"user:{platform}:{user}"


HASHED_USER_PREFIX: Final = "sha256:"


def hashed_user(user: str) -> str:
    return HASHED_USER_PREFIX + hashlib.sha256(user.encode("utf-8")).hexdigest()


def is_hashed_user(user: str) -> bool:
    return user.startswith(HASHED_USER_PREFIX)


def user_subjects_of(platform: str, user: str, subjects: Iterable[str]) -> list[str]:
    """The mapped `user:` subjects that name this user, by id or (a saved audience) by its
    hash."""
    if not is_hashed_user(user):
        return [user_subject(platform, user)]
    prefix = user_subject(platform, "")
    return [subject for subject in subjects if subject.startswith(prefix)
            and hashed_user(subject.removeprefix(prefix)) == user]


def group_subject(platform: str, group: str) -> str:
    return f"group:{platform}:{group}"
