"""Scaling out: the Slack load over 1, 2 and 3 `docassist slack --http` replicas.

    python bench/replicas.py                  # 50 conversations × 10 turns per configuration
    python bench/replicas.py --quick --json   # 10 × 3, one JSON document on stdout
    python bench/replicas.py --retrieval-only --json   # only retrieval at 100k chunks

Each configuration starts its replicas on a fresh copy of the indexed demo corpus (SQLite
file, or a PostgreSQL database in a throwaway cluster started here with fsync on, as a
production server runs), each with a fixed per-replica concurrency
(DOCASSIST_INBOX_WORKERS=4), a stand-in model of 200 ms latency and capacity 64, and
spreads signed events over the replicas as a load balancer would. Prints answered messages
per second, ack p99, the machine's CPU busy share (/proc/stat) during the run, and whether
every message was answered exactly once, in order, with its state stored. On one machine
this measures what coordination costs, not hardware scaling: every replica shares the same
two cores (and, here, other people's work). Then hybrid retrieval p50/p95 at 100k chunks on
PostgreSQL, after the index loads (bench/pg_retrieval.py). Figures, not assertions.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from load import DRAIN_SECONDS, demo_database, percentile
from pg_retrieval import pg_retrieval

from docassist.core.limits import MODEL_CONCURRENCY, TURNS_PER_MODEL_REQUEST
from docassist.storage import Store
from docassist_testkit.fakes.loopback import free_port
from docassist_testkit.fakes.model_server import ModelServer
from docassist_testkit.fakes.slack_api import FakeSlackApi
from docassist_testkit.model_capacity import CapacityModel
from docassist_testkit.slack_load import (
    LoadRun,
    ReplicaSender,
    answer_problems,
    answers,
    model_env,
    model_responder,
    send_load,
    start_bot,
    store_problems,
)

SECRET = "bench-signing-secret"
WORKERS_PER_REPLICA = 4
MODEL_LATENCY = 0.2
MODEL_CAPACITY = 64
CONFIGURATIONS: tuple[tuple[str, int, int | None], ...] = (
    ("sqlite", 1, WORKERS_PER_REPLICA), ("postgresql", 1, WORKERS_PER_REPLICA),
    ("postgresql", 2, WORKERS_PER_REPLICA), ("postgresql", 3, WORKERS_PER_REPLICA),
    ("sqlite", 1, None))
"""(store, replicas, turns per replica); None: no cap, the default turns in flight
(TURNS_PER_MODEL_REQUEST × DOCASSIST_MODEL_CONCURRENCY's default: 64) — issue 25's change,
beside the fixed-concurrency rows."""
DEFAULT_TURNS: str = f"default ({TURNS_PER_MODEL_REQUEST * MODEL_CONCURRENCY})"


def cpu_times() -> tuple[int, int]:
    """(busy, total) jiffies of the whole machine since boot, from /proc/stat."""
    fields = [int(value) for value in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return sum(fields) - idle, sum(fields)


def busy_share(before: tuple[int, int], after: tuple[int, int]) -> float:
    busy, total = after[0] - before[0], after[1] - before[1]
    return round(busy / total, 3) if total else 0.0


class Postgres:
    """A throwaway cluster (docassist_testkit.pg) with fsync and synchronous commit on."""

    def __init__(self) -> None:
        from docassist_testkit.pg import start_cluster

        self.cluster = start_cluster()
        data = self.cluster.folder / "data" / "postgresql.conf"
        with data.open("a") as conf:  # later lines win over the test settings
            conf.write("\nfsync = on\nsynchronous_commit = on\nfull_page_writes = on\n")
        self.cluster.pg_ctl("-m", "fast", "restart", "-l",
                            str(self.cluster.folder / "server.log"))

    def database(self, name: str, template: Path) -> str:
        from docassist.storage.postgres import PostgresStore
        from docassist.storage.postgres.copy import copy_sqlite_to_postgres

        self.cluster.admin(f'CREATE DATABASE "{name}"')
        source, target = Store(template), PostgresStore(self.cluster.url(name))
        try:
            copy_sqlite_to_postgres(source, target)
        finally:
            source.close()
            target.close()
        return self.cluster.url(name)

    def close(self) -> None:
        self.cluster.stop("immediate")
        shutil.rmtree(self.cluster.folder, ignore_errors=True)


def run_configuration(db: str, replicas: int, workers: int | None, conversations: int,
                      turns: int, folder: Path) -> dict[str, Any]:
    expected = conversations * turns
    model = CapacityModel(model_responder(delay=0.0), MODEL_CAPACITY, MODEL_LATENCY)
    env_extra = {"DOCASSIST_INBOX_WORKERS": str(workers)} if workers else {}
    with FakeSlackApi() as api, ModelServer() as server:
        server.respond("/v1/chat/completions", model)
        env = {**model_env(server.url), **env_extra}
        ports = [free_port() for _ in range(replicas)]
        with ThreadPoolExecutor(replicas) as pool:
            bots = list(pool.map(lambda port: start_bot(
                db, api, port, SECRET, env, log=folder / f"bot.{port}.log"), ports))
        sender = ReplicaSender([f"http://127.0.0.1:{port}/slack/events" for port in ports],
                               SECRET)
        try:
            run = LoadRun(conversations, turns)
            cpu_before = cpu_times()
            started = time.monotonic()
            send_load(sender, run)
            deadline = time.monotonic() + DRAIN_SECONDS
            while time.monotonic() < deadline and len(answers(api)) < expected:
                time.sleep(0.05)
            cpu_after = cpu_times()
            delivered = answers(api)
            finished = max((answer.at for answer in delivered), default=time.monotonic())
            time.sleep(1.0)  # the last inbox rows reach `done`
        finally:
            sender.close()
            for bot in bots:
                bot.terminate()
            for bot in bots:
                bot.wait(15)
    problems = answer_problems(delivered, conversations, turns) + store_problems(
        db, conversations, turns)
    acks = run.ack_ms()
    return {"replicas": replicas, "turns_per_replica": workers or DEFAULT_TURNS,
            "messages": expected, "answered": len(delivered),
            "msgs_per_s": round(len(delivered) / (finished - started), 2),
            "ack_ms_p99": round(percentile(acks, 0.99), 1),
            "cpu_busy": busy_share(cpu_before, cpu_after),
            "model_peak_in_flight": model.peak, "problem_count": len(problems),
            "problems": problems[:5]}


def load_runs(postgres: Postgres, folder: Path, conversations: int, turns: int
              ) -> list[dict[str, Any]]:
    template = demo_database(folder)
    runs: list[dict[str, Any]] = []
    for index, (store, replicas, workers) in enumerate(CONFIGURATIONS):
        if store == "sqlite":
            db = str(folder / f"run{index}.db")
            shutil.copy(template, db)
        else:
            db = postgres.database(f"bench_{index}", template)
        print(f"{store} × {replicas} …", file=sys.stderr, flush=True)
        figures = run_configuration(db, replicas, workers, conversations, turns, folder)
        runs.append({"store": store, **figures})
        print(json.dumps(runs[-1]), file=sys.stderr, flush=True)
    return runs


def summarize(runs: list[dict[str, Any]], conversations: int, turns: int) -> dict[str, Any]:
    one = next(r for r in runs if r["store"] == "postgresql" and r["replicas"] == 1)
    three = next(r for r in runs if r["store"] == "postgresql" and r["replicas"] == 3)
    uncapped = next(r for r in runs if r["turns_per_replica"] != WORKERS_PER_REPLICA)
    return {"conversations": conversations, "turns": turns,
            "workers_per_replica": WORKERS_PER_REPLICA, "model_latency_s": MODEL_LATENCY,
            "model_capacity": MODEL_CAPACITY, "runs": runs,
            "scaling_3_vs_1": round(three["msgs_per_s"] / one["msgs_per_s"], 2),
            "one_process_default_concurrency_msgs_per_s": uncapped["msgs_per_s"],
            "ack_ms_p99_max": max(r["ack_ms_p99"] for r in runs),
            "problems": sum(r["problem_count"] for r in runs)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-c", "--conversations", type=int, default=50)
    parser.add_argument("-t", "--turns", type=int, default=10)
    parser.add_argument("--quick", action="store_true", help="10 conversations × 3 turns")
    parser.add_argument("--retrieval-only", action="store_true",
                        help="only hybrid retrieval at 100k chunks on PostgreSQL")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    conversations, turns = (10, 3) if args.quick else (args.conversations, args.turns)
    summary: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        postgres = Postgres()
        try:
            if not args.retrieval_only:
                summary = summarize(load_runs(postgres, folder, conversations, turns),
                                    conversations, turns)
            print("postgresql retrieval …", file=sys.stderr, flush=True)
            summary["pg_retrieval"] = pg_retrieval(postgres.database, folder, cpu_times)
        finally:
            postgres.close()
    if args.json:
        print(json.dumps(summary))
        return
    for run in summary.get("runs", []):
        print(f"{run['store']:>10} × {run['replicas']} ({run['turns_per_replica']} turns "
              f"each): {run['msgs_per_s']:6.2f} msgs/s, "
              f"ack p99 {run['ack_ms_p99']:7.1f} ms, CPU busy {run['cpu_busy']:.2f}, "
              f"problems {run['problem_count']}")
    if "scaling_3_vs_1" in summary:
        print(f"3 replicas ÷ 1: {summary['scaling_3_vs_1']}")
    print(f"postgresql retrieval: {json.dumps(summary['pg_retrieval'])}")


if __name__ == "__main__":
    main()
