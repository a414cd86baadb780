"""Every seam: the protocols the core and the adapters talk through, and the value types
they exchange. Storage, models and adapters implement them.

A leaf: nothing here imports a module of `docassist` that imports this one back.
Optional abilities are declared as flags (`Answerer.can_stream`), never probed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol, TypedDict

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field

from docassist.core.documents import Chunk, DocumentInfo, ParsedDocument
from docassist.core.feedback import FeedbackReason
from docassist.core.messages import ChatMessage, ConversationKey
from docassist.core.results import TurnResult
from docassist.core.scopes import Scope
from docassist.core.sources import SourceStatus, SyncOutcome
from docassist.core.state import ConversationState, HistoryMessage
from docassist.core.statuses import InboxStatus, Language
from docassist.core.trace import ShadowRecord, ToolCallRecord, TurnRecord


@dataclass(frozen=True)
class SearchHit:
    """A chunk found for a query, with the retriever's score on its documented scale."""

    chunk: Chunk
    document: DocumentInfo
    score: float


class Catalog(Protocol):
    def documents(self) -> list[DocumentInfo]: ...

    def document(self, document_id: str) -> DocumentInfo | None: ...

    def chunk(self, chunk_id: str) -> Chunk | None: ...


class DocumentIndex(Catalog, Protocol):
    """The catalog as the indexer writes it: a new version supersedes the previous chunks."""

    def replace_document(self, parsed: ParsedDocument, source_path: str) -> None: ...

    def remove_document(self, document_id: str) -> None: ...

    def current_chunks(self) -> list[Chunk]: ...

    def is_superseded(self, chunk_id: str) -> bool: ...

    def prune_superseded(self, before: str) -> int:
        """Delete chunks superseded before the ISO time `before`; returns how many."""
        ...


class Retriever(Protocol):
    """Ranks chunks for a query. `default_threshold` is on the retriever's own score scale."""

    name: str
    default_threshold: float

    def search(self, query: str, top_k: int) -> list[SearchHit]: ...

    def search_in(self, query: str, top_k: int, scope: Scope) -> list[SearchHit]:
        """`search` over the chunks of the scope's collections only: the restriction is
        applied before ranking and `top_k`, never to the results afterwards."""
        ...


class Embedder(Protocol):
    """Text to L2-normalised float32 rows (a dot product is the cosine similarity)."""

    name: str
    dimensions: int

    def embed_queries(self, texts: list[str]) -> npt.NDArray[np.float32]: ...

    def embed_passages(self, texts: list[str]) -> npt.NDArray[np.float32]: ...


@dataclass(frozen=True)
class StoredConversation:
    state: ConversationState
    version: int


class ConversationStore(Protocol):
    def load(self, key: ConversationKey) -> StoredConversation: ...

    def commit_turn(
        self,
        key: ConversationKey,
        state: ConversationState,
        expected_version: int,
        turn: TurnRecord,
        tool_calls: list[ToolCallRecord],
        result: TurnResult | None = None,
    ) -> int:
        """Save state, trace rows and the turn's event id in one transaction; return the new
        version. A crash before it leaves nothing, so a resumed event runs again.

        With `result`, a durable-inbox event with the turn's event id is marked answered
        (with the result to deliver) in the same transaction: a crash right after the commit
        cannot leave a committed turn whose answer is never delivered.

        Raises `ConcurrentUpdateError` when the stored version is not `expected_version`,
        `DuplicateEventError` when the turn's event id was already answered.
        """
        ...

    def event_seen(self, platform: str, event_id: str) -> bool:
        """True when a turn for this platform event id was already committed."""
        ...

    def ensure_writable(self) -> None:
        """Raise `StorageUnavailableError` (busy, read-only, full) when a write would fail
        now; called before a turn acts, and writes nothing."""
        ...


class SeenEvents(Protocol):
    """The ack path's question: is this event (or the same message) stored already?"""

    def inbox_seen(self, platform: str, event_id: str, dedupe_key: str | None) -> bool: ...


class ConversationLookup(Protocol):
    """What adapters ask about conversations without loading them."""

    def conversation_known(self, conversation_id: str) -> bool:
        """A committed turn, or a stored event that runs one, in this conversation."""
        ...

    def conversation_of_result(self, result_id: str) -> list[dict[str, Any]]:
        """The key columns (platform, workspace, channel, thread) of a result's turn."""
        ...


class FeedbackLog(Protocol):
    """Votes and "ask a human" requests on answers, by result id."""

    def record_feedback(self, result_id: str, user: str, positive: bool) -> None: ...

    def record_feedback_reason(self, result_id: str, user: str, reason: FeedbackReason,
                               text: str | None) -> None: ...

    def record_escalation(self, result_id: str, user: str) -> bool: ...

    def withdraw_escalation(self, result_id: str) -> None: ...


class TraceLog(Protocol):
    """The trace rows as exports and reports read them (dicts keyed by column name)."""

    def turns(self, conversation_id: str | None = None, since: str | None = None,
              until: str | None = None) -> list[dict[str, Any]]: ...

    def tool_calls(self, result_id: str | None = None) -> list[dict[str, Any]]: ...

    def shadow_decisions(self) -> list[dict[str, Any]]: ...

    def feedback(self) -> list[dict[str, Any]]: ...


class ShadowLog(Protocol):
    """Where a shadow selector's proposals go; written after the turn they shadow."""

    def record_shadow(self, record: ShadowRecord) -> None: ...


@dataclass(frozen=True)
class QuestionTrace:
    """What `docassist gaps` keeps of a question: its embedding (no text) and the closest
    documents; the text itself only with save_raw. Purged with the turn's trace."""

    result_id: str
    created_at: str
    embedder: str | None
    vector: npt.NDArray[np.float32] | None
    document_ids: list[str]
    question: str | None = None


class QuestionLog(Protocol):
    """Where the questions of turns go for `docassist gaps`; written after the commit."""

    def record_question(self, trace: QuestionTrace) -> None: ...


class GapLog(Protocol):
    """What `docassist gaps` reads: the gap turns of a period with their question traces,
    votes (with a `reason` when stored) and escalations, as rows keyed by column name."""

    def gap_rows(self, since: str) -> list[dict[str, Any]]: ...


class TurnStore(ConversationStore, ShadowLog, Protocol):
    """Everything `TurnEngine` writes: the turn's commit, and the shadow proposals."""

    def stale_note(self, note_id: int) -> dict[str, Any] | None:
        """The note an "Ask again" names (core/stale.py), or None."""
        ...


# --- selection -----------------------------------------------------------------------


class StateSummary(BaseModel):
    model_config = ConfigDict(extra="forbid")

    has_last_sources: bool
    known_document_ids_in_message: list[str] = Field(default_factory=list)
    unknown_document_ids_in_message: list[str] = Field(default_factory=list)
    pending_clarification: str | None = None


class SelectionRequest(BaseModel):
    """Everything a selector may look at for one message."""

    model_config = ConfigDict(extra="forbid")

    message: str
    standalone_question: str
    history: list[HistoryMessage]
    state_summary: StateSummary
    tool_specs: list[dict[str, Any]]
    language: Language


class SelectorModel(Protocol):
    """Something that reads a selection prompt and returns raw text (JSON, hopefully)."""

    backend: str
    model: str

    def propose(self, request: SelectionRequest) -> str: ...


class Answerer(Protocol):
    """Writes an answer from retrieved chunks, citing chunk ids in brackets."""

    backend: str
    model: str | None
    """The model behind it, for the traces; None when no model writes (extractive)."""
    can_stream: bool
    """True when `compose_stream` yields the answer as it is written; only then is it called."""

    def compose(self, question: str, hits: list[SearchHit], language: str) -> str: ...

    def compose_stream(self, question: str, hits: list[SearchHit], language: str
                       ) -> Iterator[str]: ...


# --- models -----------------------------------------------------------------------------


class Message(TypedDict):
    role: str
    content: str


class ChatModel(Protocol):
    """A model server's client: chat, streamed chat, embeddings."""

    backend: str
    model: str

    def chat(self, messages: list[Message], schema: dict[str, Any] | None = None) -> str: ...

    def chat_stream(self, messages: list[Message]) -> Iterator[str]: ...

    def embed(self, texts: list[str]) -> list[list[float]]: ...


# --- the durable inbox (adapters) ----------------------------------------------------------

class InboxEvent(BaseModel):
    id: int
    platform: str
    event_id: str
    conversation_id: str
    message: ChatMessage
    status: InboxStatus
    result: TurnResult | None = None
    attempts: int = 0


@dataclass
class RateCheck:
    """An arrival to count against the rate limits in the same transaction that stores its
    event (one write on the ack path). `limited` gives the message to store instead when
    the arrival is over a limit (given the epoch second a retry would be); `retry_at` is
    the verdict once counted (0.0 = admitted)."""

    user_key: str
    arrival_id: str
    per_user: int
    global_limit: int
    window: float
    limited: Callable[[float], ChatMessage]
    retry_at: float = 0.0


class Inbox(Protocol):
    def enqueue(self, message: ChatMessage, dedupe_key: str | None = None,
                rate: RateCheck | None = None) -> int | None:
        """Store an event; its inbox id, or None when the event (or dedupe key) was seen.
        With `rate`, the arrival is counted first, in the same transaction, and a limited
        arrival is stored as `rate.limited(retry_at)`."""
        ...

    def unfinished(self) -> list[InboxEvent]:
        """`pending` and `answered` events, oldest first."""
        ...

    def record_answer(self, inbox_id: int, result: TurnResult | None) -> None: ...

    def finish(self, inbox_id: int, status: InboxStatus, error: str | None = None) -> None: ...

    def delivery_failed(self, inbox_id: int, error: str) -> int:
        """Count a failed delivery; returns the attempts so far."""
        ...

    def claim(self, platform: str, holder: str, lease_seconds: float,
              limit: int) -> list[InboxEvent]:
        """Claim up to `limit` unfinished events of `platform` for `holder` until now +
        `lease_seconds`, oldest first: only the oldest unfinished event of a conversation,
        and none of a conversation with a live claim (so turns stay in order across
        processes). `finish` releases the claim."""
        ...

    def renew_claims(self, holder: str, ids: list[int], lease_seconds: float) -> set[int]:
        """Extend `holder`'s claims on `ids`; the ids it still holds."""
        ...

    def stored_event(self, inbox_id: int) -> InboxEvent | None:
        """One event as stored now (its status and answer)."""
        ...

    def release_claims(self, holder: str, ids: list[int]) -> None:
        """Give up `holder`'s claims on `ids` (unfinished events it will not run now)."""
        ...


class RateCounter(Protocol):
    """Rate limits counted where every process sees them."""

    def count_arrival(self, user_key: str, arrival_id: str, per_user: int,
                      global_limit: int, window: float) -> float:
        """Count an arrival in one atomic step: 0.0 when admitted (counted), else the epoch
        second when a retry would be; an arrival id seen before gets its first verdict."""
        ...


@dataclass(frozen=True)
class InboxBacklog:
    pending: int
    """Events stored and not finished (`pending` or `answered`)."""
    oldest_received_at: str | None
    """ISO time the oldest of them arrived; None when there is none."""


class InboxGauge(Protocol):
    """Read at each metrics scrape (so several processes' work is counted once, from the
    store they share)."""

    def inbox_backlog(self) -> InboxBacklog: ...


class StaleNotes(Protocol):
    """Notes that an answer's document changed, and where to post them (Teams addresses)."""

    def stale_note(self, note_id: int) -> dict[str, Any] | None: ...

    def remember_address(self, conversation_id: str, reference: str) -> None: ...

    def address_of(self, conversation_id: str) -> str | None: ...


# --- scopes (issue 22) ----------------------------------------------------------------------


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


# --- what operators watch (metrics) -----------------------------------------------------

class Observer(Protocol):
    """What the core and the adapters report as it happens; `docassist.metrics` turns it into
    Prometheus metrics (the core never imports prometheus-client). Every method is cheap and
    never raises."""

    def turn_finished(self, status: str, decision: str, seconds: float) -> None:
        """A turn ended (committed, or not saved: `storage_unavailable`)."""
        ...

    def model_called(self, backend: str, seconds: float, failed: bool) -> None: ...

    def model_retried(self, what: str) -> None: ...

    def retrieval_finished(self, retriever: str, seconds: float) -> None: ...

    def rate_limited(self) -> None:
        """A message, command or button refused by the rate limit."""
        ...

    def sync_finished(self, outcome: SyncOutcome) -> None: ...


class NullObserver:
    """Reports nowhere: the terminal, the CLI and tests that do not watch."""

    def turn_finished(self, status: str, decision: str, seconds: float) -> None:
        pass

    def model_called(self, backend: str, seconds: float, failed: bool) -> None:
        pass

    def model_retried(self, what: str) -> None:
        pass

    def retrieval_finished(self, retriever: str, seconds: float) -> None:
        pass

    def rate_limited(self) -> None:
        pass

    def sync_finished(self, outcome: SyncOutcome) -> None:
        pass


NULL_OBSERVER: Observer = NullObserver()
