"""Candidate answer features, tried on the spent held-out sets (none is shipped).

    .venv/bin/python scripts/answer_trials.py [--work DIR]

Each trial adds columns to the answer model's features (storage/ranker_model.py ANSWER_FEATURES),
refits the answer model on the five training collections exactly as `train_ranker.py train`
does (out-of-fold rankings, the same L2), chooses the threshold on held-out sets 1 + 2 by
`calibrate`'s rule, and prints right / wrong / refused, right − WRONG_COST × wrong and the
answer AUC of the top page on sets 1 + 2, set 3 and set 4. All four sets were scored once
and are tuning sets now; the fifth set is not read. docs/evaluation-method.md has the table.

The trials, each aimed at the wrong answers left (a page on the topic that lacks the one
fact asked):
- quantity: the question asks for an amount ("how many", "ile", "limit") and no number
  stands within QUANTITY_WINDOW words of one of its words in the top page's candidates;
- page words: the heaviest known question word the whole page lacks, and the share of the
  known words' weight it lacks (the shipped feature reads the leading chunk alone);
- page phrases: of the question's adjacent pairs of known words, the weighted share that
  stand within PHRASE_WINDOW words of each other somewhere on the page ("credit limit", not
  "credit" here and "limit" there).
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import train_ranker as tr

from docassist.core.text import fold, stem, terms
from docassist.storage.ranker_features import Question, _stems
from docassist.storage.ranker_model import Forest, answer_features, logistic, page_leaders

Matrix = tr.Matrix
QUANTITY_WINDOW = 12
PHRASE_WINDOW = 3
SETS = {"sets 1 + 2": tr.HELD_OUT,
        "set 3": (tr.HANDBOOKS / "answers_heldout3_18f.jsonl",
                  tr.HANDBOOKS / "answers_heldout3_govuk.jsonl"),
        "set 4": (tr.HANDBOOKS / "answers_heldout4_18f.jsonl",
                  tr.HANDBOOKS / "answers_heldout4_govuk.jsonl")}
_ASKS_WORDS = frozenset(
    "ile ilu limit limitu limity limits maksymalnie minimalnie maksymalny maksymalna maksymalne "
    "minimalny minimalna minimalne wersja wersji kwota stawka dlugo czesto max maximum minimum "
    "quota version percentage percent".split())
_ASKS_PHRASE = re.compile(r"\bhow (?:much|many|long|often|old|big|large|soon|far|fast|quickly)\b"
                          r"|\b(?:po|w) jakim czasie\b|\bjak szybko\b")
_NUMBER = re.compile(
    r"\d+(?:[.,:]\d+)*%?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
    r"fifteen|twenty|thirty|forty|fifty|sixty|ninety|hundred|thousand|million|once|twice|half|"
    r"daily|weekly|monthly|annually|yearly|hourly|quarterly")
_LIST_MARK = re.compile(r"^\s*\d+[.)]\s", re.M)
_WORD = re.compile(r"\d+(?:[.,:]\d+)*%?|[^\W_]+")

Pages = dict[str, list[list[str]]]
"""Per page, the stemmed words of each chunk (its section, then its text) and of its title."""
Trial = Callable[[tr.Described, int, Question, Pages], list[float]]


@dataclass(frozen=True)
class Linear:
    """A linear model over standardised features (the per-page answer model these trials fit)."""

    means: Matrix
    scales: Matrix
    weights: Matrix
    bias: float = 0.0

    def logits(self, rows: Matrix) -> Matrix:
        return np.asarray(((rows - self.means) / self.scales) @ self.weights + self.bias)


def fit_logistic(rows: Matrix, labels: Matrix, l2: float) -> Linear:
    """Standardised logistic regression with L2 (Newton's method: exact, deterministic)."""
    means = rows.mean(axis=0)
    scales = rows.std(axis=0)
    scales[scales == 0.0] = 1.0
    x = np.hstack([(rows - means) / scales, np.ones((len(rows), 1))])
    weights = np.zeros(x.shape[1])
    penalty = np.eye(x.shape[1]) * l2
    penalty[-1, -1] = 0.0
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-(x @ weights)))
        step = np.linalg.solve((x * (p * (1 - p))[:, None]).T @ x + penalty,
                               x.T @ (p - labels) + penalty @ weights)
        weights -= step
        if np.abs(step).max() < 1e-9:
            break
    return Linear(means, scales, weights[:-1], float(weights[-1]))


def asks_quantity(question: str) -> bool:
    folded = fold(question)
    return bool(_ASKS_PHRASE.search(folded)) or bool(_ASKS_WORDS & set(_WORD.findall(folded)))


def number_near(question: str, texts: list[str]) -> bool:
    wanted = {stem(word) for word in terms(question)} - {stem(word) for word in _ASKS_WORDS}
    for text in texts:
        words = _WORD.findall(_LIST_MARK.sub(" ", fold(text)))
        numbers = [i for i, word in enumerate(words) if _NUMBER.fullmatch(word)]
        asked = [i for i, word in enumerate(words)
                 if not word[0].isdigit() and stem(word) in wanted]
        if any(abs(i - j) <= QUANTITY_WINDOW for i in numbers for j in asked):
            return True
    return False


def quantity(item: tr.Described, top: int, question: Question, pages: Pages) -> list[float]:
    if not asks_quantity(item.question):
        return [0.0]
    texts = [item.passages[i][1] for i, page in enumerate(item.documents)
             if page == item.documents[top]]
    return [0.0 if number_near(item.question, texts) else 1.0]


def page_words(item: tr.Described, top: int, question: Question, pages: Pages) -> list[float]:
    found = {word for words in pages[item.documents[top]] for word in words}
    return list(question.missing(found))


def page_phrases(item: tr.Described, top: int, question: Question, pages: Pages) -> list[float]:
    known = list(dict.fromkeys(word for word in _stems(item.question)
                               if word in question.stems and word not in question.unknown))
    pairs = list(itertools.pairwise(known))
    if not pairs:
        return [1.0]
    found = set()
    for words in pages[item.documents[top]]:
        at: dict[str, list[int]] = {}
        for position, word in enumerate(words):
            at.setdefault(word, []).append(position)
        found |= {(a, b) for a, b in pairs if any(abs(i - j) <= PHRASE_WINDOW
                                                  for i in at.get(a, []) for j in at.get(b, []))}
    weight = {pair: question.stems[pair[0]] + question.stems[pair[1]] for pair in pairs}
    return [sum(weight[pair] for pair in found) / sum(weight.values())]


def every(item: tr.Described, top: int, question: Question, pages: Pages) -> list[float]:
    return [*quantity(item, top, question, pages), *page_words(item, top, question, pages),
            *page_phrases(item, top, question, pages)]


TRIALS: dict[str, Trial | None] = {"shipped": None, "quantity": quantity,
                                   "page words": page_words, "page phrases": page_phrases,
                                   "all three": every}


def collection(work: Path, name: str, cases: list[dict[str, object]]
               ) -> tuple[list[tr.Described], dict[str, Question], Pages]:
    """The cases described by the ranker's own code, their questions as its features weigh
    them, and the collection's pages as stemmed words."""
    from docassist.storage import Store
    from docassist.storage.search import Bm25Retriever

    described = tr.describe(work, name, cases)
    store = Store(tr.work_database(work, name))
    index = Bm25Retriever(store).index()
    pages: Pages = {}
    for chunk in store.current_chunks():
        pages.setdefault(chunk.document_id, []).append(
            [*_stems(chunk.section), "§", *_stems(chunk.text)])
    for document in store.documents():
        pages.setdefault(document.document_id, []).append(_stems(document.title))
    questions = {item.question_id: Question.of(item.question, index) for item in described}
    store.close()
    return described, questions, pages


def rows(items: list[tr.Described], ranking: Forest, judge: tr.JudgeCosines,
         reader: tr.ReaderScores, trial: Trial | None, questions: dict[str, Question],
         pages: dict[str, Pages]) -> list[tuple[np.ndarray | None, bool, bool]]:
    """Per question: the top page's answer features (None: no candidate), whether the
    question is answerable, and whether the top page answers it."""
    found: list[tuple[np.ndarray | None, bool, bool]] = []
    for item in items:
        if not len(item.labels):
            found.append((None, item.answerable, False))
            continue
        rank = ranking.logits(item.features)
        top = page_leaders(item.documents, rank)[0]
        base = answer_features(item.documents, item.features, rank, judge.column(item, rank),
                               reader.read(item, rank))[top]
        extra = trial(item, top, questions[item.question_id], pages[item.collection]) \
            if trial else []
        found.append((np.r_[base, extra], item.answerable, bool(item.labels[top])))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, default=tr.REPO / ".ranker-work")
    work = parser.parse_args().work
    work.mkdir(parents=True, exist_ok=True)
    training = [json.loads(line) for line in tr.QUESTIONS.read_text().splitlines()]
    questions: dict[str, Question] = {}
    pages: dict[str, Pages] = {}
    train: dict[str, list[tr.Described]] = {}
    for name in tr.TRAIN_SETS:
        train[name], asked, pages[name] = collection(
            work, name, [case for case in training if case["set"] == name])
        questions |= asked
    set_of = {json.loads(line)["id"]: key for key, paths in SETS.items() for path in paths
              for line in path.read_text().splitlines()}
    cases = [json.loads(line) for paths in SETS.values() for path in paths
             for line in path.read_text().splitlines()]
    held: dict[str, list[tr.Described]] = {key: [] for key in SETS}
    for name in tr.EVAL_SETS:  # each collection described once, over all the sets' cases
        described, asked, pages[name] = collection(
            work, name, [case for case in cases if case["set"] == name])
        for item in described:
            held[set_of[item.question_id]].append(item)
        questions |= asked
    judge, reader = tr.JudgeCosines(), tr.ReaderScores()
    folds = {name: tr.fit_ranking([d for other in tr.TRAIN_SETS if other != name
                                  for d in train[other]]) for name in tr.TRAIN_SETS}
    ranking = tr.fit_ranking([d for name in tr.TRAIN_SETS for d in train[name]])
    print("| features | threshold | " + " | ".join(
        f"{key}: right / wrong / refused, cost, AUC" for key in SETS) + " |")
    print("|---|---|" + "---|" * len(SETS))
    for label, trial in TRIALS.items():
        fitted = [(features, answered, right) for name in tr.TRAIN_SETS
                  for features, answered, right in rows(train[name], folds[name], judge, reader,
                                                        trial, questions, pages)
                  if features is not None]
        features = np.vstack([row[0] for row in fitted])
        # The per-page logistic answer model these trials were run with (before stop 63's
        # listwise model); a trial's extra columns join it.
        model = fit_logistic(np.nan_to_num(features),
                                np.asarray([float(right) for _, _, right in fitted]),
                                tr.ANSWERING_L2)
        tops = {}
        for key, items in held.items():
            tops[key] = [(0.0 if features is None else
                          float(logistic(model.logits(np.nan_to_num(features[None, :])))[0]),
                          answerable, right)
                         for features, answerable, right in rows(items, ranking, judge, reader,
                                                                 trial, questions, pages)]
        curve = [(t, *tr.outcome(tops["sets 1 + 2"], t)) for t in tr.THRESHOLDS]
        chosen = tr.chosen_row(curve)[0]
        cells = []
        for found in tops.values():
            right, wrong, refused = tr.outcome(found, chosen)
            scores = np.asarray([p for p, _, _ in found])
            labels = np.asarray([float(a and r) for _, a, r in found])
            cells.append(f"{right} / {wrong} / {refused}, {right - tr.WRONG_COST * wrong:g}, "
                         f"{tr.auc(scores, labels):.3f}")
        print(f"| {label} | {chosen:g} | " + " | ".join(cells) + " |", flush=True)
    judge.save()
    reader.save()
    print(f"({sys.argv[0]}: {len(held['sets 1 + 2'])}, {len(held['set 3'])} and "
          f"{len(held['set 4'])} questions)", file=sys.stderr)


if __name__ == "__main__":
    main()
