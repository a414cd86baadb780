"""Acks under a burst beside their floor, and how busy the bot keeps the model (issue 25).

    python bench/burst.py [--window 10] [--floor-server aiohttp+threads|aiohttp|http.server]
        [--json]

For 10 and then 50 concurrent connections (each sends its next signed event as soon as its
previous ack returns; 500 events in all: 10 × 50 or 50 × 10 turns):
- `docassist slack --http` as a process on a fresh copy of the indexed demo corpus, with a
  stand-in model that serves at most MODEL_CAPACITY requests at once, each after
  MODEL_DELAY_SECONDS (the turns run while the burst is acked), then
- the floor: a bare Bolt app that only acks (bench/bolt_floor.py: same Bolt, same fake Web
  API, and by default the same server kind — the sync App behind the product's own aiohttp
  route and dispatch thread pool), sent the same burst, then
- the durable floor: the same app storing each event in an SQLite file before its ack
  (`bolt_floor.py --store`): what storing before the ack costs by itself.
Reported: ack p99 of the three (`ack_burst_ms_p99`, `ack_floor_ms_p99`,
`ack_durable_floor_ms_p99`, and `…50…` for 50 connections) and, over the 50-connection
run's first `--window` seconds (or until every event's answer is delivered, if sooner), model
requests completed per second ÷ the stand-in's capacity (`model_capacity_ratio`), the
machine's CPU busy share then (/proc/stat) and what limited it (`cpu` only when that share is
≥ CPU_BOUND_SHARE, else `model`). Figures, not tests.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from bolt_floor import DEFAULT_SERVER, SERVER_KINDS
from figures import print_figures
from load import demo_database, percentile

from docassist_testkit.fakes.loopback import children_of, free_port, wait_healthy
from docassist_testkit.fakes.model_server import ModelServer, Reply
from docassist_testkit.fakes.slack_api import FakeSlackApi
from docassist_testkit.slack_load import (
    EventSender,
    LoadRun,
    answers,
    model_env,
    model_responder,
    send_load,
    start_bot,
)

REPO = Path(__file__).resolve().parents[1]

SECRET: Final = "bench-signing-secret"
EVENTS: Final = 500
CONNECTIONS: Final = (10, 50)
MODEL_CAPACITY: Final = 32
MODEL_DELAY_SECONDS: Final = 0.2
CAPACITY_PER_SECOND: Final = MODEL_CAPACITY / MODEL_DELAY_SECONDS
"""160 requests/s: what the stand-in serves when it is never idle."""
CPU_BOUND_SHARE: Final = 0.9
WINDOW_SECONDS: Final = 10.0


class CapacityModel:
    """The stand-in model's responder with a hosted model's limit: MODEL_CAPACITY requests
    are served at once (each takes MODEL_DELAY_SECONDS), the rest wait; completions are
    timed."""

    def __init__(self) -> None:
        self._slots = threading.BoundedSemaphore(MODEL_CAPACITY)
        self._answer = model_responder(0.0)
        self._lock = threading.Lock()
        self.completed: list[float] = []
        self.in_flight = 0
        self.peak = 0
        """The most requests served at once: how many turns the bot kept on the model."""

    def __call__(self, body: Any) -> Reply:
        with self._slots:
            with self._lock:
                self.in_flight += 1
                self.peak = max(self.peak, self.in_flight)
            time.sleep(MODEL_DELAY_SECONDS)
            reply = self._answer(body)
            with self._lock:
                self.in_flight -= 1
        with self._lock:
            self.completed.append(time.monotonic())
        return reply

    def count(self) -> int:
        with self._lock:
            return len(self.completed)

    def completed_between(self, start: float, end: float) -> int:
        with self._lock:
            return sum(1 for at in self.completed if start <= at < end)


def cpu_times() -> tuple[int, int]:
    """(busy, total) jiffies of all CPUs since boot, from /proc/stat."""
    fields = [int(value) for value in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return sum(fields) - idle, sum(fields)


def stat_fields(pid: int) -> list[str]:
    """/proc/<pid>/stat after the command name: the state first, then the counters."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def process_cpu_seconds(pid: int) -> float:
    """User + system CPU time a process has used."""
    fields = stat_fields(pid)
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def burst(url: str, connections: int, started: Callable[[], None] = lambda: None
          ) -> list[float]:
    """The burst's ack times (ms) of the acked events, sent from a process of its own (as
    Slack's are): in this one, the stand-in model and the fake Web API serving the turns
    would share the sender's GIL, and the floor's run has no turns. `started` is called
    as the first event goes out."""
    sender = subprocess.Popen([sys.executable, __file__, "--send", url, "--connections",
                               str(connections)], stdout=subprocess.PIPE, cwd=REPO)
    assert sender.stdout is not None
    if sender.stdout.readline().strip() == b"sending":
        started()
    output, _ = sender.communicate(timeout=600)
    if sender.returncode:
        raise RuntimeError(f"the burst sender failed ({sender.returncode})")
    acks: list[float] = json.loads(output)
    return acks


def send_burst(url: str, connections: int) -> None:
    """The sender process: say `sending`, send, print the ack times as one JSON list."""
    sender = EventSender(url, SECRET)
    run = LoadRun(connections, EVENTS // connections)
    print("sending", flush=True)
    try:
        send_load(sender, run)
    finally:
        sender.close()
    print(json.dumps(run.ack_ms()), flush=True)


def process_tree_cpu_seconds(pid: int) -> float:
    """CPU time of a process and its children (the serving process and its turn
    processes)."""
    return process_cpu_seconds(pid) + sum(process_cpu_seconds(kid)
                                          for kid in children_of(pid))


def start_floor(api: FakeSlackApi, port: int, server: str, log: Path,
                store: Path | None = None) -> subprocess.Popen[bytes]:
    stores = ["--store", str(store)] if store is not None else []
    with log.open("wb") as stderr:
        process = subprocess.Popen(
            [sys.executable, str(REPO / "bench" / "bolt_floor.py"), "--port", str(port),
             "--api-url", api.url, "--server", server, *stores],
            env={**os.environ, "SLACK_SIGNING_SECRET": SECRET}, cwd=REPO,
            stdout=subprocess.DEVNULL, stderr=stderr)
    return wait_healthy(process, port, lambda: log.read_text(errors="replace"))


def stop(process: subprocess.Popen[bytes]) -> None:
    """Stop a server and wait until its turn processes are gone too: they finish the turns
    they run (up to a second after a burst), and must not share the CPU with the next run."""
    children = children_of(process.pid)
    process.terminate()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(10)
    deadline = time.monotonic() + 10
    while any(running(kid) for kid in children) and time.monotonic() < deadline:
        time.sleep(0.05)
    for kid in children:
        if running(kid):
            os.kill(kid, signal.SIGKILL)


def signal_all(pids: list[int], number: signal.Signals) -> None:
    for pid in pids:
        os.kill(pid, number)


def running(pid: int) -> bool:
    """Alive and not a zombie waiting to be reaped."""
    try:
        return stat_fields(pid)[0] != "Z"
    except OSError:
        return False


def bot_burst(demo: Path, folder: Path, connections: int, window: float,
              paused: bool = False) -> tuple[list[float], dict[str, Any]]:
    """The product's acks for one burst and, over `window` seconds from its start (less
    when every turn is done sooner), the model requests it completed and the CPU busy
    share. `paused`: the turn processes are stopped (SIGSTOP) while the burst is sent, so
    its acks share the machine with nothing but the sender (what the ack path costs by
    itself); they are idle then, holding no lock, and answer once it is over."""
    db = folder / f"bot-{'paused-' if paused else ''}{connections}.db"
    shutil.copy(demo, db)
    model = CapacityModel()
    with FakeSlackApi() as api, ModelServer() as server:
        server.respond("/v1/chat/completions", model)
        port = free_port()
        bot = start_bot(db, api, port, SECRET, model_env(server.url))
        try:
            mark: dict[str, Any] = {}

            def started() -> None:
                mark["began"], mark["cpu"] = time.monotonic(), cpu_times()
                mark["bot_cpu"] = process_tree_cpu_seconds(bot.pid)
                mark["bench_cpu"] = process_cpu_seconds(os.getpid())

            turns = children_of(bot.pid) if paused else []
            signal_all(turns, signal.SIGSTOP)
            try:
                acks = burst(f"http://127.0.0.1:{port}/slack/events", connections, started)
            finally:
                signal_all(turns, signal.SIGCONT)
            began, (busy, total) = mark["began"], mark["cpu"]
            # Until the window ends or every event's answer is delivered (then the model
            # would sit idle for the rest of the window, which is not the bot's capacity).
            # Not "until two requests per event": a turn that finds nothing to answer from
            # asks the model once, so that wait ran to the window's end in every run.
            while time.monotonic() < began + window and len(answers(api)) < EVENTS:
                time.sleep(0.05)
            ended, (busy_end, total_end) = time.monotonic(), cpu_times()
            bot_cpu = process_tree_cpu_seconds(bot.pid) - mark["bot_cpu"]
            bench_cpu = process_cpu_seconds(os.getpid()) - mark["bench_cpu"]
        finally:
            stop(bot)
    completed = model.completed_between(began, ended)
    return acks, {"requests": completed, "seconds": round(ended - began, 2),
                  "cpu_busy": (busy_end - busy) / max(1, total_end - total),
                  "peak": model.peak, "bot_cpu_cores": bot_cpu / max(0.001, ended - began),
                  # the fake Slack API and the stand-in model (the sender has its own)
                  "bench_cpu_cores": bench_cpu / max(0.001, ended - began)}


def floor_burst(folder: Path, connections: int, server: str, durable: bool = False
                ) -> list[float]:
    """The floor's acks for one burst; `durable`: the durable floor's (its own new file)."""
    name = f"{'durable-' if durable else ''}floor-{connections}"
    store = folder / f"{name}.db" if durable else None
    with FakeSlackApi() as api:
        port = free_port()
        floor = start_floor(api, port, server, folder / f"{name}.log", store)
        try:
            return burst(f"http://127.0.0.1:{port}/slack/events", connections)
        finally:
            stop(floor)


def p99(acks: list[float]) -> float:
    return round(percentile(acks, 0.99), 1)


def median(acks: list[float]) -> float | None:
    return round(statistics.median(acks), 1) if acks else None


def measure(folder: Path, window: float = WINDOW_SECONDS,
            floor_server: str = DEFAULT_SERVER) -> dict[str, Any]:
    demo = demo_database(folder)
    figures: dict[str, Any] = {"ack_floor_server": floor_server}
    details: dict[str, Any] = {}
    for connections in CONNECTIONS:
        acks, capacity = bot_burst(demo, folder, connections, window)
        floor = floor_burst(folder, connections, floor_server)
        durable = floor_burst(folder, connections, DEFAULT_SERVER, durable=True)
        suffix = "" if connections == 10 else str(connections)
        figures[f"ack_burst{suffix}_ms_p99"] = p99(acks)
        figures[f"ack_floor{suffix}_ms_p99"] = p99(floor)
        figures[f"ack_durable_floor{suffix}_ms_p99"] = p99(durable)
        details[str(connections)] = {
            "acked": len(acks), "floor_acked": len(floor), "durable_floor_acked": len(durable),
            "ack_ms_p50": median(acks), "floor_ms_p50": median(floor),
            "durable_floor_ms_p50": median(durable),
            "model_requests_per_s": round(capacity["requests"] / capacity["seconds"], 1),
            "model_requests": capacity["requests"], "measured_seconds": capacity["seconds"],
            "cpu_busy": round(capacity["cpu_busy"], 3),
            "model_peak_in_flight": capacity["peak"],
            "bot_cpu_cores": round(capacity["bot_cpu_cores"], 2),
            "bench_cpu_cores": round(capacity["bench_cpu_cores"], 2)}
        if connections == max(CONNECTIONS):  # the most conversations: the most turns at once
            rate = capacity["requests"] / capacity["seconds"]
            figures["model_capacity_ratio"] = round(rate / CAPACITY_PER_SECOND, 3)
            figures["model_capacity_cpu_busy"] = round(capacity["cpu_busy"], 3)
            figures["model_capacity_limited_by"] = (
                "cpu" if capacity["cpu_busy"] >= CPU_BOUND_SHARE else "model")
    figures["ack_burst_details"] = details
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--window", type=float, default=WINDOW_SECONDS)
    parser.add_argument("--floor-server", choices=SERVER_KINDS, default=DEFAULT_SERVER)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--send", metavar="URL", help=argparse.SUPPRESS)
    parser.add_argument("--connections", type=int, default=10, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.send:
        send_burst(args.send, args.connections)
        return
    with tempfile.TemporaryDirectory() as name:
        figures = measure(Path(name), args.window, args.floor_server)
    print_figures(figures, args.json)


if __name__ == "__main__":
    main()
