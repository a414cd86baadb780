"""Teams acks under a burst, with turns in turn processes and in the serving process, beside
a durable floor; and how busy each keeps the model. Interleaved rounds, medians.

    python bench/teams_burst.py [--rounds 5] [--json] [--page NAME]

Per round, for 10 and then 50 concurrent connections (each posts its next activity as soon
as its previous one is answered; 500 activities in all), three servers are sent the same
burst, one after the other:
- `docassist teams` (anonymous mode) on a copy of the indexed demo corpus, turns in turn
  processes (the default), with bench/burst.py's stand-in model (at most 32 requests at once,
  0.2 s each) and a fake Bot Connector receiving the replies;
- the same with DOCASSIST_TURN_PROCESSES=0 (every turn in the serving process, as Teams ran
  before);
- the durable floor: a bare app on the same SDK (Microsoft 365 Agents SDK: CloudAdapter, an
  AgentApplication behind its JWT check in anonymous mode, on the product's aiohttp
  application) whose message handler stores the activity in an SQLite file through the
  product's group commit (bolt_floor.durable_writer): what the SDK and storing before the
  answer cost by themselves, without admission, the inbox or turns.
Reported: each side's answer p99 and p50 (ms), their ratio to the durable floor's p99, and
(50 connections) model requests completed per second until every turn is over (at most
10 s) ÷ the stand-in's capacity. A page of medians and every round goes to docs/benchmarks/
with `--page`.
Figures, not tests.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final, cast

import httpx
from burst import (
    CAPACITY_PER_SECOND,
    WINDOW_SECONDS,
    CapacityModel,
    stop,
)
from load import demo_database, percentile

from docassist.evaluation.pages import commit
from docassist.storage.backends import open_store
from docassist_testkit.fakes.loopback import free_port, wait_healthy
from docassist_testkit.fakes.model_server import ModelServer
from docassist_testkit.fakes.teams_connector import FakeConnector
from docassist_testkit.slack_load import model_env

REPO: Final = Path(__file__).resolve().parents[1]
EVENTS: Final = 500
CONNECTIONS: Final = (10, 50)
SIDES: Final = ("turn processes", "serving process", "durable floor")
WITHIN: Final = 1.2
QUESTIONS: Final = ("How do I renew the TLS certificate?", "How do I restore a backup?",
                    "What do I do after changing the docassist-api config?",
                    "How do I report an incident?")


def activity(service_url: str, conversation: int, turn: int) -> dict[str, Any]:
    return {"type": "message", "id": f"b-{conversation}-{turn}", "channelId": "msteams",
            "serviceUrl": service_url,
            "text": QUESTIONS[(conversation + turn) % len(QUESTIONS)],
            "from": {"id": f"29:u{conversation}", "aadObjectId": f"aad-u{conversation}"},
            "recipient": {"id": "28:bot", "name": "DocAssist"},
            "conversation": {"id": f"a:chat-{conversation}", "conversationType": "personal",
                             "tenantId": "tenant-1"}}


def send(url: str, service_url: str, connections: int) -> list[float]:
    """Each connection posts its turns in order, the next once the previous is answered;
    the answer times (ms) of those answered 2xx."""
    times: list[float] = []
    lock = threading.Lock()

    def conversation(index: int) -> None:
        with httpx.Client(timeout=30) as client:
            for turn in range(EVENTS // connections):
                began = time.perf_counter()
                response = client.post(url, json=activity(service_url, index, turn))
                took = (time.perf_counter() - began) * 1000
                if response.status_code < 300:
                    with lock:
                        times.append(took)

    threads = [threading.Thread(target=conversation, args=(index,))
               for index in range(connections)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return times


def burst(url: str, service_url: str, connections: int,
          started: Callable[[], None] = lambda: None) -> list[float]:
    """The burst from a process of its own (the stand-ins here must not share its GIL).
    `started` is called as the first activity goes out: the sender's own start-up (a
    second or so of imports) is not the bot's time."""
    sender = subprocess.Popen([sys.executable, __file__, "--send", url, "--service-url",
                               service_url, "--connections", str(connections)],
                              stdout=subprocess.PIPE, text=True, cwd=REPO)
    assert sender.stdout is not None
    if sender.stdout.readline().strip() == "sending":
        started()
    output, _ = sender.communicate(timeout=600)
    if sender.returncode:
        raise RuntimeError(f"the burst sender failed ({sender.returncode})")
    times: list[float] = json.loads(output.strip().splitlines()[-1])
    return times


def bot_side(demo: Path, folder: Path, connections: int, in_process: bool
             ) -> tuple[list[float], float]:
    # A folder of its own each time: a copy over an earlier run's file would meet that
    # run's WAL, and its activities (the same ids) would all be duplicates.
    db = Path(tempfile.mkdtemp(dir=folder)) / "teams.db"
    shutil.copy(demo, db)
    model = CapacityModel()
    with FakeConnector() as connector, ModelServer() as server:
        server.respond("/v1/chat/completions", model)
        port = free_port()
        env = {name: value for name, value in os.environ.items()
               if not name.startswith("DOCASSIST_TEAMS_")}
        env.update({"DOCASSIST_DB": str(db), "DOCASSIST_TEAMS_ANONYMOUS": "true",
                    **model_env(server.url),
                    **({"DOCASSIST_TURN_PROCESSES": "0"} if in_process else {})})
        log = folder / f"teams-{port}.log"
        with log.open("wb") as stderr:
            bot = subprocess.Popen([sys.executable, "-m", "docassist", "teams", "--port",
                                    str(port)], env=env, cwd=REPO,
                                   stdout=subprocess.DEVNULL, stderr=stderr)
        wait_healthy(bot, port, lambda: log.read_text(errors="replace"), 120)
        try:
            mark = {"began": time.monotonic()}
            times = burst(f"http://127.0.0.1:{port}/api/messages", connector.url, connections,
                          lambda: mark.update(began=time.monotonic()))
            began = mark["began"]
            # Until every activity's turn is finished (not two model requests each: a
            # turn that finds no passage asks the model once), at most the window. Every
            # activity is stored once the burst is answered, so none unfinished means done.
            store = open_store(db)
            try:
                while (time.monotonic() < began + WINDOW_SECONDS
                       and store.inbox_backlog().pending):
                    time.sleep(0.05)
            finally:
                store.close()
            ended = time.monotonic()
        finally:
            stop(bot)
    rate = model.completed_between(began, ended) / max(0.001, ended - began)
    return times, rate / CAPACITY_PER_SECOND


def floor_side(folder: Path, connections: int) -> list[float]:
    port = free_port()
    log = folder / f"floor-{port}.log"
    with log.open("wb") as stderr:
        floor = subprocess.Popen([sys.executable, __file__, "--floor", str(port), "--store",
                                  str(Path(tempfile.mkdtemp(dir=folder)) / "floor.db")],
                                 cwd=REPO,
                                 stdout=subprocess.DEVNULL, stderr=stderr)
    wait_healthy(floor, port, lambda: log.read_text(errors="replace"))
    try:
        return burst(f"http://127.0.0.1:{port}/api/messages", "http://127.0.0.1:9",
                     connections)
    finally:
        stop(floor)


def serve_floor(port: int, store: Path) -> None:
    """The durable floor: the same SDK as the product (its CloudAdapter and an
    AgentApplication behind its JWT check, in anonymous mode, on the product's aiohttp
    application) whose message handler only stores the activity: what the SDK and storing
    before the answer cost by themselves."""
    import asyncio

    from aiohttp import web
    from aiohttp.typedefs import Handler
    from bolt_floor import durable_writer
    from microsoft_agents.hosting.aiohttp import CloudAdapter, jwt_authorization_decorator
    from microsoft_agents.hosting.core import (
        AgentApplication,
        MemoryStorage,
        TurnContext,
        TurnState,
    )

    from docassist.bot.teams.server import ANONYMOUS_NOISE_LOGGER, connections_for
    from docassist.bot.web import new_application, run_forever

    keep = durable_writer(store)
    logging.getLogger(ANONYMOUS_NOISE_LOGGER).setLevel(logging.ERROR)  # as the product does
    connections = connections_for(None)
    cloud = CloudAdapter(connection_manager=connections)
    agent = AgentApplication[TurnState](storage=MemoryStorage(), connection_manager=connections,
                                        start_typing_timer=False,
                                        remove_recipient_mention=False)

    async def on_message(context: TurnContext, _state: TurnState) -> None:
        activity = context.activity
        await asyncio.to_thread(keep, {"event_id": activity.id,
                                       **activity.model_dump(mode="json", by_alias=True,
                                                             exclude_none=True)})

    agent.activity("message")(on_message)

    async def messages(request: web.Request) -> web.StreamResponse:
        response = await cloud.process(request, agent)  # the SDK's own aiohttp entry
        return response if response is not None else web.Response(status=202)

    app = new_application()
    app["agent_configuration"] = connections.get_default_connection_configuration()
    checked = cast(Handler, jwt_authorization_decorator(messages))  # type: ignore[no-untyped-call]
    app.router.add_post("/api/messages", checked)
    run_forever(app, "127.0.0.1", port, lambda _port: None)


def one_round(demo: Path, folder: Path) -> dict[str, Any]:
    figures: dict[str, Any] = {"load_1m": round(os.getloadavg()[0], 2)}
    for connections in CONNECTIONS:
        processes, capacity = bot_side(demo, folder, connections, in_process=False)
        serving, capacity_in = bot_side(demo, folder, connections, in_process=True)
        floor = floor_side(folder, connections)
        for side, times in zip(SIDES, (processes, serving, floor), strict=True):
            figures[f"{side} {connections} p99"] = round(percentile(times, 0.99), 1)
            figures[f"{side} {connections} p50"] = round(statistics.median(times), 1)
            figures[f"{side} {connections} answered"] = len(times)
        for side in SIDES[:2]:
            figures[f"{side} {connections} ÷ floor"] = round(
                figures[f"{side} {connections} p99"]
                / figures[f"durable floor {connections} p99"], 2)
        if connections == max(CONNECTIONS):
            figures["turn processes capacity"] = round(capacity, 3)
            figures["serving process capacity"] = round(capacity_in, 3)
    return figures


def page(rounds: list[dict[str, Any]], name: str) -> str:
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    keys = list(rounds[0])
    lines = [f"# {name}: Teams acks by where turns run", "",
             f"Written by `bench/teams_burst.py` on {when} at commit {commit(REPO)}, "
             f"{len(rounds)} interleaved rounds on one machine "
             f"({len(os.sched_getaffinity(0))} cores), medians. Goal beside them: answers "
             f"within {WITHIN}× the durable floor's p99 (a bare app on the same SDK storing "
             "each activity through the same group commit); the model capacity ratio is the "
             "stand-in model's completed requests per second ÷ what it serves when never "
             "idle (50 connections, first 10 s). `load_1m` is the machine's load as each "
             "round began.", "",
             "| figure | median | rounds |", "|---|---|---|"]
    for key in keys:
        values = [float(r[key]) for r in rounds]
        lines.append(f"| {key} | {round(statistics.median(values), 3)} | "
                     + ", ".join(f"{v:g}" for v in values) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--page", metavar="NAME",
                        help="write docs/benchmarks/NAME-<date>.md")
    parser.add_argument("--send", help=argparse.SUPPRESS)
    parser.add_argument("--service-url", help=argparse.SUPPRESS)
    parser.add_argument("--connections", type=int, default=10, help=argparse.SUPPRESS)
    parser.add_argument("--floor", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--store", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.send:
        print("sending", flush=True)
        print(json.dumps(send(args.send, args.service_url, args.connections)), flush=True)
        return
    if args.floor:
        serve_floor(args.floor, Path(args.store))
        return
    with tempfile.TemporaryDirectory() as folder:
        demo = demo_database(Path(folder))
        rounds = []
        for number in range(args.rounds):
            rounds.append(one_round(demo, Path(folder)))
            print(f"round {number + 1}: {json.dumps(rounds[-1])}", file=sys.stderr, flush=True)
    if args.page:
        day = datetime.now(UTC).strftime("%Y-%m-%d")
        out = REPO / "docs" / "benchmarks" / f"{args.page}-{day}.md"
        out.write_text(page(rounds, args.page))
        print(f"wrote {out.relative_to(REPO)}", file=sys.stderr)
    summary = {key: round(statistics.median(float(r[key]) for r in rounds), 3)
               for key in rounds[0]}
    if args.json:
        print(json.dumps(summary))
    else:
        for key, value in summary.items():
            print(f"{key}: {value}")


if __name__ == "__main__":
    main()
