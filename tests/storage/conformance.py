"""Rows and commits the store conformance suites (test_store_conformance*.py) share."""

from __future__ import annotations

from typing import Any, Protocol

from docassist.core.ports import (
    ConversationStore,
    DocumentIndex,
    FeedbackLog,
    GapLog,
    Inbox,
    QuestionLog,
    ShadowLog,
    TraceLog,
)
from docassist.core.state import ConversationState
from docassist.core.trace import TurnRecord
from tests.helpers import key


class AnyStore(ConversationStore, DocumentIndex, FeedbackLog, Inbox, ShadowLog, TraceLog,
               QuestionLog, GapLog, Protocol):
    def erase_before(self, cutoff: str) -> Any: ...


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
