"""How far a single p99 of 500 acks moves on its own: the floor against itself, beside the bot
against the floor (issue 25's "≤ 1.2 × the floor").

    python bench/ack_noise.py [--rounds 6] [--json]

Each round, for 10 and then 50 connections, sends bench/burst.py's burst to the floor (a bare
Bolt app), then to the durable floor (the same app storing each event before its ack), then
to the bot (turns running on the stand-in model), then to the bot with its turn processes
stopped during the burst, then to the floor again. Reported per round: the five p99s, the
floor's second p99 over its first (what the ratio is when nothing differs but the moment),
the bot's over each floor, the durable floor's over the floor (what storing before the ack
costs by itself), the bot's over the durable floor, and the paused bot's over the durable
floor and the floor (what the bot's ack path costs with no turns beside it); then, per
connection count, the medians and how many rounds were within 1.2×. Figures, not tests.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from bolt_floor import DEFAULT_SERVER
from burst import CONNECTIONS, bot_burst, floor_burst, p99
from figures import print_figures
from load import demo_database

WITHIN: float = 1.2


RATIOS = ("floor_after_vs_before", "bot_vs_floor_before", "bot_vs_floor_after",
          "durable_vs_floor_before", "bot_vs_durable", "paused_vs_durable",
          "paused_vs_floor_before")


def one_round(demo: Path, folder: Path, connections: int) -> dict[str, float]:
    first = p99(floor_burst(folder, connections, DEFAULT_SERVER))
    durable = p99(floor_burst(folder, connections, DEFAULT_SERVER, durable=True))
    acks, _capacity = bot_burst(demo, folder, connections, 10.0)
    bot = p99(acks)
    paused, _capacity = bot_burst(demo, folder, connections, 10.0, paused=True)
    bot_paused = p99(paused)
    second = p99(floor_burst(folder, connections, DEFAULT_SERVER))
    return {"floor_before": first, "durable_floor": durable, "bot": bot,
            "bot_turns_paused": bot_paused, "floor_after": second,
            "floor_after_vs_before": round(second / first, 2),
            "bot_vs_floor_before": round(bot / first, 2),
            "bot_vs_floor_after": round(bot / second, 2),
            "durable_vs_floor_before": round(durable / first, 2),
            "bot_vs_durable": round(bot / durable, 2),
            "paused_vs_durable": round(bot_paused / durable, 2),
            "paused_vs_floor_before": round(bot_paused / first, 2)}


def summary(rows: list[dict[str, float]]) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    for key in RATIOS:
        values = [row[key] for row in rows]
        figures[key] = {"median": round(statistics.median(values), 2),
                        "min": min(values), "max": max(values),
                        f"within_{WITHIN}": sum(1 for value in values if value <= WITHIN)}
    return figures


def measure(rounds: int) -> dict[str, Any]:
    rows: dict[int, list[dict[str, float]]] = {connections: [] for connections in CONNECTIONS}
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        demo = demo_database(folder)
        for index in range(rounds):
            for connections in CONNECTIONS:
                run = folder / f"round-{index}-{connections}"
                run.mkdir()
                rows[connections].append(one_round(demo, run, connections))
                print(json.dumps({"round": index, "connections": connections,
                                  **rows[connections][-1]}), file=sys.stderr, flush=True)
    return {"rounds": rounds,
            **{str(connections): {"summary": summary(found), "rounds": found}
               for connections, found in rows.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures = measure(args.rounds)
    print_figures(figures if args.json else {
        f"{connections} connections": figures[str(connections)]["summary"]
        for connections in CONNECTIONS}, args.json)


if __name__ == "__main__":
    main()
