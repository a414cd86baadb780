"""The contract every store implements (core/ports/), run against each implementation.

SQLite and PostgreSQL (a throwaway cluster, docassist_testkit.pg); a new store joins by adding its
factory to `STORE_FACTORIES` (tests/storage/conformance.py). The tests talk to the
protocols, never to SQL.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import numpy as np
import pytest

from docassist.core.documents import parse_document
from docassist.core.errors import (
    ConcurrentUpdateError,
    ConfigurationError,
    DuplicateEventError,
    StorageError,
)
from docassist.core.messages import Notice
from docassist.core.ports import (
    InboxBacklog,
    QuestionTrace,
)
from docassist.core.results import TurnResult
from docassist.core.sources import Source, SourceKind, SyncOutcome, SyncTimes
from docassist.core.state import ConversationState, HistoryMessage
from docassist.core.trace import ShadowRecord, ToolCallRecord
from docassist.storage.exports import trace_rows
from tests.helpers import key, message
from tests.storage.conformance import (
    CONFORMANCE_RESULT,
    AnyStore,
    commit_turn,
    conformance_turn,
)


def _guide(text: str) -> Any:
    return parse_document("guide.md", "guide", f"---\nid: DOC-GUIDE\n---\n# Guide\n\n{text}\n")


def test_conformance_a_new_conversation_is_empty_at_version_zero(any_store: AnyStore) -> None:
    stored = any_store.load(key("new"))
    assert stored.version == 0 and stored.state == ConversationState()


def test_conformance_commit_saves_state_and_returns_the_next_version(
    any_store: AnyStore,
) -> None:
    assert commit_turn(any_store, "r1") == 1
    assert commit_turn(any_store, "r2", version=1) == 2
    stored = any_store.load(key("c"))
    assert (stored.version, stored.state.next_turn_id) == (2, 3)
    assert [row["result_id"] for row in any_store.turns(key("c").conversation_id)] == [
        "r1", "r2"]


def test_conformance_a_loaded_state_is_the_callers_own(any_store: AnyStore) -> None:
    """The engine changes a loaded state in place (no copy): another load must not see it."""
    commit_turn(any_store, "r1")
    first = any_store.load(key("c"))
    first.state.next_turn_id = 99
    first.state.history.append(HistoryMessage(role="user", content="not committed"))
    again = any_store.load(key("c"))
    assert again.state is not first.state
    assert (again.state.next_turn_id, again.state.history) == (2, [])


def test_conformance_commit_with_a_stale_version_is_a_concurrent_update(
    any_store: AnyStore,
) -> None:
    commit_turn(any_store, "r1")
    with pytest.raises(ConcurrentUpdateError):
        commit_turn(any_store, "r2", version=0)
    assert [row["result_id"] for row in any_store.turns()] == ["r1"]  # nothing half-written
    assert any_store.load(key("c")).version == 1


def test_conformance_a_duplicate_event_is_refused_and_leaves_nothing(
    any_store: AnyStore,
) -> None:
    assert any_store.event_seen("test", "Ev1") is False
    commit_turn(any_store, "r1", event_id="Ev1")
    assert any_store.event_seen("test", "Ev1") is True
    assert any_store.event_seen("other", "Ev1") is False  # event ids are per platform
    with pytest.raises(DuplicateEventError):
        commit_turn(any_store, "r2", version=1, event_id="Ev1")
    assert [row["result_id"] for row in any_store.turns()] == ["r1"]
    assert any_store.load(key("c")).version == 1


def test_conformance_the_inbox_keeps_order_and_refuses_a_repeat(any_store: AnyStore) -> None:
    first = any_store.enqueue(message("one", event_id="E1"))
    second = any_store.enqueue(message("two", thread="t2", event_id="E2"))
    assert first is not None and second is not None
    assert any_store.enqueue(message("one", event_id="E1")) is None
    assert [(event.id, event.event_id, event.status) for event in any_store.unfinished()] == [
        (first, "E1", "pending"), (second, "E2", "pending")]


def test_conformance_an_event_enqueued_soon_is_committed_when_its_future_completes(
        any_store: AnyStore) -> None:
    """The events lane's write: `enqueue_soon` returns at once; each Future gives the id (or
    None for a repeat) once the row is committed, in the order the events were queued,
    with a blocking `enqueue` among them."""
    futures = [any_store.enqueue_soon(message(f"q{i}", thread=f"t{i % 3}", event_id=f"S{i}"))
               for i in range(12)]
    repeat = any_store.enqueue_soon(message("q0", thread="t0", event_id="S0"))
    blocking = any_store.enqueue(message("b", thread="tb", event_id="B1"))
    ids = [future.result(10) for future in futures]
    assert repeat.result(10) is None and blocking is not None
    stored = [inbox_id for inbox_id in ids if isinstance(inbox_id, int)]
    assert stored == ids and stored == sorted(set(stored))
    assert [event.event_id for event in any_store.unfinished()] == [
        *(f"S{i}" for i in range(12)), "B1"]


def test_conformance_inbox_events_are_answered_then_done(any_store: AnyStore) -> None:
    inbox_id = any_store.enqueue(message("one", event_id="E1"))
    assert inbox_id is not None
    any_store.record_answer(inbox_id, None)
    assert [event.status for event in any_store.unfinished()] == ["answered"]
    assert any_store.delivery_failed(inbox_id, "timeout") == 1
    assert any_store.delivery_failed(inbox_id, "timeout") == 2
    any_store.finish(inbox_id, "done")
    assert any_store.unfinished() == []


def test_conformance_an_answer_is_recorded_once(any_store: AnyStore) -> None:
    """The turn's commit records the answer; recording it again changes nothing, and a
    finished event stays finished."""
    inbox_id = any_store.enqueue(message("one", event_id="E1"))
    assert inbox_id is not None
    first, second = (TurnResult.model_validate({**CONFORMANCE_RESULT, "result_id": result_id})
                     for result_id in ("r1", "r2"))
    any_store.record_answer(inbox_id, first)
    any_store.record_answer(inbox_id, second)
    [event] = any_store.unfinished()
    assert event.status == "answered" and event.result == first
    any_store.finish(inbox_id, "done")
    any_store.record_answer(inbox_id, second)
    assert any_store.unfinished() == []


def test_conformance_the_inbox_backlog_counts_unfinished_events(any_store: AnyStore) -> None:
    assert any_store.inbox_backlog() == InboxBacklog(pending=0, oldest_received_at=None)
    first = any_store.enqueue(message("one", event_id="E1"))
    second = any_store.enqueue(message("two", thread="t2", event_id="E2"))
    assert first is not None and second is not None
    oldest = any_store.inbox_backlog().oldest_received_at
    assert any_store.inbox_backlog().pending == 2 and oldest is not None
    any_store.record_answer(first, None)  # answered, not yet delivered: still unfinished
    assert any_store.inbox_backlog().pending == 2
    any_store.finish(first, "done")
    backlog = any_store.inbox_backlog()
    assert backlog.pending == 1 and backlog.oldest_received_at is not None
    assert backlog.oldest_received_at >= oldest  # the oldest left is the second
    any_store.finish(second, "failed")
    assert any_store.inbox_backlog() == InboxBacklog(pending=0, oldest_received_at=None)


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


def test_conformance_a_chunk_read_before_it_was_pruned_is_gone_after(
    any_store: AnyStore,
) -> None:
    """Chunks are kept in memory by id once read (storage/chunk_cache.py); a prune must
    not leave one readable there, nor a version the index moved past."""
    old = _guide("## Renew\nRun renew.")
    any_store.replace_document(old, "guide.md")
    first = old.chunks[0].chunk_id
    assert any_store.chunk(first) == old.chunks[0]  # read once: now in memory
    new = _guide("## Renew\nRun renew-new now.")
    any_store.replace_document(new, "guide.md")
    assert any_store.chunk(first) == old.chunks[0]  # superseded, still readable
    assert any_store.prune_superseded("2999-01-01T00:00:00") == len(old.chunks)
    assert any_store.chunk(first) is None
    assert any_store.chunk(new.chunks[0].chunk_id) == new.chunks[0]


def test_conformance_one_vote_per_user_and_answer(any_store: AnyStore) -> None:
    commit_turn(any_store, "r1")
    any_store.record_feedback("r1", "U1", positive=True)
    any_store.record_feedback("r1", "U1", positive=False)  # a later click replaces
    any_store.record_feedback("r1", "U2", positive=True)
    assert sorted(row["value"] for row in any_store.feedback()) == [-1, 1]
    with pytest.raises(StorageError):
        any_store.record_feedback("unknown", "U1", positive=True)


def test_conformance_an_answer_is_escalated_once_until_withdrawn(any_store: AnyStore) -> None:
    commit_turn(any_store, "r1")
    assert any_store.record_escalation("r1", "U1") is True
    assert any_store.record_escalation("r1", "U2") is False
    any_store.withdraw_escalation("r1")
    assert any_store.record_escalation("r1", "U2") is True


def test_conformance_shadow_records_are_kept_beside_their_turn(any_store: AnyStore) -> None:
    commit_turn(any_store, "r1")
    any_store.record_shadow(ShadowRecord(
        result_id="r1", conversation_id=key("c").conversation_id, turn_id=1,
        created_at="2026-11-30T00:00:01", active_backend="rules", active_model="rules-v1",
        active_status="rejected", active_action=None, candidate_backend="m",
        candidate_model="m1", candidate_status="rejected", candidate_action=None, agree=True,
        candidate_error=None, catalog_version="v"))
    [row] = any_store.shadow_decisions()
    assert (row["result_id"], row["agree"]) == ("r1", 1)


def test_conformance_purge_erases_traces_older_than_the_cutoff(any_store: AnyStore) -> None:
    commit_turn(any_store, "old", created_at="2020-01-01T00:00:00")
    commit_turn(any_store, "new", version=1, created_at="2999-01-01T00:00:00")
    any_store.record_feedback("old", "U1", positive=False)
    erased = any_store.erase_before("2026-01-01T00:00:00")
    assert erased.turns == 1
    assert [row["result_id"] for row in any_store.turns()] == ["new"]
    assert any_store.feedback() == []


def test_conformance_a_question_vector_comes_back_with_its_gap(any_store: AnyStore) -> None:
    commit_turn(any_store, "r1", created_at="2026-11-30T00:00:00")
    commit_turn(any_store, "r2", version=1, created_at="2026-11-30T00:00:01")
    vector = np.linspace(-1, 1, 8, dtype=np.float32)
    any_store.record_questions([QuestionTrace(
        result_id="r1", created_at="2026-11-30T00:00:02", embedder="use", vector=vector,
        document_ids=["DOC-A", "DOC-B"])])
    any_store.record_feedback("r1", "U1", positive=False)  # r2 is no gap: no vote, answered
    [row] = any_store.gap_rows("2026-01-01")
    assert (row["result_id"], row["kinds"], row["document_ids"], row["question"]) == (
        "r1", ["thumbs_down"], ["DOC-A", "DOC-B"], None)
    assert np.allclose(row["vector"], vector, atol=0.01)  # int8 rows: close, not equal
    assert any_store.gap_rows("2999-01-01") == []


def test_conformance_questions_recorded_together_each_keep_their_vector(
        any_store: AnyStore) -> None:
    for number in range(3):
        commit_turn(any_store, f"r{number}", version=number,
                    created_at=f"2026-11-30T00:00:0{number}")
        any_store.record_escalation(f"r{number}", "U1")
    vectors = [np.full(8, number / 4, dtype=np.float32) for number in range(3)]
    any_store.record_questions([QuestionTrace(
        result_id=f"r{number}", created_at="2026-11-30T00:00:05", embedder="use",
        vector=vectors[number], document_ids=[f"DOC-{number}"]) for number in range(3)])
    any_store.record_questions([])  # nothing queued: nothing written, no error
    rows = {row["result_id"]: row for row in any_store.gap_rows("2026-01-01")}
    assert sorted(rows) == ["r0", "r1", "r2"]
    for number in range(3):
        assert rows[f"r{number}"]["document_ids"] == [f"DOC-{number}"]
        assert np.allclose(rows[f"r{number}"]["vector"], vectors[number], atol=0.01)


def test_conformance_question_vectors_are_purged_with_their_turn(any_store: AnyStore) -> None:
    commit_turn(any_store, "old", created_at="2020-01-01T00:00:00")
    any_store.record_questions([QuestionTrace(
        result_id="old", created_at="2020-01-01T00:00:01", embedder=None, vector=None,
        document_ids=[], question="kept with save_raw")])
    any_store.record_escalation("old", "U1")
    assert [row["question"] for row in any_store.gap_rows("2000-01-01")] == [
        "kept with save_raw"]
    assert any_store.erase_before("2026-01-01T00:00:00").question_vectors == 1
    assert any_store.gap_rows("2000-01-01") == []


# --- what a second store could get wrong (added with the PostgreSQL store) ---------------


def test_conformance_inbox_order_holds_per_conversation(any_store: AnyStore) -> None:
    ids = [any_store.enqueue(message(text, thread=thread, event_id=f"E{number}"))
           for number, (thread, text) in enumerate(
               [("a", "one"), ("b", "uno"), ("a", "two"), ("b", "dos"), ("a", "three")])]
    stored = [inbox_id for inbox_id in ids if inbox_id is not None]
    assert stored == ids and stored == sorted(stored)  # arrival order
    events = any_store.unfinished()
    by_thread: dict[str, list[str]] = {}
    for event in events:
        by_thread.setdefault(event.message.key.thread, []).append(str(event.message.text))
    assert by_thread == {"a": ["one", "two", "three"], "b": ["uno", "dos"]}
    assert any_store.inbox_seen("test", "E1", None) is True
    assert any_store.inbox_seen("test", "E9", None) is False


def test_conformance_a_dedupe_key_refuses_the_same_message_under_another_event_id(
    any_store: AnyStore,
) -> None:
    assert any_store.enqueue(message("hi", event_id="E1"), dedupe_key="C1/1.0") is not None
    assert any_store.enqueue(message("hi", event_id="E2"), dedupe_key="C1/1.0") is None
    assert any_store.inbox_seen("test", "E2", "C1/1.0") is True
    assert [event.event_id for event in any_store.unfinished()] == ["E1"]


def test_conformance_a_finished_event_keeps_no_user_text(any_store: AnyStore) -> None:
    inbox_id = any_store.enqueue(message("my secret question", event_id="E1"))
    assert inbox_id is not None
    any_store.finish(inbox_id, "done")
    [row] = [row for row in any_store.inbox_rows() if row["id"] == inbox_id]
    assert "my secret question" not in row["message"] and row["result"] is None
    assert row["status"] == "done" and row["finished_at"]


def test_conformance_commit_marks_its_inbox_event_answered(any_store: AnyStore) -> None:
    any_store.enqueue(message("one", thread="c", event_id="Ev1"))
    turn = conformance_turn("r1", event_id="Ev1")
    result = TurnResult.model_validate({**CONFORMANCE_RESULT, "result_id": "r1"})
    any_store.commit_turn(key("c"), ConversationState(next_turn_id=2), 0, turn, [], result)
    [event] = any_store.unfinished()
    assert event.status == "answered" and event.result is not None
    assert event.result.result_id == "r1"


def test_conformance_purge_empties_idle_conversations_and_drops_old_events(
    any_store: AnyStore,
) -> None:
    history = ConversationState(next_turn_id=2).model_copy(update={"history": [
        HistoryMessage(role="user", content="old question")]})
    any_store.commit_turn(key("c"), history, 0, conformance_turn("old"), [])
    any_store.enqueue(message("pending text", thread="x", event_id="E1"))
    erased = any_store.erase_before("2999-01-01T00:00:00")
    assert (erased.turns, erased.inbox_events, erased.conversations_emptied) == (1, 1, 1)
    stored = any_store.load(key("c"))
    assert stored.state.history == [] and stored.version == 2  # moved on: no stale save
    assert stored.state.generation == 1
    assert any_store.unfinished() == []
    with pytest.raises(ConcurrentUpdateError):  # a turn that loaded the old history
        commit_turn(any_store, "late", version=1)


def test_conformance_exports_read_the_same_rows(any_store: AnyStore) -> None:
    call = ToolCallRecord(
        result_id="r1", conversation_id=key("c").conversation_id, generation=0, turn_id=1,
        attempt=1, tool_name="answer_from_documents", status="tool_completed", error_code=None,
        arguments={"question": {"sha256": "ab"}}, duration_ms=1.5,
        created_at="2026-11-30T00:00:00", catalog_version="v")
    any_store.commit_turn(key("c"), ConversationState(next_turn_id=2), 0,
                          conformance_turn("r1", source_ids=["DOC-1-aa-0001"]), [call])
    commit_turn(any_store, "r2", version=1, created_at="2026-11-30T00:00:00")  # same moment
    any_store.record_feedback("r1", "U1", positive=True)
    rows = trace_rows(any_store)
    assert [row["result_id"] for row in rows] == ["r1", "r2"]  # insertion order on a tie
    assert rows[0]["feedback"] == 1 and rows[0]["history_used"] is False
    assert rows[0]["source_ids"] == ["DOC-1-aa-0001"]
    assert rows[0]["tool_calls"][0]["arguments"] == {"question": {"sha256": "ab"}}
    assert rows[0]["tool_calls"][0]["duration_ms"] == 1.5
    assert [row["result_id"] for row in trace_rows(any_store, since="2026-11-30T00:00:00",
                                                   until="2026-11-30T00:00:01")] == ["r1", "r2"]
    assert trace_rows(any_store, since="2026-12-01") == []


def test_conformance_a_lease_has_one_holder_until_it_expires(any_store: AnyStore) -> None:
    assert any_store.claim_lease("sync:docs", "A", 60) is True
    assert any_store.claim_lease("sync:docs", "B", 60) is False
    assert any_store.claim_lease("sync:docs", "A", 60) is True  # renewed by its holder
    any_store.release_lease("sync:docs", "A")
    assert any_store.claim_lease("sync:docs", "B", -1) is True  # taken, already expired
    assert any_store.claim_lease("sync:docs", "A", 60) is True  # so A may take it


def test_conformance_sources_are_unique_and_report_their_documents(any_store: AnyStore) -> None:
    any_store.add_source(Source(name="handbook", kind=SourceKind.FOLDER,
                                settings={"path": "/srv/handbook"}))
    with pytest.raises(ConfigurationError):
        any_store.add_source(Source(name="handbook", kind=SourceKind.FOLDER,
                                    settings={"path": "/elsewhere"}))
    any_store.replace_document(_guide("## Renew\nRun renew."), "/srv/handbook/guide.md",
                               source="handbook")
    [status] = any_store.source_statuses()
    assert (status.name, status.documents, status.last_success) == ("handbook", 1, None)
    assert any_store.source_document_ids("handbook") == {"/srv/handbook/guide.md": "DOC-GUIDE"}
    assert any_store.source_sync_state("handbook") == {}
    any_store.save_source_sync_state("handbook", {"delta": "https://graph/delta?token=1"})
    assert any_store.source_sync_state("handbook") == {"delta": "https://graph/delta?token=1"}


def test_conformance_a_sync_records_when_it_began_and_when_it_ended(any_store: AnyStore
                                                                    ) -> None:
    assert any_store.sync_times("docs") is None  # no such source
    any_store.add_source(Source(name="docs", kind=SourceKind.FOLDER, settings={"path": "/d"}))
    assert any_store.sync_times("docs") == SyncTimes(started=None, finished=None)
    any_store.record_sync_started("docs")
    began = any_store.sync_times("docs")
    assert began is not None and began.started and began.finished is None
    [status] = any_store.source_statuses()
    assert (status.last_started, status.last_run) == (began.started, None)  # running (or died)
    any_store.record_sync(SyncOutcome("docs", SourceKind.FOLDER, errors=["down"]), 900)
    ended = any_store.sync_times("docs")
    assert ended is not None and ended.started == began.started
    assert ended.finished is not None and ended.finished >= began.started  # a failure ends it
    [status] = any_store.source_statuses()
    assert status.next_run is not None  # due 900 s after the end, to the millisecond
    assert (datetime.fromisoformat(status.next_run) - datetime.fromisoformat(ended.finished)
            ).total_seconds() == 900


def test_conformance_vectors_round_trip_in_the_int8_encoding(any_store: AnyStore) -> None:
    parsed = _guide("## Renew\nRun renew.\n\n## Revoke\nRun revoke.")
    any_store.replace_document(parsed, "guide.md")
    ids = [chunk.chunk_id for chunk in parsed.chunks]
    vectors = np.eye(len(ids), 8, dtype=np.float32)
    assert [c.chunk_id for c in any_store.chunks_without_embedding("m")] == sorted(ids)
    any_store.save_embeddings("m", ids, vectors)
    chunk_ids, matrix = any_store.embedding_matrix("m")
    assert chunk_ids == sorted(ids) and matrix.shape == (len(ids), 8)
    assert np.allclose(matrix[chunk_ids.index(ids[0])], vectors[0], atol=0.01)
    assert any_store.chunks_without_embedding("m") == []


def test_conformance_searchable_rows_follow_the_index(any_store: AnyStore) -> None:
    before = any_store.index_version()
    any_store.replace_document(_guide("## Renew\nRun renew-old."), "guide.md")
    assert any_store.index_version() > before
    rows = any_store.fts_rows(0, 100)
    assert {row[1] for row in rows} == {c.chunk_id for c in any_store.current_chunks()}
    assert any(row[0] > 0 and "renew" in row[4] for row in rows)
    [(chunk, document, value)] = any_store.search_fts('"renew" "old"', 5)
    assert document.document_id == "DOC-GUIDE" and value < 0 and "renew-old" in chunk.text
    any_store.replace_document(_guide("## Renew\nRun renew-new."), "guide.md")
    assert any_store.search_fts('"old"', 5) == []
    assert [row[0] for row in any_store.fts_scores('"new"')]


def test_conformance_conversation_lookups(any_store: AnyStore) -> None:
    conversation = key("c").conversation_id
    assert any_store.conversation_known(conversation) is False
    refused = message("hi", thread="c", event_id="E0").model_copy(update={
        "notice": Notice(kind="rate_limited", language="en", seconds=30)})
    any_store.enqueue(refused)
    assert any_store.conversation_known(conversation) is False  # a refusal is not a turn
    any_store.enqueue(message("one", thread="c", event_id="E1"))
    assert any_store.conversation_known(conversation) is True  # an event that runs one
    commit_turn(any_store, "r1")
    assert any_store.conversation_of_result("r1") == [
        {"platform": "test", "workspace": "w", "channel": "c", "thread": "c"}]
    assert any_store.conversation_of_result("nope") == []
