"""The time budget of issue 40: index a tree of about 900 real pages and answer 80 questions
on this machine, with the default configuration (USE embeddings, the learned ranker, the
rules selector and the extractive answerer), through the `docassist` command itself.

    .venv/bin/python bench/handbooks.py [--work DIR] [--questions 80] [--json]

The tree is the six public collections shipped in samples/corpora (961 Markdown pages), each
in a folder of its own. The questions are the first N of the held-out set's *tune* split
(never its test split), their expected pages prefixed with their collection's folder, so
the run also says how the answers fare among five times as many distracting pages. Writes
docs/benchmarks/handbooks.md (one block, replaced each run) with the date and commit inside.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

from figures import print_figures

from docassist.evaluation.pages import commit, write_block

REPO = Path(__file__).resolve().parent.parent
COLLECTIONS = ("18f-handbook", "govuk-developer-docs", "gds-way", "moj-cloud-platform",
               "pagerduty-incident-response", "18f-guides")
HELD_OUT = REPO / "samples" / "public" / "handbooks" / "answers_heldout.jsonl"
PAGE = REPO / "docs" / "benchmarks" / "handbooks.md"
BUDGET_SECONDS = 20 * 60
HEADER = """# Time budget: a 900-page tree

Written by `bench/handbooks.py` (issue 40's budget: index about 900 pages and answer 80
questions within 20 minutes on 2 cores, with the default configuration).
"""


def tree(work: Path) -> Path:
    root = work / "tree"
    for name in COLLECTIONS:
        if not (root / name).exists():
            with tarfile.open(REPO / "samples" / "corpora" / f"{name}.tar.gz") as archive:
                archive.extractall(root, filter="data")
    return root


def questions(count: int, folder: Path) -> Path:
    cases = []
    for line in HELD_OUT.read_text(encoding="utf-8").splitlines():
        case = json.loads(line)
        if case["split"] != "tune":
            continue
        case["expected_paths"] = [f"{case['set']}/{path}" for path in case["expected_paths"]]
        cases.append(case)
    chosen = folder / "questions.jsonl"
    chosen.write_text("".join(json.dumps(case, ensure_ascii=False) + "\n"
                              for case in cases[:count]), encoding="utf-8")
    return chosen


def docassist(*args: str, db: Path) -> tuple[float, dict[str, Any]]:
    began = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "docassist", *args, "--json"], check=True,
                          capture_output=True, text=True,
                          env={**os.environ, "DOCASSIST_DB": str(db)})
    return time.perf_counter() - began, json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, default=REPO / ".bench-work" / "handbooks")
    parser.add_argument("--questions", type=int, default=80)
    parser.add_argument("--json", action="store_true")
    arguments = parser.parse_args()
    arguments.work.mkdir(parents=True, exist_ok=True)
    root = tree(arguments.work)
    pages = sum(1 for path in root.rglob("*.md"))
    with tempfile.TemporaryDirectory() as scratch:
        db = Path(scratch) / "bench.db"
        index_seconds, indexed = docassist("index", str(root), db=db)
        cases = questions(arguments.questions, Path(scratch))
        answer_seconds, report = docassist("eval", "answers", str(cases), "--root", str(root),
                                           db=db)
    total = index_seconds + answer_seconds
    figures = {
        "pages": pages, "documents": len(indexed["indexed"]),
        "chunks_embedded": indexed["embedded_chunks"],
        "index_seconds": round(index_seconds, 1), "questions": report["total"],
        "answer_seconds": round(answer_seconds, 1),
        "seconds_per_question": round(answer_seconds / max(report["total"], 1), 2),
        "total_seconds": round(total, 1), "budget_seconds": BUDGET_SECONDS,
        "within_budget": total <= BUDGET_SECONDS, "cores": os.cpu_count(),
        "right": report["right"], "wrong": report["wrong"],
        "refused_answerable": report["refused_answerable"],
        "unanswerable_answered": report["unanswerable_answered"]}
    write_block(PAGE, "run", "\n".join([
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on commit "
        f"`{commit()}`, {figures['cores']} cores.", "",
        "| figure | value |", "|---|---|",
        *[f"| {key.replace('_', ' ')} | {value} |" for key, value in figures.items()],
        "", "The answers' figures are over the *tune* questions inside the whole tree (five "
        "other collections as distractors); the held-out figures are in "
        "[Evaluation](../evaluation.md)."]), header=HEADER)
    print_figures(figures, arguments.json)


if __name__ == "__main__":
    main()
