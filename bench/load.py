"""The Slack load benchmark: conversations × turns through `docassist slack --http`.

    python bench/load.py                       # 50 conversations × 10 turns (the full size)
    python bench/load.py -c 10 -t 3 --json     # the CI size

The bot runs as a real process on a fresh copy of the indexed demo corpus; signed events come
from this process over loopback, a stand-in model answers each request after
`--model-delay` seconds (selection, then a streamed answer), a fake Slack Web API records
the posts. Prints msgs/s, ack p50/p99 (what Slack waits for), answer latency (event sent →
answer complete in Slack) and whether every message was answered exactly once, in order,
with its state stored (`problems`). Figures, not assertions: the tests check correctness.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from figures import print_figures

from docassist.models.embedders import get_embedder
from docassist.storage import Store, index_paths
from docassist.storage.dense import embed_missing
from docassist_testkit.fakes.loopback import free_port
from docassist_testkit.fakes.model_server import ModelServer
from docassist_testkit.fakes.slack_api import FakeSlackApi
from docassist_testkit.slack_load import (
    EventSender,
    LoadRun,
    answer_problems,
    answers,
    model_env,
    model_responder,
    send_load,
    start_bot,
    store_problems,
)

REPO = Path(__file__).resolve().parents[1]

SECRET = "bench-signing-secret"
DRAIN_SECONDS = 600.0


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] if ordered else 0.0


def demo_database(folder: Path) -> Path:
    path = folder / "load.db"
    store = Store(path)
    index_paths(store, [REPO / "samples" / "docs"])
    embed_missing(store, get_embedder("use"))
    store.close()
    return path


def run_load(conversations: int, turns: int, model_delay: float,
             folder: Path) -> dict[str, Any]:
    db = demo_database(folder)
    expected = conversations * turns
    with FakeSlackApi() as api, ModelServer() as model:
        model.respond("/v1/chat/completions", model_responder(model_delay))
        port = free_port()
        bot = start_bot(db, api, port, SECRET, model_env(model.url))
        sender = EventSender(f"http://127.0.0.1:{port}/slack/events", SECRET)
        try:
            run = LoadRun(conversations, turns)
            started = time.monotonic()
            send_load(sender, run)
            all_acked = time.monotonic()
            deadline = all_acked + DRAIN_SECONDS
            while time.monotonic() < deadline and len(answers(api)) < expected:
                time.sleep(0.05)
            time.sleep(0.5)  # let the last inbox rows reach `done`
            delivered = answers(api)
            finished = max((a.at for a in delivered), default=time.monotonic())
        finally:
            sender.close()
            bot.terminate()
            bot.wait(10)
    first_sent = run.first_sent()
    latencies = [(a.at - first_sent[f"EvLoad-{c}-{t}"]) * 1000
                 for a in delivered for c, t in a.turns() if f"EvLoad-{c}-{t}" in first_sent]
    problems = answer_problems(delivered, conversations, turns) + store_problems(
        db, conversations, turns)
    acks = run.ack_ms()
    return {"conversations": conversations, "turns": turns, "messages": expected,
            "model_delay_s": model_delay, "acked": run.acked(), "answered": len(delivered),
            "wall_s": round(finished - started, 2), "send_s": round(all_acked - started, 2),
            "msgs_per_s": round(len(delivered) / (finished - started), 1),
            "ack_ms_p50": round(statistics.median(acks), 1) if acks else None,
            "ack_ms_p99": round(percentile(acks, 0.99), 1),
            "ack_ms_max": round(max(acks, default=0.0), 1),
            "answer_ms_p50": round(statistics.median(latencies), 1) if latencies else None,
            "answer_ms_p99": round(percentile(latencies, 0.99), 1),
            "problems": problems[:20], "problem_count": len(problems)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-c", "--conversations", type=int, default=50)
    parser.add_argument("-t", "--turns", type=int, default=10)
    parser.add_argument("--model-delay", type=float, default=0.2)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        figures = run_load(args.conversations, args.turns, args.model_delay, Path(name))
    print_figures(figures, args.json)


if __name__ == "__main__":
    main()
