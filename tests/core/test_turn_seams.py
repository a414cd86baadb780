"""The turn's seams: bounded locks, a per-turn flag that is never saved, a shadow selector
asked after the commit and outside the conversation lock."""

from __future__ import annotations

import json
import threading

from docassist.core.ports import ExampleSource, Reading
from docassist.core.selection import SelectionRequest
from docassist.core.state import ConversationState
from docassist.storage import Store
from docassist_testkit.fakes.model_server import proposal
from tests.conftest import EngineFactory
from tests.helpers import message


class _SlowCandidate:
    """A shadow selector that answers only when the test lets it."""

    backend = "slow"
    model = "slow-v1"
    examples: ExampleSource | None = None

    def __init__(self) -> None:
        self.release = threading.Event()
        self.asked = 0

    def propose(self, request: SelectionRequest) -> str:
        self.asked += 1
        assert self.release.wait(10), "the test never released the candidate"
        return proposal("rejected", message="No.")

    def reading(self, request: SelectionRequest) -> Reading | None:
        return None


def test_the_shadow_is_asked_after_the_commit_and_outside_the_lock(
    make_engine: EngineFactory, store: Store
) -> None:
    engine = make_engine()
    candidate = _SlowCandidate()
    engine.shadow = candidate
    first = engine.handle(message("How do I renew the TLS certificate?"))
    # The user has the answer while the candidate is still thinking...
    assert first and first.status == "answered" and not candidate.release.is_set()
    assert store.turns(first.conversation_id)[0]["result_id"] == first.result_id
    # ...and the same thread takes its next turn: the candidate holds no lock.
    second = engine.handle(message("How do I report an incident?"))
    assert second and second.turn_id == first.turn_id + 1
    assert store.shadow_decisions() == []
    candidate.release.set()
    engine.wait_for_shadows()
    rows = store.shadow_decisions()
    assert [row["result_id"] for row in rows] == [first.result_id, second.result_id]
    assert {row["candidate_status"] for row in rows} == {"rejected"}


def test_conversation_locks_are_dropped_when_no_turn_needs_them(
    make_engine: EngineFactory,
) -> None:
    engine = make_engine()
    for thread in ("a", "b", "c"):
        assert engine.handle(message("How do I renew the TLS certificate?", thread=thread))
    assert len(engine._locks) == 0


def test_the_per_turn_attempt_flag_is_not_saved(make_engine: EngineFactory,
                                                store: Store) -> None:
    engine = make_engine()
    result = engine.handle(message("How do I renew the TLS certificate?"))
    assert result and result.tool.status == "tool_completed"
    [row] = store.db.query("SELECT state FROM conversations WHERE conversation_id = ?",
                           [result.conversation_id])
    assert "tool_attempted" not in row["state"]


def test_a_state_saved_with_the_old_flag_still_loads() -> None:
    saved = json.dumps({"next_turn_id": 4, "tool_attempted_this_turn": True})
    state = ConversationState.model_validate_json(saved)
    assert state.next_turn_id == 4 and not state.tool_attempted_this_turn
