"""The stores every conformance suite runs against (tests/storage/test_store_conformance*.py,
tests/scopes/test_scope_store_conformance.py; the `any_store` fixture of tests/conftest.py),
and the rows and commits those suites share. SQLite and PostgreSQL (a throwaway cluster,
docassist_testkit.pg); a new store joins by adding its factory to STORE_FACTORIES."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import pytest

from docassist.core.ports import (
    ConversationLookup,
    ConversationStore,
    DocumentIndex,
    FeedbackLog,
    GapLog,
    Inbox,
    InboxGauge,
    QuestionLog,
    SeenEvents,
    ShadowLog,
    TraceLog,
)
from docassist.core.sources import Source, SyncOutcome, SyncTimes
from docassist.core.state import ConversationState
from docassist.core.trace import TurnRecord
from docassist.storage import Store
from docassist.storage.postgres import PostgresStore
from tests.helpers import key


class AnyStore(ConversationStore, DocumentIndex, FeedbackLog, Inbox, InboxGauge, ShadowLog,
               TraceLog, SeenEvents, ConversationLookup, QuestionLog, GapLog, Protocol):
    """The protocols, plus the store rows sources/, exports and search use."""

    def erase_before(self, cutoff: str) -> Any: ...

    def inbox_rows(self) -> list[dict[str, Any]]: ...

    def claim_lease(self, name: str, holder: str, seconds: float) -> bool: ...

    def release_lease(self, name: str, holder: str) -> None: ...

    def add_source(self, source: Source) -> None: ...

    def source_statuses(self) -> list[Any]: ...

    def source_document_ids(self, source: str) -> dict[str, str]: ...

    def source_sync_state(self, source: str) -> dict[str, str]: ...

    def sync_times(self, source: str) -> SyncTimes | None: ...

    def record_sync_started(self, source: str) -> None: ...

    def record_sync(self, outcome: SyncOutcome, every_seconds: float | None) -> None: ...

    def save_source_sync_state(self, source: str, state: dict[str, str]) -> None: ...

    def replace_document(self, parsed: Any, source_path: str, *, source: str | None = None,
                         collection: str = ...) -> None: ...

    def chunks_without_embedding(self, model: str) -> list[Any]: ...

    def save_embeddings(self, model: str, chunk_ids: list[str], vectors: Any) -> None: ...

    def embedding_matrix(self, model: str) -> tuple[list[str], Any]: ...

    def index_version(self) -> int: ...

    def fts_rows(self, after_rowid: int, limit: int) -> list[tuple[int, str, str, str, str]]: ...

    def fts_scores(self, match: str) -> list[tuple[int, float]]: ...

    def search_fts(self, match: str, limit: int) -> list[tuple[Any, Any, float]]: ...


def _sqlite(request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    return Store(tmp_path / "conformance.db")


def _postgres(request: pytest.FixtureRequest, tmp_path: Path) -> PostgresStore:
    return PostgresStore(request.getfixturevalue("pg_url"))


STORE_FACTORIES: dict[str, Callable[[pytest.FixtureRequest, Path], Any]] = {
    "sqlite": _sqlite, "postgresql": _postgres}


def conformance_turn(result_id: str, turn_id: int = 1, *, event_id: str | None = None,
                     created_at: str = "2026-11-30T00:00:00", thread: str = "c",
                     source_ids: list[str] | None = None) -> TurnRecord:
    return TurnRecord(
        result_id=result_id, conversation_id=key(thread).conversation_id, generation=0,
        turn_id=turn_id, platform="test", created_at=created_at, status="answered",
        decision_status="action_proposed", decision_reason=None, decided_by="selector",
        action=None, tool_name=None, tool_status=None, error_code=None, language="en",
        question_sha256=None, standalone_sha256=None, answer_sha256=None,
        resolution_status=None, history_used=False, source_ids=source_ids or [],
        source_turn_id=None,
        warnings=[], duration_ms=0.0, backend="test", model="test", catalog_version="v",
        prompt_sha256=None, user_sha256=None, event_id=event_id)


CONFORMANCE_RESULT = {"conversation_id": key("c").conversation_id, "generation": 0,
                      "turn_id": 1, "status": "answered", "answer": "Run renew.",
                      "language": "en"}


def commit_turn(store: AnyStore, result_id: str, version: int = 0, **kwargs: Any) -> int:
    turn = conformance_turn(result_id, version + 1, **kwargs)
    return store.commit_turn(key(kwargs.get("thread", "c")),
                             ConversationState(next_turn_id=version + 2), version, turn, [])
