"""What the learned selector reads of the thread: how many subjects a reference may mean.

The features are computed with a stand-in embedder (a fixed vector per text) so each number
is known; the selector's behaviour on threads is checked with the shipped weights and USE."""

from __future__ import annotations

import json
import zlib

import numpy as np
import pytest

from docassist.core.message_features import (
    HISTORY_GRAM,
    STATE_FEATURES,
    Vector,
    Vectors,
    features_of,
    hashed,
    history_vector,
)
from docassist.core.planning import guard
from docassist.core.selection import (
    SelectionRequest,
    StateSummary,
    normalize,
    propose_action,
)
from docassist.core.state import HistoryMessage
from docassist.core.tools import default_registry
from docassist.evaluation.decisions import load_cases
from docassist.evaluation.selector_training import BankCatalog, bank_requests
from tests.conftest import REPO
from tests.helpers import rules_selector

THREAD = ("similarity_to_last_question", "similarity_to_last_answer",
          "similarity_between_questions", "cites_two_documents")


def unit(text: str) -> Vector:
    """A stand-in embedding: a fixed random unit vector per text (8 numbers)."""
    row = np.random.default_rng(zlib.crc32(text.encode())).normal(size=8).astype(np.float32)
    return row / np.float32(np.linalg.norm(row))


def units(texts: list[str]) -> Vectors:
    return np.stack([unit(text) for text in texts])


def request(text: str, history: list[tuple[str, str]]) -> SelectionRequest:
    turns = [HistoryMessage(role=role, content=content)
             for question, answer in history
             for role, content in (("user", question), ("assistant", answer))]
    return SelectionRequest(
        message=text, standalone_question=text, history=turns,
        state_summary=StateSummary.model_validate({"has_last_sources": bool(history)}),
        tool_specs=default_registry().specs(), language="en")


def thread_of(text: str, history: list[tuple[str, str]]) -> dict[str, float]:
    values = history_vector(request(text, history), unit, unit(text))
    return dict(zip(THREAD, values.tolist(), strict=True))


def test_the_thread_features_close_the_state_features() -> None:
    assert STATE_FEATURES[-len(THREAD):] == THREAD
    dense = features_of(request("and then?", []), units).dense
    assert len(dense) == 8 + len(STATE_FEATURES)


def test_no_history_measures_nothing() -> None:
    assert thread_of("how long does that take?", []) == dict.fromkeys(THREAD, 0.0)


def test_the_message_is_compared_with_the_last_question_and_answer() -> None:
    answer = "Backups run nightly at 02:00. [DOC-DB-a1d3b925eb-0002]"
    found = thread_of("where do backups go", [("where do backups go", answer)])
    assert found["similarity_to_last_question"] == pytest.approx(1.0, abs=1e-5)
    assert found["similarity_to_last_answer"] == pytest.approx(
        float(unit("where do backups go") @ unit(answer)), abs=1e-5)
    assert found["similarity_to_last_answer"] < 0.99


def test_two_questions_are_compared_only_when_there_are_two() -> None:
    one = thread_of("and then?", [("how do i renew the cert", "Run certbot.")])
    assert one["similarity_between_questions"] == 1.0
    two = thread_of("and then?", [("how do i renew the cert", "Run certbot."),
                                  ("how long is leave", "26 days.")])
    assert two["similarity_between_questions"] == pytest.approx(
        float(unit("how long is leave") @ unit("how do i renew the cert")), abs=1e-5)


@pytest.mark.parametrize(("answers", "two"), [
    (["Restore with docassist-db restore [DOC-DB-2e8f5d13c6-0001], then request access "
      "[DOC-ACCESS-f3a5855790-0005]."], True),
    (["Backups are kept 14 days [DOC-DB-2e8f5d13c6-0001].",
      "Access expires after 8 hours [DOC-ACCESS-f3a5855790-0005]."], True),
    (["Kept 14 days [DOC-DB-2e8f5d13c6-0001] and deleted nightly [DOC-DB-2e8f5d13c6-0004]."],
     False),
    (["Hi! What can I help you with?"], False),
])
def test_answers_citing_two_documents_are_counted_once_per_document(
        answers: list[str], two: bool) -> None:
    history = [(f"question {index}", answer) for index, answer in enumerate(answers)]
    assert thread_of("ile to trwa", history)["cites_two_documents"] == float(two)


def test_the_threads_questions_are_hashed_beside_the_message_and_weigh_less() -> None:
    alone = features_of(request("how do i request it", []), units)
    threaded = features_of(request("how do i request it", [("vpn or bastion?", "Both.")]),
                           units)
    assert set(alone.indices) < set(threaded.indices)
    bastion, _ = hashed([f"{HISTORY_GRAM}bastion"])
    assert int(bastion[0]) in set(threaded.indices)
    assert int(bastion[0]) not in set(alone.indices)
    message_only = np.isin(threaded.indices, alone.indices)
    assert float(threaded.values[message_only] @ threaded.values[message_only]) > float(
        threaded.values[~message_only] @ threaded.values[~message_only])
    # The assistant's words are not read: only the questions name what the user meant.
    answered = features_of(request("how do i request it",
                                   [("vpn or bastion?", "Use the bastion, not VPN.")]), units)
    assert set(answered.indices) == set(threaded.indices)


SELECTOR = rules_selector()
ONE_SUBJECT = [("how long are database backups kept",
                "Backups are kept for 14 days; older files are removed by the nightly cleanup "
                "job. [DOC-DB-2e8f5d13c6-0001]")]
TWO_SUBJECTS_IN_ONE_QUESTION = [(
    "how long are database backups kept and how long does production access last",
    "Backups are kept for 14 days [DOC-DB-2e8f5d13c6-0001], and production access expires "
    "after 8 hours [DOC-ACCESS-f3a5855790-0005].")]
TWO_SUBJECTS_IN_TWO_EXCHANGES = [
    ("how long are database backups kept",
     "Backups are kept for 14 days. [DOC-DB-2e8f5d13c6-0001]"),
    ("and how long does production access last",
     "Production access expires after 8 hours. [DOC-ACCESS-f3a5855790-0005]")]


def decided(text: str, history: list[tuple[str, str]]) -> tuple[str, str | None, str]:
    """A thread's message decided as a turn decides it (resolver, state, selector, guard)."""
    turns = [{"role": role, "content": content} for question, answer in history
             for role, content in (("user", question), ("assistant", answer))]
    line = json.dumps({"id": "t", "message": text, "history": turns,
                       "state": {"has_last_sources": True},
                       "expected": {"status": "clarification_needed"}})
    selection_request = bank_requests(load_cases([line]), BankCatalog(REPO / "samples" / "docs"))[0]
    decision = guard(normalize(propose_action(selection_request, SELECTOR)), text)
    return decision.status, decision.action, str(decision.arguments.get("question", ""))


@pytest.mark.parametrize("text", ["can that be extended?", "kto to ustala?"])
def test_a_reference_to_the_one_subject_is_searched_with_it(text: str) -> None:
    status, action, question = decided(text, ONE_SUBJECT)
    assert (status, action) == ("action_proposed", "answer_from_documents")
    assert "backup" in question


@pytest.mark.parametrize("history", [TWO_SUBJECTS_IN_ONE_QUESTION, TWO_SUBJECTS_IN_TWO_EXCHANGES])
@pytest.mark.parametrize("text", ["can that be extended?", "kto to ustala?"])
def test_the_same_reference_after_two_subjects_asks_which(
        text: str, history: list[tuple[str, str]]) -> None:
    assert decided(text, history)[:2] == ("clarification_needed", None)
