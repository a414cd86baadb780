"""The small protocols the core talks to. Storage, models and adapters implement them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from docassist.core.documents import Chunk, DocumentInfo
from docassist.core.messages import ConversationKey
from docassist.core.results import TurnResult
from docassist.core.state import ConversationState
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


class Retriever(Protocol):
    """Ranks chunks for a query. `default_threshold` is on the retriever's own score scale."""

    name: str
    default_threshold: float

    def search(self, query: str, top_k: int) -> list[SearchHit]: ...


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


class ShadowLog(Protocol):
    """Where a shadow selector's proposals go; written after the turn they shadow."""

    def record_shadow(self, record: ShadowRecord) -> None: ...


class TurnStore(ConversationStore, ShadowLog, Protocol):
    """Everything `TurnEngine` writes: the turn's commit, and the shadow proposals."""


class SelectorModel(Protocol):
    """Something that reads a selection prompt and returns raw text (JSON, hopefully)."""

    backend: str
    model: str

    def propose(self, request: SelectionRequest) -> str: ...


class Answerer(Protocol):
    """Writes an answer from retrieved chunks, citing chunk ids in brackets."""

    backend: str

    def compose(self, question: str, hits: list[SearchHit], language: str) -> str: ...


# Imported late: SelectionRequest needs the tool specs, which need nothing from here.
from docassist.core.selection import SelectionRequest  # noqa: E402
