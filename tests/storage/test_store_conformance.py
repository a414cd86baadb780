"""The contract every store implements (core/ports.py), run against each implementation.

SQLite and PostgreSQL (a throwaway cluster, tests/pg.py); a new store joins by adding its
factory to `STORE_FACTORIES`. The tests talk to the protocols, never to SQL.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Protocol

import pytest

from docassist.core.documents import parse_document
from docassist.core.errors import ConcurrentUpdateError, DuplicateEventError, StorageError
from docassist.core.ports import (
    ConversationStore,
    DocumentIndex,
    FeedbackLog,
    Inbox,
    ShadowLog,
    TraceLog,
)
from docassist.core.state import ConversationState
from docassist.core.trace import ShadowRecord, TurnRecord
from docassist.storage import Store
from docassist.storage.postgres import PostgresStore
from tests.helpers import key, message


class AnyStore(ConversationStore, DocumentIndex, FeedbackLog, Inbox, ShadowLog, TraceLog,
               Protocol):
    def erase_before(self, cutoff: str) -> Any: ...


def _sqlite(request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    return Store(tmp_path / "conformance.db")


def _postgres(request: pytest.FixtureRequest, tmp_path: Path) -> PostgresStore:
    return PostgresStore(request.getfixturevalue("pg_url"))


STORE_FACTORIES: dict[str, Callable[[pytest.FixtureRequest, Path], Any]] = {
    "sqlite": _sqlite, "postgresql": _postgres}


@pytest.fixture(params=sorted(STORE_FACTORIES))
def any_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[AnyStore]:
    store = STORE_FACTORIES[request.param](request, tmp_path)
    yield store
    store.close()


def _turn(result_id: str, turn_id: int = 1, *, event_id: str | None = None,
          created_at: str = "2026-11-30T00:00:00", thread: str = "c") -> TurnRecord:
    return TurnRecord(
        result_id=result_id, conversation_id=key(thread).conversation_id, generation=0,
        turn_id=turn_id, platform="test", created_at=created_at, status="answered",
        decision_status="action_proposed", decision_reason=None, decided_by="selector",
        action=None, tool_name=None, tool_status=None, error_code=None, language="en",
        question_sha256=None, standalone_sha256=None, answer_sha256=None,
        resolution_status=None, history_used=False, source_ids=[], source_turn_id=None,
        warnings=[], duration_ms=0.0, backend="test", model="test", catalog_version="v",
        prompt_sha256=None, user_sha256=None, event_id=event_id)


def _commit(store: AnyStore, result_id: str, version: int = 0, **kwargs: Any) -> int:
    turn = _turn(result_id, version + 1, **kwargs)
    return store.commit_turn(key(kwargs.get("thread", "c")),
                             ConversationState(next_turn_id=version + 2), version, turn, [])


def _guide(text: str) -> Any:
    return parse_document("guide.md", "guide", f"---\nid: DOC-GUIDE\n---\n# Guide\n\n{text}\n")


def test_conformance_a_new_conversation_is_empty_at_version_zero(any_store: AnyStore) -> None:
    stored = any_store.load(key("new"))
    assert stored.version == 0 and stored.state == ConversationState()


def test_conformance_commit_saves_state_and_returns_the_next_version(
    any_store: AnyStore,
) -> None:
    assert _commit(any_store, "r1") == 1
    assert _commit(any_store, "r2", version=1) == 2
    stored = any_store.load(key("c"))
    assert (stored.version, stored.state.next_turn_id) == (2, 3)
    assert [row["result_id"] for row in any_store.turns(key("c").conversation_id)] == [
        "r1", "r2"]


def test_conformance_commit_with_a_stale_version_is_a_concurrent_update(
    any_store: AnyStore,
) -> None:
    _commit(any_store, "r1")
    with pytest.raises(ConcurrentUpdateError):
        _commit(any_store, "r2", version=0)
    assert [row["result_id"] for row in any_store.turns()] == ["r1"]  # nothing half-written
    assert any_store.load(key("c")).version == 1


def test_conformance_a_duplicate_event_is_refused_and_leaves_nothing(
    any_store: AnyStore,
) -> None:
    assert any_store.event_seen("test", "Ev1") is False
    _commit(any_store, "r1", event_id="Ev1")
    assert any_store.event_seen("test", "Ev1") is True
    assert any_store.event_seen("other", "Ev1") is False  # event ids are per platform
    with pytest.raises(DuplicateEventError):
        _commit(any_store, "r2", version=1, event_id="Ev1")
    assert [row["result_id"] for row in any_store.turns()] == ["r1"]
    assert any_store.load(key("c")).version == 1


def test_conformance_the_inbox_keeps_order_and_refuses_a_repeat(any_store: AnyStore) -> None:
    first = any_store.enqueue(message("one", event_id="E1"))
    second = any_store.enqueue(message("two", thread="t2", event_id="E2"))
    assert first is not None and second is not None
    assert any_store.enqueue(message("one", event_id="E1")) is None
    assert [(event.id, event.event_id, event.status) for event in any_store.unfinished()] == [
        (first, "E1", "pending"), (second, "E2", "pending")]


def test_conformance_inbox_events_are_answered_then_done(any_store: AnyStore) -> None:
    inbox_id = any_store.enqueue(message("one", event_id="E1"))
    assert inbox_id is not None
    any_store.record_answer(inbox_id, None)
    assert [event.status for event in any_store.unfinished()] == ["answered"]
    assert any_store.delivery_failed(inbox_id, "timeout") == 1
    assert any_store.delivery_failed(inbox_id, "timeout") == 2
    any_store.finish(inbox_id, "done")
    assert any_store.unfinished() == []


def test_conformance_replacing_a_document_supersedes_its_old_chunks(
    any_store: AnyStore,
) -> None:
    old = _guide("## Renew\nRun renew-old.")
    any_store.replace_document(old, "guide.md")
    new = _guide("## Renew\nRun renew-new now.")
    any_store.replace_document(new, "guide.md")
    current = {chunk.chunk_id for chunk in any_store.current_chunks()}
    assert current == {chunk.chunk_id for chunk in new.chunks}
    assert all(any_store.is_superseded(chunk.chunk_id) for chunk in old.chunks)
    assert [document.document_id for document in any_store.documents()] == ["DOC-GUIDE"]
    assert any_store.chunk(new.chunks[0].chunk_id) is not None


def test_conformance_removed_documents_leave_the_catalog_and_prune_later(
    any_store: AnyStore,
) -> None:
    parsed = _guide("## Renew\nRun renew.")
    any_store.replace_document(parsed, "guide.md")
    any_store.remove_document("DOC-GUIDE")
    assert any_store.documents() == [] and any_store.document("DOC-GUIDE") is None
    assert any_store.current_chunks() == []
    assert any_store.prune_superseded("2000-01-01T00:00:00") == 0  # not old enough yet
    assert any_store.prune_superseded("2999-01-01T00:00:00") == len(parsed.chunks)


def test_conformance_one_vote_per_user_and_answer(any_store: AnyStore) -> None:
    _commit(any_store, "r1")
    any_store.record_feedback("r1", "U1", positive=True)
    any_store.record_feedback("r1", "U1", positive=False)  # a later click replaces
    any_store.record_feedback("r1", "U2", positive=True)
    assert sorted(row["value"] for row in any_store.feedback()) == [-1, 1]
    with pytest.raises(StorageError):
        any_store.record_feedback("unknown", "U1", positive=True)


def test_conformance_an_answer_is_escalated_once_until_withdrawn(any_store: AnyStore) -> None:
    _commit(any_store, "r1")
    assert any_store.record_escalation("r1", "U1") is True
    assert any_store.record_escalation("r1", "U2") is False
    any_store.withdraw_escalation("r1")
    assert any_store.record_escalation("r1", "U2") is True


def test_conformance_shadow_records_are_kept_beside_their_turn(any_store: AnyStore) -> None:
    _commit(any_store, "r1")
    any_store.record_shadow(ShadowRecord(
        result_id="r1", conversation_id=key("c").conversation_id, turn_id=1,
        created_at="2026-11-30T00:00:01", active_backend="rules", active_model="rules-v1",
        active_status="rejected", active_action=None, candidate_backend="m",
        candidate_model="m1", candidate_status="rejected", candidate_action=None, agree=True,
        candidate_error=None, catalog_version="v"))
    [row] = any_store.shadow_decisions()
    assert (row["result_id"], row["agree"]) == ("r1", 1)


def test_conformance_purge_erases_traces_older_than_the_cutoff(any_store: AnyStore) -> None:
    _commit(any_store, "old", created_at="2020-01-01T00:00:00")
    _commit(any_store, "new", version=1, created_at="2999-01-01T00:00:00")
    any_store.record_feedback("old", "U1", positive=False)
    erased = any_store.erase_before("2026-01-01T00:00:00")
    assert erased.turns == 1
    assert [row["result_id"] for row in any_store.turns()] == ["new"]
    assert any_store.feedback() == []
