"""The ranking model's trees: what LightGBM fits (scripts/train_ranker.py) is what answering
sums with numpy (storage/ranker_model.Forest), split for split."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import lightgbm
import numpy as np
import pytest

from docassist.storage.ranker_model import WEIGHTS_FILE, Forest, RankerModel
from tests.helpers import script

_MODULE = script("train_ranker")
trees: Callable[[list[dict[str, Any]]], list[dict[str, list[Any]]]] = _MODULE.trees
RANKING_TREES: dict[str, Any] = _MODULE.RANKING_TREES
weights_text: Callable[[dict[str, Any]], str] = _MODULE.weights_text


def _fitted(rounds: int) -> tuple[lightgbm.Booster, np.ndarray]:
    """A small LambdaRank model over 40 questions of 25 candidates with the shipped settings;
    the grade depends on two features, one of them through a threshold."""
    generator = np.random.default_rng(7)
    rows = generator.normal(size=(1000, 6))
    grades = (rows[:, 0] > 0.8).astype(int) + (rows[:, 1] + rows[:, 0] > 1.5).astype(int)
    settings = {**RANKING_TREES, "min_data_in_leaf": 5}
    data = lightgbm.Dataset(rows, grades, group=[25] * 40)
    return lightgbm.train(settings, data, num_boost_round=rounds), rows


def test_the_numpy_forest_scores_as_lightgbm_does() -> None:
    booster, rows = _fitted(30)
    forest = Forest.of(trees(booster.dump_model()["tree_info"]))
    unseen = np.random.default_rng(8).normal(size=(200, 6))
    for sample in (rows, unseen, rows[:1]):
        np.testing.assert_allclose(forest.logits(sample), booster.predict(sample),
                                   rtol=0, atol=1e-9)
    # A row exactly on a threshold goes left, as LightGBM sends it.
    first = trees(booster.dump_model()["tree_info"])[0]
    edge = rows[:1].copy()
    edge[0, first["split_feature"][0]] = first["threshold"][0]
    np.testing.assert_allclose(forest.logits(edge), booster.predict(edge), atol=1e-9)


def test_the_forest_reads_back_what_it_writes() -> None:
    booster, rows = _fitted(10)
    forest = Forest.of(trees(booster.dump_model()["tree_info"]))
    again = Forest.of(json.loads(json.dumps(forest.plain())))
    np.testing.assert_array_equal(again.logits(rows), forest.logits(rows))


def test_a_tree_without_a_split_is_its_one_leaf() -> None:
    single = {"split_feature": [], "threshold": [], "left_child": [], "right_child": [],
              "leaf_value": [0.25]}
    split = {"split_feature": [1], "threshold": [0.0], "left_child": [-1],
             "right_child": [-2], "leaf_value": [-1.0, 1.0]}
    forest = Forest.of([single, split])
    rows = np.asarray([[5.0, -1.0], [5.0, 0.0], [5.0, 2.0]])
    np.testing.assert_array_equal(forest.logits(rows), [-0.75, -0.75, 1.25])
    assert Forest.of([]).logits(rows).tolist() == [0.0, 0.0, 0.0]


def test_the_shipped_ranking_model_is_a_forest_of_the_trained_size() -> None:
    model = RankerModel.load()
    shipped = json.loads(WEIGHTS_FILE.read_text(encoding="utf-8"))
    assert len(model.ranking.leaves) == shipped["trained"]["ranking_rounds"]
    assert int(model.ranking.splits.max()) < RANKING_TREES["num_leaves"]


def test_the_weights_file_holds_a_tree_a_line_and_reads_back_the_same() -> None:
    text = WEIGHTS_FILE.read_text(encoding="utf-8")
    data = json.loads(text)
    assert weights_text(data) == text  # the shipped file is what the script writes
    assert len(text.splitlines()) < len(data["ranking"]["trees"]) + 400
    assert json.loads(weights_text(data)) == data


def test_weights_of_the_linear_ranking_model_are_refused(tmp_path: Path) -> None:
    data = json.loads(WEIGHTS_FILE.read_text(encoding="utf-8"))
    data["ranking"] = {"means": [0.0], "scales": [1.0], "weights": [1.0], "bias": 0.0}
    old = tmp_path / "ranker_weights.json"
    old.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValueError, match=r"another kind.*train it again"):
        RankerModel.load(old)
