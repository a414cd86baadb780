"""Train the second-stage ranker (src/docassist/storage/rerank.py; its models in
ranker_model.py) and calibrate its answer/refuse threshold.

    .venv/bin/python scripts/train_ranker.py train      # fit on samples/train, write weights
    .venv/bin/python scripts/train_ranker.py train --descriptions \
        samples/train/ranker_descriptions.npz           # the same fit, from kept descriptions
    .venv/bin/python scripts/train_ranker.py describe   # only describe (some) collections
    .venv/bin/python scripts/train_ranker.py calibrate  # the threshold, on two spent held-out sets

`train` unpacks the eight training collections (samples/corpora: GDS Way, MoJ Cloud Platform,
PagerDuty incident response, 18F Guides, Home Office engineering guidance, the Rust compiler
development guide, Kubernetes SIG Release's handbooks, Argo CD's operator manual and user
guide; never the evaluation ones), indexes each with the default
embedder into a work folder (reused when present), describes every candidate of every
training question with the ranker's own feature code, and fits the ranking model (LightGBM's
LambdaRank trees, one thread: deterministic) and the answer model (a listwise logistic, numpy,
L2, Newton steps). It reports leave-one-collection-out figures and writes
`ranker_weights.json` with the data's hashes and those figures inside.

Describing is most of a retrain's time (indexing embeds ~8,500 chunks: two minutes here), so
`train` also keeps what it described in DESCRIPTIONS (committed: each candidate's features,
label, grade, chunk, page and passage). `train --descriptions` fits from that file alone,
and tests/storage/test_ranker_training.py checks both halves: one collection described
afresh is what the file keeps, and the fit from the file is the shipped weights.

The answer model reads the judge's cosines (storage/judge.py: e5 over the best pages' leading
passages). e5 reads ~4 passages a second here, so each cosine is computed once and kept in
JUDGE_COSINES (committed, keyed by question id and chunk id); a retrain reads them from there
and computes only the missing ones. tests/storage/test_ranker_training.py recomputes a sample.
The reader's scores (storage/reader.py: a cross-encoder over each judged page's best English
passages, a Polish question glossed) are kept the same way in READER_SCORES, keyed also by
the glossed question's hash, so a changed glossary recomputes what it changes. The reader
learned near misses of half the training collections' questions (SHIPPED_FOLD), so those
questions are read by the second reader, which learned the other half's
(`train_reader.py train --second DIR`, then `train --second-reader DIR` here): every
score the answer model is fitted on is of a question its reader never learned.

`calibrate` runs the model over the first two held-out answer sets (samples/public/handbooks/
answers_heldout.jsonl and answers_heldout2_*.jsonl, 400 questions, both collections: each was
scored once, on 2026-12-03 and 2026-12-04, and has been a tuning set since) and picks the
threshold on the answered page's probability by `right - WRONG_COST * wrong` (a wrong answer costs
more than a refusal, DESIGN §11): the lowest threshold within NOISE_POINTS of the best, since
the curve is flat near its top. It writes the curve into docs/ranker-threshold.md. It does
not read the third, fourth or fifth held-out sets (answers_heldout3_*.jsonl to
answers_heldout5_*.jsonl, each scored once after a calibration).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tarfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from docassist.storage.judge import JUDGED_PAGES, judge_text, judged
from docassist.storage.ranker_model import Forest, Read, answer_features, page_leaders, reading
from docassist.storage.reader import as_read, as_read_passage, glossed

REPO = Path(__file__).resolve().parent.parent
TRAIN_SETS = ("gds-way", "moj-cloud-platform", "pagerduty-incident-response", "18f-guides",
              "homeoffice-engineering", "rustc-dev-guide", "k8s-sig-release", "argocd-docs")
SHIPPED_FOLD = ("gds-way", "moj-cloud-platform", "rustc-dev-guide", "argocd-docs")
"""Collections whose questions' near misses the shipped reader learned (train_reader.py), so
a second reader, which learned the others', reads their questions (ReaderScores)."""
SECOND_FOLD = tuple(name for name in TRAIN_SETS if name not in SHIPPED_FOLD)
EVAL_SETS = ("18f-handbook", "govuk-developer-docs")
QUESTIONS = REPO / "samples" / "train" / "ranker_questions.jsonl"
HANDBOOKS = REPO / "samples" / "public" / "handbooks"
HELD_OUT = (HANDBOOKS / "answers_heldout.jsonl", HANDBOOKS / "answers_heldout2_18f.jsonl",
            HANDBOOKS / "answers_heldout2_govuk.jsonl")
"""The held-out sets the threshold is calibrated on (spent before it was chosen)."""
JUDGE_COSINES = REPO / "samples" / "train" / "judge_cosines.json"
DESCRIPTIONS = REPO / "samples" / "train" / "ranker_descriptions.npz"
"""Every training question's candidates as `describe` found them (save_descriptions)."""
READER_SCORES = REPO / "samples" / "train" / "reader_scores.json"
RANKING_TREES = {"objective": "lambdarank", "learning_rate": 0.05, "num_leaves": 7,
                 "min_data_in_leaf": 50, "feature_fraction": 0.8, "bagging_fraction": 0.8,
                 "bagging_freq": 1, "lambdarank_truncation_level": 10, "seed": 1,
                 "deterministic": True, "num_threads": 1, "verbose": -1}
"""LightGBM's settings for the ranking model: small trees (7 leaves, 50 chunks a leaf at
least) and bagging; over the spent held-out sets, 5 to 11 leaves and 100 to 200 trees all
ranked alike (docs/evaluation-method.md, stop 64). One thread, so a retrain is exact."""
RANKING_ROUNDS = 200
ANSWERING_L2 = 1.0
THRESHOLDS = [float(t) for t in np.round(np.arange(0.0, 1.0, 0.025), 3)]
NOISE_POINTS = 3.0
"""Scores (right − WRONG_COST × wrong) this close count as equal: about three questions of the
400 the threshold is chosen on."""
WRONG_COST = 1.25
"""How many refusals one wrong answer is worth when the threshold is chosen: more than one
(DESIGN §11), and not so many that a page in another language than its question (the demo's
Polish pages asked in English) is refused; docs/ranker-threshold.md shows the curve."""

Matrix = npt.NDArray[np.float64]


@dataclass
class Described:
    question_id: str
    collection: str
    answerable: bool
    features: Matrix
    labels: npt.NDArray[np.int64]
    """Per candidate: 1 when its page answers the question, else 0."""
    documents: list[str]
    grades: npt.NDArray[np.int64]
    """2 for a chunk of the section that answers (when the case names it), 1 for the page's
    other chunks, 0 for other pages: pairs teach the page first, then the passage."""
    question: str
    passages: list[tuple[str, str]]
    """Per candidate, its chunk id and what the judge reads of it."""


Scorer = Callable[[str, list[str]], list[float]]
"""Scores of a question against passages, one per passage."""


class KeptScores:
    """Scores of (question, passage) pairs, computed once and kept in a committed file keyed
    by question id and chunk id: a retrain reads them and computes only the missing ones."""

    verb = "scored"

    def __init__(self, path: Path) -> None:
        self.path = path
        self.known: dict[str, float] = json.loads(path.read_text()) if path.exists() else {}
        self.fresh = 0

    def kept(self, question: str, keys: list[str], texts: list[str],
             compute: Scorer) -> list[float]:
        """Each key's score, the missing ones computed by `compute` from its passage's text."""
        missing = [(key, text) for key, text in zip(keys, texts, strict=True)
                   if key not in self.known]
        if missing:
            scores = compute(question, [text for _, text in missing])
            self.known.update(dict(zip([key for key, _ in missing], scores, strict=True)))
            self.fresh += len(missing)
        return [self.known[key] for key in keys]

    def save(self, folder: Path | None = None) -> None:
        """Keep the new scores: in the committed file, or beside a trial's weights in `folder`
        (so a reproduction run never edits the repository)."""
        if self.fresh:
            path = folder / self.path.name if folder else self.path
            path.write_text(json.dumps(dict(sorted(self.known.items())), indent=0) + "\n")
            print(f"{self.verb} {self.fresh} new passages into {path}", file=sys.stderr)


class JudgeCosines(KeptScores):
    """The judge's cosines of training and tuning questions."""

    verb = "judged"

    def __init__(self, path: Path = JUDGE_COSINES) -> None:
        super().__init__(path)
        self._judge: Any = None

    def column(self, item: Described, rank: Matrix) -> Matrix:
        """The judge's cosine of each of the best JUDGED_PAGES pages' leading candidate."""
        read = page_leaders(item.documents, rank)[:JUDGED_PAGES]
        cosines = self.kept(item.question, [f"{item.question_id} {item.passages[i][0]}"
                                            for i in read], [item.passages[i][1] for i in read],
                            self.compute)
        return judged(read, cosines, len(item.documents))

    def compute(self, question: str, texts: list[str]) -> list[float]:
        if self._judge is None:
            from docassist.models.embedders import get_embedder
            from docassist.storage.judge import Judge

            self._judge = Judge(get_embedder("e5"))
        return [round(cosine, 6) for cosine in self._judge.cosines(question, texts)]


class ReaderScores(KeptScores):
    """The reader's scores of training and tuning questions: those of SHIPPED_FOLD's
    training questions by the second reader (in `second`), the others by the shipped one."""

    verb = "read"

    def __init__(self, path: Path = READER_SCORES, second: Path | None = None) -> None:
        super().__init__(path)
        self.second = second
        self._second_reader: Any = None

    def read(self, item: Described, rank: Matrix) -> Read:
        """What the reader makes of the best JUDGED_PAGES pages (rerank.reading())."""
        passages = [as_read_passage(text) for _, text in item.passages]
        groups = reading(item.documents, rank, [p is not None for p in passages])
        # What the model reads of a Polish question or passage changes with the glossaries:
        # keyed by it.
        asked = hashlib.sha256(as_read(item.question).encode()).hexdigest()[:8]
        rows = [i for group in groups for i in group]
        texts = [p for i in rows if (p := passages[i]) is not None]
        keys = [f"{item.question_id} {asked} {item.passages[i][0]}"
                + ("" if text == item.passages[i][1] else
                   f" {hashlib.sha256(text.encode()).hexdigest()[:8]}")
                for i, text in zip(rows, texts, strict=True)]
        scores = self.kept(item.question, keys, texts, self.scorer(item.collection))
        return Read.of(item.documents, rank, groups, scores,
                       [glossed(item.question) or passages[i] != item.passages[i][1]
                        for i in rows])

    def scorer(self, collection: str) -> Scorer:
        """What reads `collection`'s questions: the second reader SHIPPED_FOLD's, the shipped
        one the others'. Looked up only when a score is missing, so a run with every score
        kept needs no second reader."""
        def compute(question: str, texts: list[str]) -> list[float]:
            from docassist.storage.reader import Reader, default_reader

            if collection not in SHIPPED_FOLD:
                return list(default_reader().scores(question, texts))
            if self.second is None:
                sys.exit(f"{collection}'s questions are read by the second reader, which is "
                         "not shipped: train it (scripts/train_reader.py train --second DIR) "
                         "and pass --second-reader DIR")
            if self._second_reader is None:  # one model load for the run, as default_reader()
                self._second_reader = Reader(self.second)
            return list(self._second_reader.scores(question, texts))
        return compute


def work_database(work: Path, name: str) -> Path:
    """The collection unpacked and indexed (default embedder) in `work`, once."""
    database = work / f"{name}.db"
    root = work / "corpora" / name
    if not root.exists():
        with tarfile.open(REPO / "samples" / "corpora" / f"{name}.tar.gz") as archive:
            archive.extractall(work / "corpora", filter="data")
    if not database.exists():
        print(f"indexing {name} into {database}", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "docassist", "index", str(root), "--json"],
                       env={**os.environ, "DOCASSIST_DB": str(database)}, check=True,
                       stdout=subprocess.DEVNULL)
    return database


def _ranker(store: Any) -> Any:
    from docassist.models.embedders import get_embedder
    from docassist.storage.dense import DenseRetriever
    from docassist.storage.judge import Judge
    from docassist.storage.ranker_model import Listwise, RankerModel
    from docassist.storage.reader import default_reader
    from docassist.storage.rerank import RankedRetriever
    from docassist.storage.search import Bm25Retriever

    unused = Listwise(np.zeros(1), np.ones(1), np.zeros(1), 0.0)
    return RankedRetriever(Bm25Retriever(store), DenseRetriever(store, get_embedder("use")),
                           Judge(get_embedder("e5")), default_reader(),
                           RankerModel(Forest.of([]), unused, 0.5))


def describe(work: Path, name: str, cases: list[dict[str, Any]]) -> list[Described]:
    """Every case's candidates and FEATURES, through the ranker's own code."""
    from docassist.storage import Store

    store = Store(work_database(work, name))
    root = (work / "corpora" / name).resolve()
    ids = {Path(d.source_path).resolve().relative_to(root).as_posix(): d.document_id
           for d in store.documents()}
    ranker = _ranker(store)
    found = []
    for case in cases:
        expected = {ids[path] for path in case["expected_paths"]}
        candidates, matrix = ranker.described(case["question"])
        labels = np.asarray([c.document.document_id in expected for c in candidates], np.int64)
        sections = {_heading(section) for section in case.get("expected_sections", [])}
        grades = labels + np.asarray([bool(label) and _heading(c.chunk.section) in sections
                                      for label, c in zip(labels, candidates, strict=True)],
                                     np.int64)
        found.append(Described(
            case["id"], name, bool(expected), matrix, labels,
            [c.document.document_id for c in candidates], grades, case["question"],
            [(c.chunk.chunk_id, judge_text(c.document.title, c.chunk.text)) for c in candidates]))
    store.close()
    return found


def save_descriptions(described: dict[str, list[Described]], path: Path) -> None:
    """Keep `described` in `path` (numpy's compressed archive, no pickles): the numbers as
    arrays, exactly; the questions, chunk and page ids and passages as JSON (a passage once
    per collection and chunk)."""
    items = [item for name in described for item in described[name]]
    numbers: dict[tuple[str, str], int] = {}
    passages: list[str] = []
    candidates = []
    for item in items:
        for (chunk_id, text), document in zip(item.passages, item.documents, strict=True):
            if (item.collection, chunk_id) not in numbers:
                numbers[(item.collection, chunk_id)] = len(passages)
                passages.append(text)
            candidates.append([chunk_id, document, numbers[(item.collection, chunk_id)]])
    kept = {"questions": [[item.question_id, item.collection, item.answerable, item.question]
                          for item in items],
            "candidates": candidates, "passages": passages}
    width = items[0].features.shape[1] if items else 0
    np.savez_compressed(
        path, features=np.vstack([item.features.reshape(-1, width) for item in items]),
        labels=np.concatenate([item.labels for item in items]).astype(np.int8),
        grades=np.concatenate([item.grades for item in items]).astype(np.int8),
        sizes=np.asarray([len(item.labels) for item in items], np.int32),
        kept=np.frombuffer(json.dumps(kept, ensure_ascii=False).encode(), np.uint8))


def load_descriptions(path: Path) -> dict[str, list[Described]]:
    """What save_descriptions kept, per collection in the order it was described."""
    with np.load(path, allow_pickle=False) as stored:
        arrays = {name: stored[name] for name in stored.files}
    kept = json.loads(arrays["kept"].tobytes().decode())
    described: dict[str, list[Described]] = {}
    start = 0
    for (question_id, name, answerable, question), size in zip(
            kept["questions"], arrays["sizes"].tolist(), strict=True):
        rows = slice(start, start + size)
        chosen = kept["candidates"][rows]
        described.setdefault(name, []).append(Described(
            question_id, name, answerable, arrays["features"][rows].astype(np.float64),
            arrays["labels"][rows].astype(np.int64), [document for _, document, _ in chosen],
            arrays["grades"][rows].astype(np.int64), question,
            [(chunk_id, kept["passages"][number]) for chunk_id, _, number in chosen]))
        start += size
    return described


def _heading(section: str) -> str:
    """A chunk's section label as cases name it (`Steps (2/3)` → `steps`)."""
    return section.rsplit(" (", 1)[0].strip().casefold() if section.endswith(")") \
        else section.strip().casefold()


def fit_ranking(described: list[Described]) -> Forest:
    """LambdaRank trees over each question's candidates, graded as pairs were before: the
    answering section over the page's other chunks over other pages. A question with no
    answering page teaches no order and is left out, as LightGBM would."""
    import lightgbm

    items = [item for item in described if item.grades.any()]
    data = lightgbm.Dataset(np.vstack([item.features for item in items]),
                            np.concatenate([item.grades for item in items]),
                            group=[len(item.grades) for item in items])
    booster = lightgbm.train(RANKING_TREES, data, num_boost_round=RANKING_ROUNDS)
    return Forest.of(trees(booster.dump_model()["tree_info"]))


def trees(dumped: list[dict[str, Any]]) -> list[dict[str, list[Any]]]:
    """LightGBM's dumped trees as the weights file keeps them: per tree, its nodes' split
    feature, threshold and children (a leaf as ~its index), and its leaves' values."""
    kept = []
    for tree in dumped:
        nodes: dict[int, dict[str, Any]] = {}
        leaves: dict[int, float] = {}
        _walk(tree["tree_structure"], nodes, leaves)
        order = range(len(nodes))
        kept.append({"split_feature": [nodes[i]["feature"] for i in order],
                     "threshold": [nodes[i]["threshold"] for i in order],
                     "left_child": [nodes[i]["left"] for i in order],
                     "right_child": [nodes[i]["right"] for i in order],
                     "leaf_value": [leaves[i] for i in range(len(leaves))]})
    return kept


def _walk(node: dict[str, Any], nodes: dict[int, dict[str, Any]],
          leaves: dict[int, float]) -> int:
    """Record `node` and what is below it; its reference (a leaf's is ~its index)."""
    if "split_index" not in node:  # a leaf (a tree of one leaf has no index: 0)
        leaves[int(node.get("leaf_index", 0))] = float(node["leaf_value"])
        return ~int(node.get("leaf_index", 0))
    if node["decision_type"] != "<=" or node["missing_type"] != "None":
        raise ValueError(f"a split the ranking model cannot read: {node}")
    nodes[int(node["split_index"])] = {
        "feature": int(node["split_feature"]), "threshold": float(node["threshold"]),
        "left": _walk(node["left_child"], nodes, leaves),
        "right": _walk(node["right_child"], nodes, leaves)}
    return int(node["split_index"])


Group = tuple[Matrix, int]
"""One question's judged pages (their ANSWER_FEATURES rows, best ranked first) and which of
them answers it (-1: none)."""


def judged_pages(items: list[Described], ranking: Forest, judge: JudgeCosines,
                 reader: ReaderScores) -> list[Group]:
    """Per question, the judged pages' ANSWER_FEATURES and the one that answers, if any."""
    from docassist.storage.ranker_model import ANSWER_FEATURES

    groups = []
    for item in items:
        if not len(item.labels):
            groups.append((np.zeros((0, len(ANSWER_FEATURES))), -1))
            continue
        rank = ranking.logits(item.features)
        column = judge.column(item, rank)
        rows = answer_features(item.documents, item.features, rank, column,
                               reader.read(item, rank))
        groups.append(group(item, rows, rank, column))
    return groups


def group(item: Described, rows: Matrix, order: Matrix, judged_column: Matrix) -> Group:
    """One question's Group: the rows of its judged pages' leaders (pages in `order`, those
    the judge read) and which of them answers."""
    judged_rows = [i for i in page_leaders(item.documents, order)
                   if not np.isnan(judged_column[i])]
    right = [n for n, i in enumerate(judged_rows) if item.labels[i]]
    return rows[judged_rows], right[0] if right else -1


def ranking_figures(items: list[Described], ranking: Forest) -> dict[str, float]:
    """Page-level MRR, top-1 and recall@5 of the answerable questions."""
    reciprocal, top, five = [], [], []
    for item in items:
        if not item.answerable:
            continue
        pages = (page_leaders(item.documents, ranking.logits(item.features))
                 if len(item.labels) else [])
        hits = [n for n, i in enumerate(pages[:10]) if item.labels[i]]
        reciprocal.append(1.0 / (hits[0] + 1) if hits else 0.0)
        top.append(float(bool(hits) and hits[0] == 0))
        five.append(float(bool(hits) and hits[0] < 5))
    return {"mrr": round(float(np.mean(reciprocal)), 4), "top1": round(float(np.mean(top)), 4),
            "recall_at_5": round(float(np.mean(five)), 4)}


def auc(scores: Matrix, labels: Matrix) -> float:
    positives, negatives = scores[labels == 1], scores[labels == 0]
    if not len(positives) or not len(negatives):
        return 0.0
    wins = (positives[:, None] > negatives[None, :]).sum()
    ties = (positives[:, None] == negatives[None, :]).sum()
    return round(float((wins + 0.5 * ties) / (len(positives) * len(negatives))), 4)


def fit_listwise(groups: list[Group], l2: float) -> Any:
    """The answer model: a conditional logit over each question's judged pages and a "none"
    option, fitted by Newton's method (exact, deterministic) with L2 on the page weights. The
    "none" option is a row of zeros with an indicator of its own, whose weight is its score."""
    from docassist.storage.ranker_model import Listwise

    stacked = np.nan_to_num(np.vstack([rows for rows, _ in groups if len(rows)]))
    means = stacked.mean(axis=0)
    scales = stacked.std(axis=0)
    scales[scales == 0.0] = 1.0
    width = stacked.shape[1] + 1
    options = [np.vstack([np.r_[np.zeros(width - 1), 1.0],
                          np.hstack([(np.nan_to_num(rows) - means) / scales,
                                     np.zeros((len(rows), 1))])]) for rows, _ in groups]
    chosen = [right + 1 for _, right in groups]  # 0: none answers
    theta = np.zeros(width)
    penalty = np.eye(width) * l2
    penalty[-1, -1] = 0.0
    for _ in range(100):
        gradient = penalty @ theta
        hessian = penalty.copy()
        for option, k in zip(options, chosen, strict=True):
            scores = option @ theta
            p = np.exp(scores - scores.max())
            p /= p.sum()
            gradient += option.T @ p - option[k]
            hessian += option.T @ (np.diag(p) - np.outer(p, p)) @ option
        step = np.linalg.solve(hessian, gradient)
        theta -= step
        if np.abs(step).max() < 1e-9:
            break
    return Listwise(means, scales, theta[:-1], float(theta[-1]))


def answered(groups: list[Group], model: Any) -> tuple[Matrix, Matrix]:
    """Per question, the most likely judged page's probability and whether it answers (a
    question without candidates: 0, wrong)."""
    scores, labels = [], []
    for rows, right in groups:
        probabilities = model.probabilities(rows)
        best = int(np.argmax(probabilities)) if len(rows) else -1
        scores.append(float(probabilities[best]) if len(rows) else 0.0)
        labels.append(float(best >= 0 and best == right))
    return np.asarray(scores), np.asarray(labels)


def describe_all(work: Path, names: tuple[str, ...] = TRAIN_SETS
                 ) -> dict[str, list[Described]]:
    """Each named training collection's questions described."""
    cases = [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines()]
    return {name: describe(work, name, [c for c in cases if c["set"] == name])
            for name in names}


def train(work: Path, out: Path | None = None, second: Path | None = None,
          descriptions: Path | None = None) -> None:
    """Fit both models and write them to `out` (the shipped weights file by default), from
    the collections described afresh (kept in DESCRIPTIONS, or beside a trial's `out`) or
    from kept `descriptions`."""
    from docassist.storage.ranker_features import FEATURES
    from docassist.storage.ranker_model import ANSWER_FEATURES, WEIGHTS_FILE

    trial = out.parent if out and out != WEIGHTS_FILE else None
    if descriptions is None:
        described = describe_all(work)
        descriptions = (trial or DESCRIPTIONS.parent) / DESCRIPTIONS.name
        save_descriptions(described, descriptions)
        print(f"kept the descriptions in {descriptions}", file=sys.stderr)
    else:
        described = load_descriptions(descriptions)
        if tuple(described) != TRAIN_SETS:
            sys.exit(f"{descriptions} describes {list(described)}, not {list(TRAIN_SETS)}")
    folds: dict[str, dict[str, float]] = {}
    answer_groups: dict[str, list[Group]] = {}
    judge, reader = JudgeCosines(), ReaderScores(second=second)
    for held in TRAIN_SETS:  # out-of-fold rankings also train the answer model
        ranking = fit_ranking([d for n in TRAIN_SETS if n != held for d in described[n]])
        folds[held] = ranking_figures(described[held], ranking)
        answer_groups[held] = judged_pages(described[held], ranking, judge, reader)
    for held in TRAIN_SETS:
        model = fit_listwise([g for n in TRAIN_SETS if n != held for g in answer_groups[n]],
                             ANSWERING_L2)
        folds[held]["auc_answers"] = auc(*answered(answer_groups[held], model))
        print(f"held out {held}: {folds[held]}", file=sys.stderr)
    judge.save(trial)
    reader.save(trial)
    ranking = fit_ranking([d for n in TRAIN_SETS for d in described[n]])
    model = fit_listwise([g for n in TRAIN_SETS for g in answer_groups[n]], ANSWERING_L2)
    out = out or WEIGHTS_FILE
    previous = json.loads(WEIGHTS_FILE.read_text()) if WEIGHTS_FILE.exists() else {}
    out.write_text(weights_text({
        "features": list(FEATURES), "answer_features": list(ANSWER_FEATURES),
        "ranking": {"trees": ranking.plain()},
        "answering": {"means": model.means.tolist(), "scales": model.scales.tolist(),
                      "weights": model.weights.tolist(), "none": model.none},
        "threshold": previous.get("threshold", 0.5),
        "trained": {"questions": str(QUESTIONS.relative_to(REPO)),
                    "questions_sha256": hashlib.sha256(QUESTIONS.read_bytes()).hexdigest(),
                    "descriptions_sha256": _described_sha256(described),
                    "collections": list(TRAIN_SETS), "ranking_trees": RANKING_TREES,
                    "ranking_rounds": RANKING_ROUNDS,
                    "answering_l2": ANSWERING_L2, "leave_one_collection_out": folds},
        "calibration": previous.get("calibration")}), encoding="utf-8")
    print(f"wrote {out}", file=sys.stderr)


def _described_sha256(described: dict[str, list[Described]]) -> str:
    """A digest of what the models were fitted on (not of the archive's bytes, which carry
    zip times): each candidate's features, grade, chunk and passage, question by question."""
    digest = hashlib.sha256()
    for name in described:
        for item in described[name]:
            digest.update(json.dumps([item.question_id, name, item.answerable, item.question,
                                      item.documents, item.passages]).encode())
            digest.update(np.ascontiguousarray(item.features, np.float64).tobytes())
            digest.update(item.labels.astype(np.int64).tobytes())
            digest.update(item.grades.astype(np.int64).tobytes())
    return digest.hexdigest()


def weights_text(data: dict[str, Any]) -> str:
    """The weights file: indented JSON with each tree on one line (200 trees at a number a
    line were ~9,000 lines, and a retrain's diff rewrote every one)."""
    marker = "trees written one a line"
    text = json.dumps({**data, "ranking": {**data["ranking"], "trees": marker}}, indent=1)
    rows = ",\n".join(f"   {json.dumps(tree)}" for tree in data["ranking"]["trees"])
    return text.replace(json.dumps(marker), f"[\n{rows}\n  ]") + "\n"


def calibrate(work: Path) -> None:
    """The threshold on the answered page's probability, chosen on the first held-out sets.
    The page counted is the most likely of the judged pages: the answering step answers
    whenever one passes (and, when several do, picks by retrieved score, which changed no
    figure on the sixth set)."""
    from docassist.storage.ranker_model import WEIGHTS_FILE, RankerModel

    model = RankerModel.load()
    held = [json.loads(line) for path in HELD_OUT
            for line in path.read_text(encoding="utf-8").splitlines()]
    judge, reader = JudgeCosines(), ReaderScores()
    tops: list[tuple[float, bool, bool]] = []  # probability, answerable, its page right
    for name in EVAL_SETS:
        for item in describe(work, name, [c for c in held if c["set"] == name]):
            if not len(item.labels):
                tops.append((0.0, item.answerable, False))
                continue
            rank = model.ranking.logits(item.features)
            probabilities = model.answer_probabilities(
                item.documents, item.features, rank, judge.column(item, rank),
                reader.read(item, rank))
            page = max(page_leaders(item.documents, rank), key=lambda i: probabilities[i])
            tops.append((float(probabilities[page]), item.answerable, bool(item.labels[page])))
    judge.save()
    reader.save()
    curve = [(threshold, *outcome(tops, threshold)) for threshold in THRESHOLDS]
    data = json.loads(WEIGHTS_FILE.read_text(encoding="utf-8"))
    current = float(data["threshold"])  # the shipped default (train keeps it)
    chosen = chosen_row(curve, current)
    data["threshold"] = float(chosen[0])
    data["calibration"] = {"sets": [str(path.relative_to(REPO)) for path in HELD_OUT],
                           "questions": len(tops),
                           "wrong_cost": WRONG_COST, "noise_points": NOISE_POINTS,
                           "threshold": float(chosen[0]), "right": chosen[1],
                           "wrong": chosen[2], "refused": chosen[3]}
    WEIGHTS_FILE.write_text(weights_text(data), encoding="utf-8")
    write_curve(curve, float(chosen[0]), current, len(tops),
                hashlib.sha256(WEIGHTS_FILE.read_bytes()).hexdigest())
    print(f"threshold {chosen[0]}: right {chosen[1]}, wrong {chosen[2]}, refused {chosen[3]} "
          f"(of {len(tops)} tuning questions)", file=sys.stderr)


def chosen_row(curve: list[tuple[float, int, int, int]], current: float | None = None
               ) -> tuple[float, int, int, int]:
    """Of (threshold, right, wrong, refused) rows, the one calibration picks. The curve is
    flat near its top, so any threshold within NOISE_POINTS of the best right − WRONG_COST ×
    wrong is as good as the questions can tell. Of those, the one nearest the `current`
    default (the default does not move without evidence: a new answer model with a flatter
    curve moved it from 0.575 to 0.45, where the spent sets 3–16 answered a quarter of their
    unanswerable questions, above issue 40's 0.20, and the mixed 961-page tree half), on a tie
    the lower (answering is the kinder default); without a current default, the lowest."""
    best = max(row[1] - WRONG_COST * row[2] for row in curve)
    band = [row for row in curve if row[1] - WRONG_COST * row[2] >= best - NOISE_POINTS]
    if current is None:
        return min(band)
    return min(band, key=lambda row: (round(abs(row[0] - current), 6), row[0]))


def outcome(tops: list[tuple[float, bool, bool]], threshold: float) -> tuple[int, int, int]:
    """Right answers, wrong answers (another page, or an unanswerable question answered)
    and refusals, answering when the answered page's probability reaches the threshold."""
    answered = [(answerable, right) for p, answerable, right in tops if p >= threshold]
    right = sum(1 for answerable, hit in answered if answerable and hit)
    return right, len(answered) - right, len(tops) - len(answered)


def write_curve(curve: list[tuple[float, int, int, int]], chosen: float, current: float,
                total: int, weights: str) -> None:
    from docassist.evaluation.pages import commit, write_block

    # The weights' digest names what was calibrated; the commit is the one before they land.
    lines = [f"Computed {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')} on commit "
             f"`{commit()}` by `scripts/train_ranker.py calibrate` for the weights file it "
             f"wrote (`src/docassist/storage/ranker_weights.json`, sha256 `{weights[:12]}…`), "
             f"over the {total} questions "
             "of the first two held-out sets (both collections, every split; the third set "
             "is not read). The chosen threshold is, of those whose right − "
             f"{WRONG_COST:g} × wrong is within {NOISE_POINTS:g} of the best, the one nearest "
             f"the default before ({current:g}; on a tie, the lower): **{chosen}**.", "",
             "| threshold | right | wrong | refused |", "|---|---|---|---|"]
    lines += [f"| {'**' if t == chosen else ''}{t:.3f}{'**' if t == chosen else ''} | {r} | "
              f"{w} | {n} |" for t, r, w, n in curve]
    write_block(REPO / "docs" / "ranker-threshold.md", "curve", "\n".join(lines),
                header="# The answer/refuse threshold\n\nHow many tuning questions (the first "
                "two held-out sets) are answered from the right page, answered wrongly (another "
                "page, or a question the documents cannot answer) or refused, as the "
                "threshold moves on the probability of the most likely of the judged pages "
                "(the answering step answers whenever one of them passes).\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["train", "describe", "calibrate"])
    parser.add_argument("--out", type=Path, default=None,
                        help="train: write the weights (and the descriptions and any newly "
                        "computed kept scores beside them) here instead of the shipped files; "
                        "describe: the descriptions file")
    parser.add_argument("--work", type=Path, default=REPO / ".ranker-work",
                        help="where collections are unpacked and indexed (kept between runs)")
    parser.add_argument("--descriptions", type=Path, default=None,
                        help="train: fit from these kept descriptions instead of describing "
                        f"the collections afresh (committed: {DESCRIPTIONS.relative_to(REPO)})")
    parser.add_argument("--collections", nargs="+", choices=TRAIN_SETS, default=list(TRAIN_SETS),
                        help="describe: which training collections (all by default)")
    parser.add_argument("--second-reader", type=Path, default=None,
                        help="train: the second reader's folder, for SHIPPED_FOLD's questions "
                        "the kept scores lack (scripts/train_reader.py train --second)")
    arguments = parser.parse_args()
    arguments.work.mkdir(parents=True, exist_ok=True)
    if arguments.command == "train":
        train(arguments.work, arguments.out, arguments.second_reader, arguments.descriptions)
    elif arguments.command == "describe":
        if arguments.out is None and tuple(arguments.collections) != TRAIN_SETS:
            parser.error("describing some collections needs --out: the kept descriptions "
                         "are of all of them")
        out = arguments.out or DESCRIPTIONS
        save_descriptions(describe_all(arguments.work, tuple(arguments.collections)), out)
        print(f"wrote {out}", file=sys.stderr)
    else:
        calibrate(arguments.work)


if __name__ == "__main__":
    main()
