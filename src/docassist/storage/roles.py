"""The store as each of its callers sees it: one small protocol per role, and `Storage`,
every role at once (what `open_store` returns).

Both stores (SQLite's database.Store, postgres.PostgresStore) satisfy every protocol here;
mypy proves it where `open_store` returns either as a `Storage`. A caller is typed with the
narrowest role it uses, so a method only one store has is refused where it is called.
The roles of the core (a turn, an adapter, the inbox) live in core/ports/; those that only
storage, sync and the CLI speak to are here.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol

from docassist.core.documents import DEFAULT_COLLECTION, Chunk, DocumentInfo, ParsedDocument
from docassist.core.ports import (
    AdapterStore,
    Catalog,
    DocumentIndex,
    GapLog,
    InboxGauge,
    QuestionLog,
    SourceLog,
    TraceLog,
    TurnStore,
)
from docassist.core.sources import Source, SyncOutcome, SyncTimes
from docassist.core.stale import DocumentChange, StaleNote
from docassist.storage.privacy import Erasure
from docassist.storage.source_rows import WebItem


class IndexVersion(Protocol):
    def index_version(self) -> int:
        """Moves whenever the searchable catalog changes (in-memory indexes are rebuilt)."""
        ...


class VersionedCatalog(Catalog, IndexVersion, Protocol):
    """The catalog with its version: what a retriever's in-memory index is built from."""

    def chunk_collections(self) -> dict[str, str]: ...

    def current_chunks(self) -> list[Chunk]: ...


class LexicalRows(VersionedCatalog, Protocol):
    """What the bm25 retriever reads: the searchable rows, and the store's full-text scores."""

    def fts_rows(self, after_rowid: int, limit: int) -> list[tuple[int, str, str, str, str]]: ...

    def fts_scores(self, match: str) -> list[tuple[int, float]]: ...

    def search_fts(self, match: str, limit: int) -> list[tuple[Chunk, DocumentInfo, float]]: ...


class EmbeddingWrites(Protocol):
    """What `embed_missing` reads and writes."""

    def chunks_without_embedding(self, model: str) -> list[Chunk]: ...

    def save_embeddings(self, model: str, chunk_ids: list[str], vectors: Any) -> None: ...


class VectorRows(VersionedCatalog, EmbeddingWrites, Protocol):
    """What the dense retriever reads: the vectors of one embedder (it embeds what is
    missing first)."""

    def embedding_matrix(self, model: str) -> tuple[list[str], Any]: ...


class SearchRows(LexicalRows, VectorRows, Protocol):
    """What every retriever reads together."""




class IndexWrites(DocumentIndex, Protocol):
    """The catalog as the indexer and the syncs write it (documents of a source, in a
    collection)."""

    def replace_document(self, parsed: ParsedDocument, source_path: str, *,
                         source: str | None = None,
                         collection: str = DEFAULT_COLLECTION) -> None: ...

    def document_at(self, source_path: str) -> DocumentInfo | None: ...

    def tag_document(self, document_id: str, source: str | None, collection: str) -> None: ...


class SourceItems(IndexWrites, Protocol):
    """What a remote source's sync keeps besides documents: the items it saw (web pages,
    Confluence pages, drive items) and its own resume state."""

    def web_items(self, source: str) -> dict[str, WebItem]: ...

    def save_web_item(self, source: str, item: WebItem) -> None: ...

    def forget_web_item(self, source: str, url: str) -> None: ...

    def source_document_ids(self, source: str) -> dict[str, str]: ...

    def source_sync_state(self, source: str) -> dict[str, str]: ...

    def save_source_sync_state(self, source: str, state: dict[str, str]) -> None: ...


class Leases(Protocol):
    """Named leases: one holder at a time across processes, until it expires."""

    def claim_lease(self, name: str, holder: str, seconds: float) -> bool: ...

    def release_lease(self, name: str, holder: str) -> None: ...

    def lease_rows(self) -> Iterator[dict[str, Any]]: ...


class SourceRegistry(SourceLog, Protocol):
    """The configured sources."""

    def sources(self) -> list[Source]: ...

    def add_source(self, source: Source) -> None: ...


class SyncRows(SourceItems, SourceRegistry, Leases, Protocol):
    """What a sync writes: its documents and items, when it ran, and the stale notes of the
    documents it changed."""

    def record_sync_started(self, source: str) -> None: ...

    def record_sync(self, outcome: SyncOutcome, every_seconds: float | None) -> None: ...

    def sync_times(self, source: str) -> SyncTimes | None: ...

    def record_stale_notes(self, changes: dict[str, DocumentChange], titles: dict[str, str],
                           active_days: int,
                           collections: dict[str, str] | None = None) -> int: ...


class MetaValues(Protocol):
    """Small named values of the store (marks of an index run in progress)."""

    def meta_value(self, key: str) -> str | None: ...

    def set_meta_value(self, key: str, value: str | None) -> None: ...


class FirstStart(MetaValues, Catalog, Protocol):
    """What tells a first start that did not finish (or has nothing to serve)."""

    def sources(self) -> list[Source]: ...


class TraceEraser(Protocol):
    def erase_before(self, cutoff: str) -> Erasure:
        """Erase every stored copy of user text older than `cutoff` (privacy.py)."""
        ...


class Retention(TraceEraser, Leases, Protocol):
    """The daily retention purge: erased once a day across processes (a lease)."""


class EvalRuns(Protocol):
    """Stored evaluation runs (decisions, canary)."""

    def save_eval_run(self, kind: str, source: str, report: Any) -> str: ...

    def eval_run(self, run_id: str) -> dict[str, Any] | None: ...

    def eval_runs(self) -> list[dict[str, Any]]: ...

    def latest_eval_run(self, kind: str) -> dict[str, Any] | None: ...


class ReportRows(Catalog, TraceLog, SourceLog, GapLog, EvalRuns, Protocol):
    """What the HTML report reads."""


class NoteQueue(Protocol):
    """The stale notes as their couriers (and tests) see them."""

    def claim_stale_notes(self, platform: str, holder: str, seconds: float,
                          limit: int) -> list[StaleNote]: ...

    def note_delivered(self, note_id: int) -> None: ...

    def note_failed(self, note_id: int, error: str) -> None: ...

    def stale_note_rows(self) -> list[dict[str, Any]]: ...


class RowDumps(Protocol):
    """The inbox and its claims as stored rows (operators' inspection, tests)."""

    def inbox_rows(self) -> list[dict[str, Any]]: ...

    def claim_rows(self) -> list[dict[str, Any]]: ...


class Storage(TurnStore, AdapterStore, QuestionLog, InboxGauge, SearchRows,
              SyncRows, MetaValues, Retention, ReportRows, NoteQueue,
              RowDumps, Protocol):
    """Every role at once: the store `open_store` returns, whichever backend it is."""

    def close(self) -> None: ...
