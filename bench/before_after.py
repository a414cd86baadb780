"""Acks and model capacity of two checkouts, interleaved on one machine in one session: each
round runs `bench/burst.py --json` in the BEFORE checkout, then in the AFTER one, each with
its own venv. Writes a dated page of medians (and every round) into docs/benchmarks/.

    python bench/before_after.py BEFORE AFTER [--rounds 5] [--name house]
        [--labels before,after] [--before-env KEY=VALUE …] [--after-env KEY=VALUE …]

BEFORE and AFTER are checkouts with a `.venv` (scripts/test makes one); they may be the same
checkout run with different settings (`--after-env DOCASSIST_TURN_PROCESSES=0`: where turns
run, compared on one commit). The goals beside
the figures are issue 25's and #43's: a burst's ack p99 within 1.2x the durable floor's at
10 and 50 connections, and a model capacity ratio no lower than before. Figures, not tests.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from docassist.evaluation.pages import commit

REPO: Final = Path(__file__).resolve().parents[1]
WITHIN: Final = 1.2
FIGURES: Final = ("ack_burst_ms_p99", "ack_durable_floor_ms_p99", "ack_floor_ms_p99",
                  "ack_burst50_ms_p99", "ack_durable_floor50_ms_p99", "ack_floor50_ms_p99",
                  "model_capacity_ratio", "model_capacity_cpu_busy")


def burst(checkout: Path, env: dict[str, str] | None = None) -> dict[str, Any]:
    load = os.getloadavg()[0]  # what else the machine was doing as the round began
    done = subprocess.run([str(checkout / ".venv" / "bin" / "python"), "bench/burst.py",
                           "--json"], cwd=checkout, capture_output=True, text=True,
                          timeout=900, check=True, env={**os.environ, **(env or {})})
    figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    figures["load_1m"] = round(load, 2)
    for connections in ("", "50"):
        figures[f"bot_vs_durable{connections}"] = round(
            figures[f"ack_burst{connections}_ms_p99"]
            / figures[f"ack_durable_floor{connections}_ms_p99"], 2)
    return figures


def median(rounds: list[dict[str, Any]], key: str) -> float:
    return round(statistics.median(float(r[key]) for r in rounds), 3)


def page(name: str, sides: dict[str, tuple[str, list[dict[str, Any]]]],
         envs: dict[str, dict[str, str]] | None = None) -> str:
    keys = [*FIGURES, "bot_vs_durable", "bot_vs_durable50", "load_1m"]
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [f"# {name}: acks and model capacity, {' and '.join(sides)}", "",
             f"Written by `bench/before_after.py` on {when}: `bench/burst.py` run in each "
             "checkout in turn, on one machine in one session; medians over "
             f"{len(next(iter(sides.values()))[1])} rounds (p99s in ms). Goal: the burst's "
             f"ack p99 within {WITHIN}x the durable floor's (`bot_vs_durable`, 10 and 50 "
             "connections), and a model capacity ratio no lower than before. The machine has "
             f"{os.cpu_count()} cores; `load_1m` is its 1-minute load average as each round "
             "began (the previous round's own processes count in it: compare the sides, and "
             "read a high figure on both as other work sharing the cores).", "",
             *[f"Side `{side}` ran with {', '.join(f'`{k}={v}`' for k, v in env.items())}."
               for side, env in (envs or {}).items() if env],
             *([""] if envs and any(envs.values()) else []),
             "| figure | " + " | ".join(f"{side} (`{sha}`)" for side, (sha, _) in
                                        sides.items()) + " |",
             "|---|" + "---|" * len(sides)]
    lines += [f"| `{key}` | " + " | ".join(str(median(rounds, key)) for _, rounds in
                                            sides.values()) + " |" for key in keys]
    for connections in ("", "50"):
        within = ", ".join(
            f"{side} {sum(r[f'bot_vs_durable{connections}'] <= WITHIN for r in rounds)} of "
            f"{len(rounds)}" for side, (_, rounds) in sides.items())
        lines += ["", f"Rounds within {WITHIN}x the durable floor at {connections or '10'} "
                  f"connections: {within}."]
    lines += ["", "Every round, in the order run:", "", "```json"]
    for side, (_, rounds) in sides.items():
        lines += [json.dumps({"side": side, "round": number, **{k: r[k] for k in keys}})
                  for number, r in enumerate(rounds, 1)]
    return "\n".join([*lines, "```", ""])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--name", default="before-after")
    parser.add_argument("--labels", default="before,after",
                        help="the two sides' names, comma-separated")
    parser.add_argument("--before-env", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--after-env", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args()
    first, second = args.labels.split(",", 1)
    checkouts = {first: args.before.resolve(), second: args.after.resolve()}
    envs = {first: dict(item.split("=", 1) for item in args.before_env),
            second: dict(item.split("=", 1) for item in args.after_env)}
    rounds: dict[str, list[dict[str, Any]]] = {side: [] for side in checkouts}
    for number in range(args.rounds):
        for side, checkout in checkouts.items():
            rounds[side].append(burst(checkout, envs[side]))
            print(f"round {number + 1} {side}: {rounds[side][-1]['bot_vs_durable']} / "
                  f"{rounds[side][-1]['bot_vs_durable50']} x durable, capacity "
                  f"{rounds[side][-1]['model_capacity_ratio']}", flush=True)
    sides = {side: (commit(checkout), rounds[side]) for side, checkout in checkouts.items()}
    out = REPO / "docs" / "benchmarks" / (
        f"{args.name}-{datetime.now(UTC).strftime('%Y-%m-%d')}.md")
    out.write_text(page(args.name, sides, envs), encoding="utf-8")
    print(out)


if __name__ == "__main__":
    main()
