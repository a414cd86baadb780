"""The core's decision: from an audience to the collections a conversation may search, and
the catalog and retriever seen through that scope.

Rules (docs/scopes.md):
- operator (CLI): every collection, or those `--collections` names;
- a channel: the collections mapped to `PLATFORM:CHANNEL`, else `default`;
- private (DM, assistant pane, ephemeral, personal chat): the asker's own collections, the
  union of `user:PLATFORM:USER` and every `group:PLATFORM:GROUP` they are in, else `default`;
- an externally shared channel: the channel's collections that are marked shareable.
Out of scope = unknown: the scoped catalog answers a document or chunk outside the scope
as it answers an id that does not exist.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from docassist.core.documents import Chunk, DocumentInfo
from docassist.core.ports import (
    Catalog,
    MembershipLookup,
    NoGroups,
    Retriever,
    ScopeRules,
    SearchHit,
)
from docassist.core.scopes import (
    DEFAULT_SCOPE,
    EVERYTHING,
    Audience,
    Scope,
    channel_subject,
    group_subject,
    is_hashed_user,
    user_subjects_of,
)
from docassist.core.state import ConversationState


class NoScopeRules:
    """An installation that never configured scopes: no mappings, nothing shareable."""

    def scope_mappings(self) -> dict[str, tuple[str, ...]]:
        return {}

    def shareable_collections(self) -> frozenset[str]:
        return frozenset()

    def collection_names(self) -> list[str]:
        return ["default"]


class ScopeResolver:
    def __init__(self, rules: ScopeRules, membership: MembershipLookup | None = None) -> None:
        self.rules = rules
        self.membership = membership or NoGroups()

    def scope_of(self, audience: Audience) -> Scope:
        if audience.kind == "unset":
            return DEFAULT_SCOPE
        if audience.kind == "operator":
            return (EVERYTHING if audience.collections is None
                    else Scope(frozenset(audience.collections)))
        mappings = self.rules.scope_mappings()
        if audience.kind == "private":
            return self.user_scope(audience.platform, audience.user or "", mappings)
        channel = self._channel_scope(audience, mappings)
        if audience.kind == "shared":
            assert channel.collections is not None
            return Scope(channel.collections & self.rules.shareable_collections())
        return channel

    def user_scope(self, platform: str, user: str,
                   mappings: dict[str, tuple[str, ...]] | None = None) -> Scope:
        """The asker's own collections: their mapping and their groups', else `default`."""
        mappings = self.rules.scope_mappings() if mappings is None else mappings
        subjects = user_subjects_of(platform, user, mappings)
        # A saved audience's user is a hash no directory can look up: group-granted
        # collections do not count for it (fail closed). No lookup without group mappings.
        if not is_hashed_user(user) and any(s.startswith("group:") for s in mappings):
            subjects += [group_subject(platform, group)
                         for group in sorted(self.membership.groups_of(platform, user))]
        found = {name for subject in subjects for name in mappings.get(subject, ())}
        return Scope(frozenset(found)) if found else DEFAULT_SCOPE

    def held_back(self, audience: Audience, scope: Scope) -> Scope | None:
        """What the asker could read beyond what this conversation may see (None when
        nothing, or nobody to offer a private answer to)."""
        if audience.kind not in ("channel", "shared") or not audience.user:
            return None
        extra = self.user_scope(audience.platform, audience.user).without(scope)
        return extra if extra.collections else None

    def answers_privately(self, audience: Audience, scope: Scope, retriever: Retriever,
                          question: str, threshold: float | None) -> bool:
        """True when the asker's own collections beyond this conversation's scope hold a
        chunk good enough to answer: the reply then offers a private answer (one extra
        search, only when such collections exist)."""
        extra = self.held_back(audience, scope)
        if extra is None:
            return False
        hits = scoped(retriever, extra).search(question, 1)
        return any(threshold is None or hit.score >= threshold for hit in hits)

    @staticmethod
    def _channel_scope(audience: Audience, mappings: dict[str, tuple[str, ...]]) -> Scope:
        mapped = mappings.get(channel_subject(audience.platform, audience.channel or ""))
        return Scope(frozenset(mapped)) if mapped else DEFAULT_SCOPE


@dataclass(frozen=True)
class ScopedCatalog:
    """A catalog that knows only the documents (and their chunks) in the scope. Made per
    turn, it remembers each document it looked up: a procedure reads every section of one
    document (core/procedure.py), and each chunk is checked against its document."""

    catalog: Catalog
    scope: Scope
    _seen: dict[str, DocumentInfo | None] = field(default_factory=dict, compare=False,
                                                  repr=False)

    def documents(self) -> list[DocumentInfo]:
        return [d for d in self.catalog.documents() if self.scope.allows(d.collection)]

    def document(self, document_id: str) -> DocumentInfo | None:
        if document_id in self._seen:
            return self._seen[document_id]
        document = self.catalog.document(document_id)
        visible = document if document and self.scope.allows(document.collection) else None
        self._seen[document_id] = visible
        return visible

    def chunk(self, chunk_id: str) -> Chunk | None:
        chunk = self.catalog.chunk(chunk_id)
        if chunk is None or self.scope.everything:
            return chunk
        return chunk if self.document(chunk.document_id) is not None else None


class ScopedRetriever:
    """A retriever restricted to a scope inside its ranking (see `Retriever.search_in`)."""

    def __init__(self, retriever: Retriever, scope: Scope) -> None:
        self.retriever = retriever
        self.scope = scope
        self.name = retriever.name
        self.default_threshold = retriever.default_threshold

    def search(self, query: str, top_k: int) -> list[SearchHit]:
        return self.retriever.search_in(query, top_k, self.scope)

    def search_in(self, query: str, top_k: int, scope: Scope) -> list[SearchHit]:
        names = scope.collections
        if self.scope.collections is not None:
            names = self.scope.collections if names is None else names & self.scope.collections
        return self.retriever.search_in(query, top_k, Scope(names))


def thread_audience(audience: Audience, state: ConversationState) -> Audience:
    """A thread once seen shared with another organization stays shared: a button press
    in it carries no `is_ext_shared_channel` to tell (the state keeps the mark)."""
    if audience.kind == "shared":
        state.shared_outside = True
    elif audience.kind == "channel" and state.shared_outside:
        audience = audience.model_copy(update={"kind": "shared"})
    state.audience = audience.kept()
    return audience


def scoped(retriever: Retriever, scope: Scope) -> Retriever:
    """The retriever itself for every collection (nothing to restrict), else restricted."""
    return retriever if scope.everything else ScopedRetriever(retriever, scope)


def scoped_catalog(catalog: Catalog, scope: Scope) -> Catalog:
    return catalog if scope.everything else ScopedCatalog(catalog, scope)
