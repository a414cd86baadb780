"""The reader's ranked near misses (scripts/train_reader.py) and the cross-fitted reading of
the ranker's training questions (scripts/train_ranker.py): no question's score comes from a
reader that learned it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from docassist.storage.reader import MODEL_FOLDER, ReaderUnavailable
from tests.helpers import script

_READER = script("train_reader")
_RANKER = script("train_ranker")
RANKED = Path(__file__).resolve().parents[2] / "samples" / "train" / "reading_pairs_ranked.jsonl"


def _case(qid: str, collection: str, lang: str, answerable: bool, answers: str | None,
          near_miss: str | None) -> dict[str, Any]:
    return {"id": qid, "collection": collection, "lang": lang, "question": f"question {qid}",
            "answerable": answerable, "answers": answers, "near_miss": near_miss}


def test_a_question_reads_its_answer_above_its_own_near_miss() -> None:
    rows: list[Any] = []
    pairs: list[tuple[int, int]] = []
    cases = [_case("a", "gds-way", "en", True, "the answer", "a wrong page"),
             _case("b", "gds-way", "en", True, "another answer", None),
             _case("c", "18f-guides", "en", True, "not this fold", "nor this")]
    _READER.with_ranked_pairs(rows, pairs, cases, ("gds-way",))
    assert [(row.passage, row.answers) for row in rows] == [
        ("the answer", True), ("a wrong page", False), ("another answer", True)]
    assert pairs == [(0, 1)]
    assert rows[0].question == rows[1].question == "question a"


def test_an_unanswerable_question_s_near_miss_reads_below_an_answer_of_its_collection_and_language(
) -> None:
    rows: list[Any] = []
    pairs: list[tuple[int, int]] = []
    cases = [_case("en-1", "gds-way", "en", True, "english answer", None),
             _case("pl-1", "gds-way", "pl", True, "polish answer", None),
             _case("pl-2", "gds-way", "pl", False, None, "closest wrong page"),
             _case("en-2", "gds-way", "en", True, None, "answerable, no passage holds it")]
    _READER.with_ranked_pairs(rows, pairs, cases, ("gds-way",))
    (answered, missed), = pairs
    assert rows[answered].passage == "polish answer"
    assert (rows[missed].question, rows[missed].passage, rows[missed].answers) == (
        "question pl-2", "closest wrong page", False)


def test_the_folds_split_the_training_collections_and_the_pairs_come_only_from_them() -> None:
    shipped, second = set(_RANKER.SHIPPED_FOLD), set(_RANKER.SECOND_FOLD)
    assert shipped.isdisjoint(second)
    assert shipped | second == set(_RANKER.TRAIN_SETS)
    cases = [json.loads(line) for line in RANKED.read_text(encoding="utf-8").splitlines()]
    assert {case["collection"] for case in cases} == set(_RANKER.TRAIN_SETS)
    questions = {json.loads(line)["id"] for line in
                 _RANKER.QUESTIONS.read_text(encoding="utf-8").splitlines()}
    assert {case["id"] for case in cases} == questions


def test_a_missing_score_of_a_question_the_shipped_reader_learned_is_never_read_by_it(
        tmp_path: Path) -> None:
    scores = _RANKER.ReaderScores(tmp_path / "scores.json")
    question, keys, texts = "how do I deploy?", ["q1 h c1"], ["Deploying\nRun make deploy."]
    with pytest.raises(SystemExit) as stopped:
        scores.kept(question, keys, texts, scores.scorer(_RANKER.SHIPPED_FOLD[0]))
    assert "--second-reader" in str(stopped.value)
    assert scores.known == {}
    (score,) = scores.kept(question, keys, texts, scores.scorer(_RANKER.SECOND_FOLD[0]))
    assert scores.known == {"q1 h c1": score}


def test_a_question_the_shipped_reader_learned_is_read_by_the_second_reader_when_given(
        tmp_path: Path) -> None:
    second = tmp_path / "second"
    second.mkdir()
    (second / "tokenizer.json").write_bytes((MODEL_FOLDER / "tokenizer.json").read_bytes())
    scores = _RANKER.ReaderScores(tmp_path / "scores.json", second=second)
    question, keys, texts = "how do I deploy?", ["q1 h c1"], ["Deploying\nRun make deploy."]
    with pytest.raises(ReaderUnavailable, match=str(second)):  # its folder, not the shipped one
        scores.kept(question, keys, texts, scores.scorer(_RANKER.SHIPPED_FOLD[0]))
    (second / "model.onnx").symlink_to(MODEL_FOLDER / "model.onnx")
    (score,) = scores.kept(question, keys, texts, scores.scorer(_RANKER.SHIPPED_FOLD[0]))
    assert scores.known == {"q1 h c1": score}


def test_a_kept_score_needs_no_reader(tmp_path: Path) -> None:
    """A retrain with every score kept runs without the second reader."""
    path = tmp_path / "scores.json"
    path.write_text(json.dumps({"q1 h c1": -2.5}), encoding="utf-8")
    scores = _RANKER.ReaderScores(path)
    assert scores.kept("how do I deploy?", ["q1 h c1"], ["Deploying\nRun make deploy."],
                       scores.scorer(_RANKER.SHIPPED_FOLD[0])) == [-2.5]
    assert scores.fresh == 0
