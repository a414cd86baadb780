"""What platform adapters read and write themselves (`AdapterStore`): stale notes, sources,
posted replies, team addresses, shares, scopes (issue 22) and group membership."""

from __future__ import annotations

from typing import Any, Protocol

from docassist.core.messages import ConversationKey
from docassist.core.ports.inbox import Inbox, RateCounter
from docassist.core.ports.search import Catalog
from docassist.core.ports.stores import (
    ConversationLookup,
    FeedbackLog,
    SeenEvents,
    StoredConversation,
    TraceLog,
)
from docassist.core.sources import SourceStatus


class StaleNotes(Protocol):
    """Notes that an answer's document changed, and where to post them (Teams addresses)."""

    def stale_note(self, note_id: int) -> dict[str, Any] | None: ...

    def remember_address(self, conversation_id: str, reference: str) -> None: ...

    def address_of(self, conversation_id: str) -> str | None: ...


class ScopeRules(Protocol):
    """The configured mappings of channels, users and groups to collections."""

    def scope_mappings(self) -> dict[str, tuple[str, ...]]:
        """Subject (`slack:C1`, `teams:19:…`, `user:slack:U1`, `group:teams:G`) → collections."""
        ...

    def shareable_collections(self) -> frozenset[str]:
        """Collections an externally shared channel may be answered from (none by default)."""
        ...

    def collection_names(self) -> list[str]:
        """Every collection known: `default`, documents', sources' and shareable ones."""
        ...


class ScopeAdmin(ScopeRules, Protocol):
    """Changes to the mappings, each logged with the admin who made it."""

    def set_scope(self, subject: str, collections: list[str], admin: str) -> None:
        """Map `subject` to `collections` (an empty list removes the mapping)."""
        ...

    def set_shareable(self, collection: str, shareable: bool, admin: str) -> None: ...

    def scope_changes(self) -> list[dict[str, Any]]: ...


class NoGroups:
    """The default lookup: nobody is in any group."""

    def groups_of(self, platform: str, user_id: str) -> frozenset[str]:
        return frozenset()


class SourceLog(Protocol):
    def source_statuses(self) -> list[SourceStatus]: ...


class Shares(Protocol):
    """Private answers shared in their channel, once each."""

    def record_share(self, result_id: str, user: str) -> bool: ...

    def withdraw_share(self, result_id: str) -> None: ...


class PostedReplies(Protocol):
    """The id a reply was posted as, per inbox event: written before the event is done, so
    a restarted process does not post it again (platforms whose history cannot be read)."""

    def record_posted(self, platform: str, event_id: str, posted_id: str) -> None: ...

    def posted_id(self, platform: str, event_id: str) -> str | None: ...


class TeamAddresses(Protocol):
    """Where a workspace's channels are reached (a service address per team), learnt from
    the platform's own activities."""

    def record_team_address(self, channel_ids: list[str], team_id: str,
                            service_url: str) -> None: ...

    def team_service_url(self, channel_id: str) -> str | None: ...


class AdapterStore(Catalog, Inbox, SeenEvents, ConversationLookup, FeedbackLog, TraceLog,
                   StaleNotes, SourceLog, PostedReplies, TeamAddresses, Shares, ScopeAdmin,
                   RateCounter,
                   Protocol):
    """Everything a platform adapter reads or writes itself (turns go through the engine;
    the stale-note couriers also read a conversation's state)."""

    def load(self, key: ConversationKey) -> StoredConversation: ...


class MembershipLookup(Protocol):
    """The groups a platform user belongs to (Entra ID groups for Teams, Slack user groups),
    as platform group ids; scopes map `group:PLATFORM:GROUP_ID` keys to collections."""

    def groups_of(self, platform: str, user_id: str) -> frozenset[str]: ...
