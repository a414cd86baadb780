"""The stores every conformance suite runs against (tests/storage/test_store_conformance*.py,
tests/scopes/test_scope_store_conformance.py; the `any_store` fixture of tests/conftest.py),
and the rows and commits those suites share. A new store joins by adding its factory to
STORE_FACTORIES."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from docassist.core.ports import (
    ConversationStore,
    DocumentIndex,
    FeedbackLog,
    GapLog,
    Inbox,
    InboxGauge,
    QuestionLog,
    ShadowLog,
    TraceLog,
)
from docassist.core.state import ConversationState
from docassist.core.trace import TurnRecord
from docassist.storage import Store
from tests.helpers import key


class AnyStore(ConversationStore, DocumentIndex, FeedbackLog, Inbox, InboxGauge, ShadowLog,
               TraceLog, QuestionLog, GapLog, Protocol):
    def erase_before(self, cutoff: str) -> Any: ...


def _sqlite(tmp_path: Path) -> Store:
    return Store(tmp_path / "conformance.db")


STORE_FACTORIES: dict[str, Callable[[Path], Any]] = {"sqlite": _sqlite}


def conformance_turn(result_id: str, turn_id: int = 1, *, event_id: str | None = None,
                     created_at: str = "2026-11-30T00:00:00", thread: str = "c"
                     ) -> TurnRecord:
    return TurnRecord(
        result_id=result_id, conversation_id=key(thread).conversation_id, generation=0,
        turn_id=turn_id, platform="test", created_at=created_at, status="answered",
        decision_status="action_proposed", decision_reason=None, decided_by="selector",
        action=None, tool_name=None, tool_status=None, error_code=None, language="en",
        question_sha256=None, standalone_sha256=None, answer_sha256=None,
        resolution_status=None, history_used=False, source_ids=[], source_turn_id=None,
        warnings=[], duration_ms=0.0, backend="test", model="test", catalog_version="v",
        prompt_sha256=None, user_sha256=None, event_id=event_id)


def commit_turn(store: AnyStore, result_id: str, version: int = 0, **kwargs: Any) -> int:
    turn = conformance_turn(result_id, version + 1, **kwargs)
    return store.commit_turn(key(kwargs.get("thread", "c")),
                             ConversationState(next_turn_id=version + 2), version, turn, [])
