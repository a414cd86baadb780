"""What the reader reads and which pages it reads, tried on the spent held-out sets 1–8.

    .venv/bin/python scripts/reading_trials.py --work DIR [--reader-input section]
    .venv/bin/python scripts/reading_trials.py --work DIR --judge-weight 120 [--shortlist 8]
    .venv/bin/python scripts/reading_trials.py --work DIR --sweep [--shortlist 8]

The answer model is refitted on the training collections exactly as `train_ranker.py train`
fits it (out-of-fold rankings), the threshold is chosen on sets 1 + 2 by `calibrate`'s rule,
and each set is counted as the product answers: of the judged pages, the one most likely to
answer. It prints right / answerable, wrong / answered, unanswerable answered and
right − WRONG_COST × wrong per set and language, the answer AUC per set, the cost summed over
sets 3–6 and over sets 7–8, and the best cost over sets 3–8 at any one threshold (an oracle:
it says whether any threshold would have gained). Sets 9, 10 and 11 are never read
(sets 9 and 10 were scored once after these trials; set 11 waits).

Trials (docs/evaluation-method.md, "Trials of the eighth set's stop"):
- `--reader-input`: what the reader reads of a chunk. The product hands it the page title,
  the chunk's metadata line (`path | version=… | section`) and the text; it was fine-tuned on
  title and text. `section` keeps the section heading and drops the path and version;
  `none` drops the whole line.
- `--judge-weight W`: the best SHORTLIST pages reordered by the ranking logit plus W times
  the judge's (e5) cosine of the page's leading passage; the judge and the reader then read
  the first JUDGED_PAGES of that order. `--features-from order` also gives the answer model
  that score in place of the ranking logit.

Scores not in the committed caches (samples/train/) are computed and kept in DIR, so a run
never edits the repository. The described questions are kept in DIR/spent-described.pkl.
"""

from __future__ import annotations

import argparse
import json
import pickle
import re
from pathlib import Path
from typing import Any

import numpy as np
import train_ranker as tr

from docassist.storage.judge import JUDGED_PAGES
from docassist.storage.ranker_model import RankerModel, answer_features, page_leaders

SPENT = {"sets 1 + 2": tr.HELD_OUT,
         **{f"set {n}": tuple(sorted(tr.HANDBOOKS.glob(f"answers_heldout{n}_*.jsonl")))
            for n in range(3, 9)}}
TUNED_ON = "sets 1 + 2"
SUMMED = {"sets 3-6": ("set 3", "set 4", "set 5", "set 6"), "sets 7-8": ("set 7", "set 8")}
METADATA_LINE = re.compile(r"^[^\n|]+ \| version=[0-9a-f]+ \| (?P<section>[^\n]*)$")
SWEPT_WEIGHTS = (0, 20, 40, 80, 120, 160, 200, 300, 1000)
PART = re.compile(r"\s*\(\d+/\d+\)$")
Row = tuple[str, str, float, bool, bool, float]
"""Question id, language, answer probability of the page answered from, answerable, right,
and the reciprocal rank of the first expected page in the trial's order."""


def described(work: Path) -> tuple[dict[str, list[tr.Described]], dict[str, list[tr.Described]]]:
    """The training collections' and the spent sets' questions, described once."""
    kept = work / "spent-described.pkl"
    if kept.exists():
        return pickle.loads(kept.read_bytes())  # type: ignore[no-any-return]
    training = [json.loads(line) for line in tr.QUESTIONS.read_text().splitlines()]
    train = {name: tr.describe(work, name, [c for c in training if c["set"] == name])
             for name in tr.TRAIN_SETS}
    held: dict[str, list[tr.Described]] = {}
    for spent, files in SPENT.items():
        cases = [json.loads(line) for path in files for line in path.read_text().splitlines()]
        for name in sorted({case["set"] for case in cases}):
            held.setdefault(spent, []).extend(
                tr.describe(work, name, [c for c in cases if c["set"] == name]))
    kept.write_bytes(pickle.dumps((train, held)))
    return train, held


def as_read(text: str, reader_input: str) -> str:
    """A judged passage (title, metadata line, text) as the trial's reader reads it."""
    title, _, rest = text.partition("\n")
    first, _, body = rest.partition("\n")
    line = METADATA_LINE.match(first)
    if line is None or reader_input == "keep":
        return text
    section = PART.sub("", line["section"]).strip()
    if reader_input == "none" or not section or section == title or "<%" in section:
        return f"{title}\n{body}"
    return f"{title}\n{section}\n{body}"


class TrialReader(tr.ReaderScores):
    def __init__(self, work: Path, reader_input: str) -> None:
        own = work / f"reader_scores-{reader_input}.json"
        super().__init__(own if own.exists() or reader_input != "keep" else tr.READER_SCORES)
        self.path, self.reader_input = own, reader_input

    def scorer(self, collection: str) -> tr.Scorer:
        read = super().scorer(collection)
        return lambda question, texts: read(
            question, [as_read(text, self.reader_input) for text in texts])


class TrialJudge(tr.JudgeCosines):
    def __init__(self, work: Path) -> None:
        own = work / "judge_cosines.json"
        super().__init__(own if own.exists() else tr.JUDGE_COSINES)
        self.path = own


def ordered(item: tr.Described, rank: Any, judge: TrialJudge, weight: float,
            shortlist: int) -> Any:
    """The logit plus `weight` × the judge's cosine of the page's leading passage, for the
    best `shortlist` pages; the pages below keep their order, after them."""
    if weight == 0:
        return rank
    leaders = page_leaders(item.documents, rank)[:shortlist]
    cosines = judge.kept(item.question, [f"{item.question_id} {item.passages[i][0]}"
                                         for i in leaders],
                         [item.passages[i][1] for i in leaders], judge.compute)
    bonus = {item.documents[i]: cosine for i, cosine in zip(leaders, cosines, strict=True)}
    floor = min(cosines)
    return np.asarray([rank[i] + weight * bonus.get(document, floor)
                       for i, document in enumerate(item.documents)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--reader-input", choices=("keep", "section", "none"), default="keep")
    parser.add_argument("--judge-weight", type=float, default=0.0)
    parser.add_argument("--shortlist", type=int, default=8)
    parser.add_argument("--features-from", choices=("rank", "order"), default="rank")
    parser.add_argument("--sweep", action="store_true",
                        help="print the training collections' page MRR per judge weight")
    args = parser.parse_args()
    assert args.shortlist >= JUDGED_PAGES
    train, held = described(args.work)
    reader, judge = TrialReader(args.work, args.reader_input), TrialJudge(args.work)
    folds = {name: tr.fit_ranking([d for other in tr.TRAIN_SETS if other != name
                                   for d in train[other]]) for name in tr.TRAIN_SETS}
    if args.sweep:
        sweep(train, folds, judge, args.shortlist)
        judge.save()
        return
    ranking = tr.fit_ranking([d for name in tr.TRAIN_SETS for d in train[name]])

    def inputs(item: tr.Described, model: Any) -> tuple[Any, Any, Any, Any]:
        rank = model.logits(item.features)
        order = ordered(item, rank, judge, args.judge_weight, args.shortlist)
        scored = order if args.features_from == "order" else rank
        return order, scored, judge.column(item, order), reader.read(item, order)

    groups: list[tr.Group] = []
    for name in tr.TRAIN_SETS:
        for item in (item for item in train[name] if len(item.labels)):
            order, scored, cosines, read = inputs(item, folds[name])
            rows = answer_features(item.documents, item.features, scored, cosines, read)
            groups.append(tr.group(item, rows, order, cosines))
    model = RankerModel(ranking, tr.fit_listwise(groups, tr.ANSWERING_L2), 0.5)
    languages = {case["id"]: case.get("lang", "en") for files in SPENT.values()
                 for path in files for case in map(json.loads, path.read_text().splitlines())}

    def answered(item: tr.Described) -> Row:
        language = languages[item.question_id]
        if not len(item.labels):
            return item.question_id, language, 0.0, item.answerable, False, 0.0
        order, scored, cosines, read = inputs(item, ranking)
        probabilities = model.answer_probabilities(item.documents, item.features, scored,
                                                   cosines, read)
        leaders = page_leaders(item.documents, order)
        page = max(leaders, key=lambda i: probabilities[i])
        reciprocal = next((1.0 / place for place, i in enumerate(leaders, 1)
                           if item.labels[i]), 0.0)
        return (item.question_id, language, float(probabilities[page]), item.answerable,
                bool(item.labels[page]), reciprocal)

    found = {spent: [answered(item) for item in items] for spent, items in held.items()}
    reader.save()
    judge.save()
    report(found, args)


def sweep(train: dict[str, list[tr.Described]], folds: dict[str, Any], judge: TrialJudge,
          shortlist: int) -> None:
    """Page MRR of the training collections' answerable questions (out-of-fold rankings),
    per language, as the judge's weight grows (how the trial's weight, 120, was chosen)."""
    from docassist.storage.reader import glossed

    print(f"| judge weight ({shortlist} pages) | English MRR | Polish MRR |")
    print("|---|---|---|")
    for weight in SWEPT_WEIGHTS:
        found: dict[bool, list[float]] = {False: [], True: []}
        for name in tr.TRAIN_SETS:
            for item in (item for item in train[name] if len(item.labels) and item.answerable):
                order = ordered(item, folds[name].logits(item.features), judge, weight,
                                shortlist)
                leaders = page_leaders(item.documents, order)
                found[glossed(item.question)].append(next(
                    (1.0 / place for place, i in enumerate(leaders, 1) if item.labels[i]), 0.0))
        print(f"| {weight:g} | {np.mean(found[False]):.3f} | {np.mean(found[True]):.3f} |")


def tops(rows: list[Row]) -> list[tuple[float, bool, bool]]:
    """The rows as `train_ranker.outcome` counts them."""
    return [(row[2], row[3], row[4]) for row in rows]


def counts(rows: list[Row], threshold: float) -> tuple[int, int, int]:
    """Right, wrong and unanswerable answered at `threshold`."""
    right, wrong, _ = tr.outcome(tops(rows), threshold)
    return right, wrong, sum(1 for row in rows if row[2] >= threshold and not row[3])


def cost(rows: list[Row], threshold: float) -> float:
    right, wrong, _ = tr.outcome(tops(rows), threshold)
    return right - tr.WRONG_COST * wrong


def report(found: dict[str, list[Row]], args: argparse.Namespace) -> None:
    tuned = tops(found[TUNED_ON])
    threshold = tr.chosen_row([(t, *tr.outcome(tuned, t)) for t in tr.THRESHOLDS])[0]
    print(f"reader input {args.reader_input}, judge weight {args.judge_weight:g} over "
          f"{args.shortlist} pages, answer features from {args.features_from}: "
          f"threshold {threshold}")
    print("| set | language | right | wrong | unanswerable answered | cost | page MRR |")
    print("|---|---|---|---|---|---|---|")
    for spent, rows in found.items():
        for language in ("en", "pl", "all"):
            chosen = [row for row in rows if language in ("all", row[1])]
            right, wrong, unanswerable = counts(chosen, threshold)
            ranks = [row[5] for row in chosen if row[3]]
            print(f"| {spent} | {language} | {right}/{len(ranks)} | {wrong}/{right + wrong} | "
                  f"{unanswerable}/{len(chosen) - len(ranks)} | "
                  f"{right - tr.WRONG_COST * wrong:g} | {np.mean(ranks):.3f} |")
        separation = tr.auc(np.asarray([row[2] for row in rows]),
                            np.asarray([row[3] and row[4] for row in rows]))
        print(f"| {spent} | answer AUC {separation:.3f} | | | | | |")
    for label, summed in SUMMED.items():
        print(f"cost over {label}: {sum(cost(found[s], threshold) for s in summed):g}")
    later = [row for spent in (*SUMMED["sets 3-6"], *SUMMED["sets 7-8"]) for row in found[spent]]
    oracle = max((cost(later, t), t) for t in tr.THRESHOLDS)
    print(f"best cost over sets 3-8 at any one threshold: {oracle[0]:g} (at {oracle[1]})")


if __name__ == "__main__":
    main()
