"""The ranker's trained models and what they read: the ranking model (boosted trees) over a
candidate's FEATURES, and the listwise answer model over ANSWER_FEATURES, which gives the
probability that a page answers (the answer/refuse threshold is that probability's,
calibrated on the spent held-out answer sets: docs/ranker-threshold.md).
scripts/train_ranker.py fits them on questions over other public collections (never the
evaluation sets) and writes WEIGHTS_FILE.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from docassist.storage.judge import JUDGED_PAGES
from docassist.storage.ranker_features import FEATURES, FOREIGN_SHARE
from docassist.storage.reader import READ_PASSAGES

WEIGHTS_FILE: Final = Path(__file__).with_name("ranker_weights.json")
"""The trained model (scripts/train_ranker.py writes it, with how it was trained)."""
MARGIN_CAP: Final = 4.0
"""A page's lead in rank score counts up to this: beyond, a small corpus's pages simply differ
(seven pages: any page leads by far), which says nothing about answering."""
MIN_ANSWER_COSINE: Final = 0.15
"""A chunk this far in meaning from the question, in its text and in its heading, answers
nothing however alone its page stands ("dress code for client visits" shares one word with the
TLS page of a seven-page corpus, where any page leads by far). A guard for small corpora, not
a gain: on the training questions it refused 3 more (1 wrong page, 2 right), on the tune split
none."""

ANSWER_FEATURES: Final = (
    "margin", "coverage", "title_coverage", "cosine", "heading_cosine",
    "missing_known_weight", "partly_unknown", "first_of_retrievers", "retrievers_agree",
    "other_language", "judge_cosine", "judge_margin", "reader_score", "reader_glossed",
)
"""What tells whether a candidate's page answers at all: its lead over the best chunk of any
other page, how much of the question it holds (words, meaning, heading), how much of the
question's known words it lacks, whether BM25 and the embedding put their first chunk on
this page (and on one page at all: two retrievers that disagree about a question have
usually found no page that answers it), and whether the question is in the page's language
(a Polish question holds few of an English page's words even when the page answers it),
what e5 makes of the page's leading passage and of its lead over the next pages' (judge.py),
and what the reader makes of the page's best passages (reader.py): read as asked, or, for a
Polish question or page, glossed into English (its scores are worth less, so they get a
weight of their own).
Kept few and of an obvious direction: with more (the
corpus's vocabulary share, the unknown words' weight, the best cosine) the model fitted signs
that held on the training collections and not on a small bilingual one (the demo: "What is
the dress code?" answered from the TLS page, its unknown words counting *for* it)."""


@dataclass(frozen=True)
class Forest:
    """The ranking model: boosted regression trees fitted to order each question's candidates
    (LambdaRank, by LightGBM in scripts/train_ranker.py), summed here with numpy so that
    answering needs neither LightGBM nor the OpenMP runtime its wheel links. Arrays are
    (tree, node) and (tree, leaf); a node sends a row left when its feature is at most the
    threshold, and a negative child `c` is the leaf `~c`."""

    features: npt.NDArray[np.int64]
    thresholds: npt.NDArray[np.float64]
    lefts: npt.NDArray[np.int64]
    rights: npt.NDArray[np.int64]
    leaves: npt.NDArray[np.float64]
    splits: npt.NDArray[np.int64]
    """Per tree, how many nodes it has (it has one leaf more); 0: it is a single leaf."""

    @classmethod
    def of(cls, trees: Sequence[dict[str, Any]]) -> Forest:
        """From the weights file's trees (each its node and leaf lists, as training wrote)."""
        nodes = max([len(tree["split_feature"]) for tree in trees] + [1])
        width = max([len(tree["leaf_value"]) for tree in trees] + [1])

        def padded(key: str, size: int, fill: float, kind: type) -> npt.NDArray[Any]:
            table: npt.NDArray[Any] = np.full((len(trees), size), fill, dtype=kind)
            for row, tree in enumerate(trees):
                table[row, :len(tree[key])] = tree[key]
            return table

        return cls(padded("split_feature", nodes, 0, np.int64),
                   padded("threshold", nodes, 0.0, np.float64),
                   padded("left_child", nodes, -1, np.int64),
                   padded("right_child", nodes, -1, np.int64),
                   padded("leaf_value", width, 0.0, np.float64),
                   np.asarray([len(tree["split_feature"]) for tree in trees], dtype=np.int64))

    def plain(self) -> list[dict[str, list[Any]]]:
        """The trees as the weights file keeps them (`of` reads them back)."""
        return [{"split_feature": self.features[row, :size].tolist(),
                 "threshold": self.thresholds[row, :size].tolist(),
                 "left_child": self.lefts[row, :size].tolist(),
                 "right_child": self.rights[row, :size].tolist(),
                 "leaf_value": self.leaves[row, :size + 1].tolist()}
                for row, size in enumerate(self.splits.tolist())]

    def logits(self, rows: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """Each row's score: the sum of its leaf in every tree."""
        trees = np.arange(len(self.leaves))
        # A row starts at each tree's root (node 0), or at its only leaf (~0).
        node = np.tile(np.where(self.splits > 0, 0, -1), (len(rows), 1))
        values = np.nan_to_num(rows)  # as LightGBM reads a missing value it never saw: 0
        while (active := node >= 0).any():
            row, tree = np.nonzero(active)
            at = node[row, tree]
            left = values[row, self.features[tree, at]] <= self.thresholds[tree, at]
            node[row, tree] = np.where(left, self.lefts[tree, at], self.rights[tree, at])
        return np.asarray(self.leaves[trees, ~node].sum(axis=1), dtype=np.float64)


@dataclass(frozen=True)
class Listwise:
    """The answer model: a linear score per judged page (over standardised ANSWER_FEATURES)
    and one for "none of them answers", turned into probabilities together (a softmax). A
    page's probability so depends on its rivals: two pages that both look like answers share
    it, and a refusal is the "none" option winning (docs/evaluation-method.md, stop 63)."""

    means: npt.NDArray[np.float64]
    scales: npt.NDArray[np.float64]
    weights: npt.NDArray[np.float64]
    none: float
    """The score of "none of these pages answers"."""

    @classmethod
    def of(cls, data: dict[str, Any]) -> Listwise:
        return cls(np.asarray(data["means"], dtype=np.float64),
                   np.asarray(data["scales"], dtype=np.float64),
                   np.asarray(data["weights"], dtype=np.float64), float(data["none"]))

    def probabilities(self, rows: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """Each row's page's probability of being the one that answers, against the others'
        and none (a feature the reader could not give counts as 0, as in training)."""
        if not len(rows):
            return np.zeros(0)
        scores = np.r_[self.none, ((np.nan_to_num(rows) - self.means) / self.scales)
                       @ self.weights]
        exponents = np.exp(scores - scores.max())
        return np.asarray(exponents[1:] / exponents.sum())


@dataclass(frozen=True)
class RankerModel:
    """The ranking model over FEATURES, the listwise answer model over
    ANSWER_FEATURES, and the probability above which the best page is answered."""

    ranking: Forest
    answering: Listwise
    threshold: float
    """Calibrated on the spent held-out answer sets (scripts/train_ranker.py calibrate)."""

    @classmethod
    def load(cls, path: Path = WEIGHTS_FILE) -> RankerModel:
        data = json.loads(path.read_text(encoding="utf-8"))
        if (tuple(data["features"]), tuple(data["answer_features"])) != (
                FEATURES, ANSWER_FEATURES):
            raise ValueError(f"{path} was trained on other features; train it again")
        if "trees" not in data["ranking"]:
            raise ValueError(f"{path} holds a ranking model of another kind (before the "
                             "trees); train it again")
        return cls(Forest.of(data["ranking"]["trees"]), Listwise.of(data["answering"]),
                   float(data["threshold"]))

    def answer_probabilities(self, documents: Sequence[str], matrix: npt.NDArray[np.float64],
                             rank: npt.NDArray[np.float64], judge: npt.NDArray[np.float64],
                             reader: Read) -> npt.NDArray[np.float64]:
        """Per candidate, the probability that its page answers: over the judged pages (the
        leading candidates the judge read) and none; 0 elsewhere, and where the passage is
        too far in meaning."""
        read = ~np.isnan(judge)
        probability = np.zeros(len(documents))
        if read.any():
            answers = answer_features(documents, matrix, rank, judge, reader)
            probability[read] = self.answering.probabilities(answers[read])
        return np.asarray(np.where(nearness(matrix) >= MIN_ANSWER_COSINE, probability, 0.0))


def logistic(logits: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Logits as probabilities."""
    return np.asarray(1.0 / (1.0 + np.exp(-logits)))


def nearness(matrix: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Each candidate's nearness in meaning to the question: the larger cosine of its text
    and of its heading."""
    return np.asarray(np.maximum(matrix[:, FEATURES.index("cosine")],
                                 matrix[:, FEATURES.index("heading_cosine")]))


def page_leaders(documents: Sequence[str], rank: npt.NDArray[np.float64]) -> list[int]:
    """Each page's best candidate, best page first (ties: the earlier candidate)."""
    leaders: dict[str, int] = {}
    for i in np.lexsort((np.arange(len(rank)), -rank)):
        leaders.setdefault(documents[int(i)], int(i))
    return list(leaders.values())


def reading(documents: Sequence[str], rank: npt.NDArray[np.float64],
            readable: Sequence[bool]) -> list[list[int]]:
    """The candidates the reader reads: of each of the best JUDGED_PAGES pages, its best
    READ_PASSAGES of those it can read, best first."""
    order = [int(i) for i in np.lexsort((np.arange(len(rank)), -rank))]
    return [[i for i in order if documents[i] == documents[leader] and readable[i]]
            [:READ_PASSAGES] for leader in page_leaders(documents, rank)[:JUDGED_PAGES]]


@dataclass(frozen=True)
class Read:
    """What the reader made of the judged pages: per candidate, its page's best score where
    the page's leading candidate stands (NaN elsewhere, and for a page it could not read),
    and whether it read that page glossed (a Polish question, or a Polish page)."""

    scores: npt.NDArray[np.float64]
    glossed: npt.NDArray[np.bool_]

    @classmethod
    def of(cls, documents: Sequence[str], rank: npt.NDArray[np.float64],
           groups: Sequence[Sequence[int]], scores: Sequence[float],
           glossed: Sequence[bool]) -> Read:
        """`groups`: reading()'s; `scores` and `glossed` (the question or the passage was
        read glossed): one per candidate of theirs, in order."""
        column = np.full(len(documents), np.nan)
        read_glossed = np.zeros(len(documents), dtype=bool)
        at = 0
        for leader, group in zip(page_leaders(documents, rank), groups, strict=False):
            if group:
                column[leader] = max(scores[at:at + len(group)])
                read_glossed[leader] = any(glossed[at:at + len(group)])
            at += len(group)
        return cls(column, read_glossed)

    def column(self, glossed: bool) -> npt.NDArray[np.float64]:
        """The scores of the pages read that way, 0 for those read the other way (NaN where
        nothing was read)."""
        other = np.where(np.isnan(self.scores), np.nan, 0.0)
        return np.asarray(np.where(self.glossed == glossed, self.scores, other))


def answer_features(documents: Sequence[str], matrix: npt.NDArray[np.float64],
                    rank: npt.NDArray[np.float64], judge: npt.NDArray[np.float64],
                    reader: Read) -> npt.NDArray[np.float64]:
    """One row of ANSWER_FEATURES per candidate (`documents`: each candidate's page;
    `judge`: the judge's cosine of the candidates it read, NaN elsewhere; `reader`: what the
    reader made of the judged pages)."""
    column = {name: matrix[:, FEATURES.index(name)] for name in ANSWER_FEATURES
              if name in FEATURES}
    margins = np.empty(len(documents))
    for position, document in enumerate(documents):
        others = [rank[i] for i, other in enumerate(documents) if other != document]
        margins[position] = rank[position] - max(others) if others else 1.0
    unknown = matrix[:, FEATURES.index("unknown_weight")]
    firsts = [{documents[int(i)] for i in np.flatnonzero(matrix[:, FEATURES.index(column)] == 1.0)}
              for column in ("bm25_reciprocal_rank", "dense_reciprocal_rank")]
    judge_margins = np.full(len(documents), np.nan)
    read = [int(i) for i in np.flatnonzero(~np.isnan(judge))]
    for position in read:
        rivals = [judge[i] for i in read if documents[i] != documents[position]]
        judge_margins[position] = judge[position] - max(rivals) if rivals else 0.0
    extra = {"rank_score": rank, "margin": np.minimum(margins, MARGIN_CAP),
             "judge_cosine": judge, "judge_margin": judge_margins,
             "reader_score": reader.column(glossed=False),
             "reader_glossed": reader.column(glossed=True),
             "first_of_retrievers": np.asarray([sum(document in first for first in firsts)
                                                for document in documents], dtype=np.float64),
             "retrievers_agree": np.full(len(documents), float(
                 all(firsts) and bool(firsts[0] & firsts[1]))),
             # Words no page holds, in a question the corpus otherwise knows ("dress code"
             # asked of the TLS page); not a question in another language (most unknown).
             "partly_unknown": np.where(unknown <= FOREIGN_SHARE, unknown, 0.0)}
    return np.column_stack([extra[name] if name in extra else column[name]
                            for name in ANSWER_FEATURES])
