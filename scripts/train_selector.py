"""Train the learned selector on the labelled bank and write what ships with it.

    python scripts/train_selector.py

Reads `samples/bank/decisions_bank.jsonl` (and the demo documents, whose services the
follow-up resolver knows), cross-validates on the bank, trains on all of it, and writes:
    src/docassist/core/selector_weights.npz (+ .sha256)   the classifier
    src/docassist/core/selector_examples.jsonl (+ vectors) a model selector's worked examples
    docs/selector-training.md                             the cross-validation figures
Deterministic: the same bank gives the same weights (fixed seed, full-batch training, one
OpenBLAS kernel: the script runs itself again with OPENBLAS_CORETYPE set if it is not).
"""

from __future__ import annotations

import os
import sys
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from docassist.core.examples import EXAMPLES_PATH
from docassist.core.learned import WEIGHTS_PATH
from docassist.evaluation.decisions import load_cases
from docassist.evaluation.pages import commit
from docassist.evaluation.selector_training import (
    OPENBLAS_KERNEL,
    Trained,
    one_by_one,
    save_weights,
    train,
    write_examples,
)
from docassist.models.embedders import get_embedder

REPO = Path(__file__).resolve().parents[1]
BANK = REPO / "samples" / "bank" / "decisions_bank.jsonl"
DOCS = REPO / "samples" / "docs"
REPORT = REPO / "docs" / "selector-training.md"


def markdown(trained: Trained, size: int) -> str:
    report, errors = trained.report, trained.report.errors
    made_at = commit(REPO, own=(WEIGHTS_PATH.with_suffix(""), EXAMPLES_PATH.with_suffix(""),
                                REPORT))
    lines = [
        "# The learned selector: cross-validation on the bank",
        "",
        f"Written by `scripts/train_selector.py` on {datetime.now(UTC):%Y-%m-%d} at commit "
        f"{made_at}. Bank: `samples/bank/decisions_bank.jsonl` ({report.total} cases), 5 "
        "folds stratified by kind; each fold decided by the selector's own code (exact rules, "
        "classifier, kind -> decision, normalization, injection guard) and scored like "
        "`docassist eval decisions`. The temperature and the ask-back threshold were chosen "
        "on the same folds, so these figures are slightly optimistic. Not a held-out figure.",
        "",
        f"- decision accuracy **{report.accuracy:.1%}** ({report.correct}/{report.total}), "
        f"macro-F1 over decisions {report.macro_f1:.3f}",
        f"- kind accuracy (15 kinds, argmax) {trained.kind_accuracy:.1%}",
        f"- leave one writer out (trained on the other helpers, scored on one helper's messages): "
        f"decision accuracy {trained.writer_report.accuracy:.1%}, macro-F1 "
        f"{trained.writer_report.macro_f1:.3f}, tool-hallucination rate "
        f"{trained.writer_report.errors.tool_hallucination_rate:.1%}; per writer "
        + ", ".join(f"{writer} {share:.1%}" for writer, share in writers(trained).items()),
        f"- tool-hallucination rate {errors.tool_hallucination_rate:.1%} "
        f"({errors.tool_hallucinations} tools where none fits); missed clarifications "
        f"{errors.missed_clarifications}, unnecessary clarifications "
        f"{errors.unnecessary_clarifications}, wrong refusals {errors.wrong_refusals}",
        f"- temperature {trained.temperature}, ask back below {trained.min_confidence:.3f}; "
        f"weights {size / 1e6:.1f} MB",
        "",
        "| decision | expected | made | precision | recall | F1 |",
        "|---|---|---|---|---|---|",
        *(f"| {label} | {s.total} | {s.predicted} | {s.precision:.3f} | {s.recall:.3f} | "
          f"{s.f1:.3f} |" for label, s in report.by_decision.items()),
        "",
        "| kind | cases | accuracy | its decision's F1 |",
        "|---|---|---|---|",
        *(f"| {kind} | {s.total} | {s.accuracy:.1%} | {s.f1 if s.f1 is not None else '—'} |"
          for kind, s in report.by_kind.items()),
        "",
    ]
    return "\n".join(lines)


def writers(trained: Trained) -> dict[str, float]:
    """Decision accuracy on each helper's messages, trained on the others."""
    cases: dict[str, list[bool]] = {}
    for case in trained.writer_report.cases:
        cases.setdefault(case.id.split("-", 1)[0], []).append(case.ok)
    return {writer: sum(oks) / len(oks) for writer, oks in sorted(cases.items())}


def main() -> None:
    if os.environ.get("OPENBLAS_CORETYPE") != OPENBLAS_KERNEL:  # read when numpy loads
        os.execve(sys.executable, [sys.executable, *sys.argv],
                  {**os.environ, "OPENBLAS_CORETYPE": OPENBLAS_KERNEL})
    embedder = get_embedder("use")
    trained = train(BANK, DOCS, one_by_one(embedder))
    weights = save_weights(trained, WEIGHTS_PATH)
    write_examples(load_cases(BANK.read_text(encoding="utf-8").splitlines()), EXAMPLES_PATH,
                   embedder)
    REPORT.write_text(markdown(trained, len(trained.weights)), encoding="utf-8")
    print(REPORT.read_text(encoding="utf-8"))
    print(f"weights {WEIGHTS_PATH.name} sha256 {weights.digest} "
          f"({np.asarray(weights.sparse).nbytes + np.asarray(weights.dense).nbytes} bytes)",
          file=sys.stderr)


if __name__ == "__main__":
    main()
