"""`docassist gaps` below the CLI: questions kept as vectors after the commit (no text without
save_raw), the gap turns of a period grouped by meaning, purged with the traces."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from docassist.core.gaps import Gap, QuestionRecorder, group_gaps
from docassist.core.messages import Command
from docassist.core.results import TurnResult
from docassist.core.turn import TurnEngine
from docassist.models.embedders import get_embedder
from docassist.storage import Store
from tests.conftest import EngineFactory
from tests.helpers import message

CANTEEN = ["How is overtime paid on public holidays?",
           "What is the overtime rate for working on a holiday?"]
PARKING = "Where can visitors park their cars?"
TLS = "How do I renew the TLS certificate?"


def engine_with_questions(make_engine: EngineFactory, store: Store,
                          save_raw: bool = False) -> TurnEngine:
    engine = make_engine(save_raw=save_raw)
    engine.questions = QuestionRecorder(store, get_embedder("use"), save_raw=save_raw)
    return engine


def ask(engine: TurnEngine, text: str, thread: str) -> TurnResult:
    result = engine.handle(message(text, thread=thread))
    assert result is not None
    assert engine.questions is not None
    engine.questions.wait(30)
    return result


def groups_since_start(store: Store) -> list[dict[str, Any]]:
    rows = store.gap_rows("2000-01-01")
    return [group.model_dump() for group in group_gaps(map(Gap.from_row, rows), store)]


def test_unanswered_questions_are_grouped_by_meaning_without_their_text(
        make_engine: EngineFactory, store: Store, db_path: Path) -> None:
    engine = engine_with_questions(make_engine, store)
    first, second = (ask(engine, text, f"c{n}") for n, text in enumerate(CANTEEN))
    parking = ask(engine, PARKING, "p")
    answered = ask(engine, TLS, "t")
    assert [r.status for r in (first, second, parking, answered)] == [
        "no_answer", "no_answer", "no_answer", "answered"]
    store.record_feedback(answered.result_id, "U7", positive=False)
    store.record_escalation(answered.result_id, "U7")

    groups = groups_since_start(store)
    assert sorted(group["count"] for group in groups) == [1, 1, 2]
    [canteen] = [group for group in groups if group["count"] == 2]
    assert canteen["kinds"] == {"no_answer": 2}
    assert all(example["text"] is None and len(example["sha256"]) == 64
               for example in canteen["examples"])
    assert canteen["documents"] and all("owner" in d for d in canteen["documents"])
    [voted] = [group for group in groups if "thumbs_down" in group["kinds"]]
    assert voted["kinds"] == {"thumbs_down": 1, "escalation": 1}
    assert voted["documents"][0]["document_id"].startswith("DOC-TLS")
    assert voted["documents"][0]["owner"]  # the demo documents name their owners
    # What is kept: a vector and document ids, no text anywhere in the row.
    with sqlite3.connect(db_path) as connection:
        rows = connection.execute("SELECT question, vector, document_ids "
                                  "FROM question_vectors").fetchall()
    assert len(rows) == 4 and all(q is None and v for q, v, _ in rows)
    assert not any(CANTEEN[0].encode() in bytes(v) for _, v, _ in rows)


def test_with_save_raw_the_examples_show_the_questions(make_engine: EngineFactory,
                                                        store: Store) -> None:
    engine = engine_with_questions(make_engine, store, save_raw=True)
    for n, text in enumerate(CANTEEN):
        ask(engine, text, f"c{n}")
    [group] = groups_since_start(store)
    assert [example["text"] for example in group["examples"]] == CANTEEN


def test_question_vectors_go_with_the_traces_on_purge(make_engine: EngineFactory,
                                                      store: Store, db_path: Path) -> None:
    engine = engine_with_questions(make_engine, store)
    ask(engine, CANTEEN[0], "c")
    erased = store.erase_before("9999-01-01")
    assert erased.question_vectors == 1 and erased.turns == 1
    assert store.gap_rows("2000-01-01") == []
    with sqlite3.connect(db_path) as connection:
        assert connection.execute("SELECT count(*) FROM question_vectors").fetchone() == (0,)


def test_the_reason_of_a_bad_vote_comes_with_its_group(make_engine: EngineFactory,
                                                       store: Store) -> None:
    engine = engine_with_questions(make_engine, store)
    answered = ask(engine, TLS, "t")
    store.record_feedback(answered.result_id, "U7", positive=False)
    assert groups_since_start(store)[0]["reasons"] == []  # a 👎 without a reason
    store.record_feedback_reason(answered.result_id, "U7", "outdated", "the words")
    [group] = groups_since_start(store)
    assert group["reasons"] == ["outdated"] and group["kinds"] == {"thumbs_down": 1}
    assert "the words" not in str(group)  # the user's words are not a gap's reason


def test_without_an_embedder_gaps_group_by_the_closest_document(
        make_engine: EngineFactory, store: Store) -> None:
    engine = make_engine()
    engine.questions = QuestionRecorder(store, None, save_raw=False)
    results = [ask(engine, text, f"c{n}") for n, text in enumerate([TLS, TLS + " Quickly."])]
    for result in results:
        store.record_feedback(result.result_id, "U1", positive=False)
    [group] = groups_since_start(store)
    assert group["count"] == 2 and group["documents"][0]["document_id"].startswith("DOC-TLS")


@pytest.mark.parametrize("status", ["cleared", "empty_message"])
def test_turns_without_a_question_keep_nothing(make_engine: EngineFactory, store: Store,
                                               status: str) -> None:
    engine = engine_with_questions(make_engine, store)
    sent = (message("x", thread="x", command=Command.CLEAR) if status == "cleared"
            else message("   ", thread="x"))
    result = engine.handle(sent)
    assert result is not None and result.status == status
    assert engine.questions is not None
    engine.questions.wait(30)
    assert store.gap_rows("2000-01-01") == []


def synthetic(result_id: str, vector: list[float], at: str) -> Gap:
    return Gap(result_id=result_id, created_at=at, platform="slack", kinds=["no_answer"],
               question=None, question_sha256=result_id * 4, document_ids=["DOC-TLS"],
               vector=np.asarray(vector, dtype=np.float32))


def test_grouping_joins_similar_vectors_and_keeps_other_sizes_apart(store: Store) -> None:
    gaps = [synthetic("a", [1.0, 0.0, 0.0], "1"), synthetic("b", [0.9, 0.1, 0.0], "2"),
            synthetic("c", [0.0, 1.0, 0.0], "3"),
            synthetic("d", [1.0, 0.0], "4")]  # another embedder's size: its own group
    groups = group_gaps(gaps, store)
    assert [(g.count, [e.sha256 for e in g.examples]) for g in groups] == [
        (2, ["aaaa", "bbbb"]), (1, ["cccc"]), (1, ["dddd"])]
    assert groups[0].documents[0].document_id == "DOC-TLS" and groups[0].documents[0].owner


class HeldEmbedder:
    """The real embedder, whose first call waits until released (the recorder is busy)."""

    def __init__(self) -> None:
        self.inner = get_embedder("use")
        self.name, self.dimensions = self.inner.name, self.inner.dimensions
        self.entered, self.release = threading.Event(), threading.Event()
        self.calls: list[int] = []

    def embed_queries(self, texts: list[str]) -> npt.NDArray[np.float32]:
        self.calls.append(len(texts))
        if len(self.calls) == 1:
            self.entered.set()
            self.release.wait(30)
        return self.inner.embed_queries(texts)

    def embed_passages(self, texts: list[str]) -> npt.NDArray[np.float32]:
        return self.inner.embed_passages(texts)


def test_questions_that_queue_while_one_is_written_are_written_together(
        make_engine: EngineFactory, store: Store) -> None:
    """One transaction for what queued (the write lock once, not once per turn): the five
    questions that waited behind the first are written together, with one time."""
    engine = make_engine()
    embedder = HeldEmbedder()
    recorder = engine.questions = QuestionRecorder(store, embedder, save_raw=False)
    first = engine.handle(message(TLS, thread="q0"))
    assert first is not None and embedder.entered.wait(30)
    later = [engine.handle(message(f"{PARKING} ({n})", thread=f"q{n}")) for n in range(1, 6)]
    embedder.release.set()
    recorder.wait(30)
    assert embedder.calls == [1, 5]
    stored = dict(store.db.execute("SELECT result_id, created_at FROM question_vectors"
                                   ).fetchall())
    assert sorted(stored) == sorted([first.result_id, *(r.result_id for r in later if r)])
    assert len({stored[r.result_id] for r in later if r}) == 1
