"""How long the model-free selector takes for one message, on 2 cores (issue 41: p95 ≤ 10 ms).

    python bench/selector_latency.py [--messages 300] [--rounds 5] [--json]

One selection is what a turn spends in the selector: the learned selector reads the request
(embedding the message with USE — never from the query cache here: every message is
embedded afresh — the hashed and state features, the classifier) and its proposal is parsed
and normalized (`propose_action` + `normalize`). The whole plan of a turn is timed too
(`plan_turn`: the follow-up resolver, the state summary, the selection, the injection
guard). Messages: the first `--messages` of the bank with their histories and states; each
round times each message once, in order. Figures: p50 and p95 of each round, and their
median over the rounds. Written to `docs/benchmarks/selector-latency-<date>.md`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import numpy.typing as npt
from figures import print_figures

from docassist.core.learned import LearnedSelector
from docassist.core.planning import plan_turn
from docassist.core.selection import normalize, propose_action
from docassist.core.tools import default_registry
from docassist.evaluation.decisions import load_cases, state_for
from docassist.evaluation.pages import commit
from docassist.evaluation.selector_training import BankCatalog, bank_requests
from docassist.models.embedders import get_embedder

REPO = Path(__file__).resolve().parents[1]
BANK = REPO / "samples" / "bank" / "decisions_bank.jsonl"
CORES = 2
GOAL_P95_MS = 10.0


class Uncached:
    """USE with every query embedded afresh (the product keeps the last 256 questions)."""

    def __init__(self) -> None:
        self.inner = get_embedder("use")
        self.name, self.dimensions = self.inner.name, self.inner.dimensions

    def embed_queries(self, texts: list[str]) -> npt.NDArray[np.float32]:
        return self.inner.embed_passages(texts)

    def embed_passages(self, texts: list[str]) -> npt.NDArray[np.float32]:
        return self.inner.embed_passages(texts)


def percentiles(samples: list[float]) -> tuple[float, float]:
    p50, p95 = np.percentile(samples, [50, 95])
    return float(p50), float(p95)


def timed_rounds(messages: int, rounds: int) -> dict[str, list[tuple[float, float]]]:
    embedder = Uncached()
    selector = LearnedSelector(lambda: embedder)
    catalog = BankCatalog(REPO / "samples" / "docs")
    cases = load_cases(BANK.read_text(encoding="utf-8").splitlines())[:messages]
    requests = bank_requests(cases, catalog)
    specs = default_registry().specs()
    normalize(propose_action(requests[0], selector))  # loads the weights and USE: not timed
    figures: dict[str, list[tuple[float, float]]] = {"selection": [], "plan": []}
    for _ in range(rounds):
        selection, plan = [], []
        for case, request in zip(cases, requests, strict=True):
            started = time.perf_counter()
            normalize(propose_action(request, selector))
            selection.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            plan_turn(request.message, state_for(case), catalog=catalog, selector=selector,
                      tool_specs=specs, language=request.language)
            plan.append((time.perf_counter() - started) * 1000)
        figures["selection"].append(percentiles(selection))
        figures["plan"].append(percentiles(plan))
    return figures


def write_markdown(figures: dict[str, float], rounds: list[str], path: Path) -> None:
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    lines = [
        f"# Selector latency, {datetime.now(UTC):%Y-%m-%d}",
        "",
        f"`python bench/selector_latency.py` at commit {commit(REPO)}, pinned to {CORES} cores "
        f"(machine load average before the run: {load}). One selection = the learned selector "
        "on one bank message (USE embedding of the message, never cached; features; "
        "classifier) plus parsing and normalizing its proposal; one plan = a turn's whole "
        f"planning (resolver, state summary, selection, guard). Goal: p95 ≤ {GOAL_P95_MS:g} ms.",
        "",
        "| figure | ms (median over rounds) |",
        "|---|---|",
        *(f"| {key} | {value} |" for key, value in figures.items()),
        "",
        "Rounds (p50 / p95, ms):",
        "",
        *(f"- {line}" for line in rounds),
        "",
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    os.sched_setaffinity(0, set(range(min(CORES, os.cpu_count() or CORES))))
    timings = timed_rounds(args.messages, max(args.rounds, 5))
    figures = {f"{name}_ms_{which}": round(statistics.median(
        round_[index] for round_ in rounds), 2)
        for name, rounds in timings.items() for index, which in enumerate(("p50", "p95"))}
    figures["goal_met"] = float(figures["selection_ms_p95"] <= GOAL_P95_MS)
    rounds_text = [f"{name}: " + "; ".join(f"{p50:.2f} / {p95:.2f}" for p50, p95 in rounds)
                   for name, rounds in timings.items()]
    path = REPO / "docs" / "benchmarks" / f"selector-latency-{datetime.now(UTC):%Y-%m-%d}.md"
    write_markdown(figures, rounds_text, path)
    print_figures(figures, args.json)
    print(f"written to {path.relative_to(REPO)}", file=sys.stderr)


if __name__ == "__main__":
    main()
