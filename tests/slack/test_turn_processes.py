"""Turn processes (issue 25): `docassist slack --http` stores and acks, its turn processes
answer. Real processes on loopback: the serving process, its `turn-worker` children, the fake
Slack Web API and, where a turn must be slow, the stand-in model server."""

from __future__ import annotations

import json
import logging
import os
import signal
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Callable
from functools import partial
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from websockets.sync.server import ServerConnection, serve

from docassist.core.documents import parse_document
from docassist.core.ports import NULL_OBSERVER
from docassist.serving.metrics import Metrics
from docassist.serving.turn_processes import (
    TurnFinished,
    TurnProcesses,
    lower_priority,
    replay_line,
)
from docassist.storage import Store
from docassist_testkit.fakes.loopback import (
    free_port,
    kill_replica,
    turn_processes,
    wait_until,
)
from docassist_testkit.fakes.model_server import ModelServer
from docassist_testkit.fakes.slack_api import FakeSlackApi
from docassist_testkit.slack_load import (
    EventSender,
    answers,
    model_env,
    model_responder,
    start_bot,
)
from tests.conftest import REPO

SECRET = "turn-processes-secret"
FAST = {"DOCASSIST_EMBEDDER": "none", "DOCASSIST_RETRIEVER": "bm25"}


def none_alive(pids: list[int]) -> bool:
    return not any(alive(pid) for pid in pids)


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def nice_of(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[16])


def turns_counted(port: int) -> float:
    text = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10).text
    return sum(sample.value for family in text_string_to_metric_families(text)
               if family.name == "docassist_turns" for sample in family.samples
               if sample.name == "docassist_turns_total")


def inbox(db: Path) -> list[tuple[str, str | None]]:
    with sqlite3.connect(db) as connection:
        return [(str(row[0]), row[1]) for row in connection.execute(
            "SELECT status, claimed_by FROM inbox ORDER BY id")]


def test_turns_run_in_turn_processes_and_are_counted_by_the_server(db_path: Path) -> None:
    with FakeSlackApi() as api:
        port = free_port()
        bot = start_bot(db_path, api, port, SECRET, {**FAST, "DOCASSIST_TURN_PROCESSES": "2",
                                                     "DOCASSIST_LOG_LEVEL": "INFO"})
        sender = EventSender(f"http://127.0.0.1:{port}/slack/events", SECRET)
        try:
            children = turn_processes(bot.pid)
            assert len(children) == 2
            # Acks first when both want a core (DOCASSIST_TURN_NICE's default).
            assert [nice_of(kid) - nice_of(bot.pid) for kid in children] == [10, 10]
            # The port opens once both are ready (their indexes warm).
            ready = httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=10).json()
            assert ready["checks"]["turn_processes"] == "2 of 2 ready"
            for conversation in range(4):
                assert sender.send(conversation, 0).status == 200
            assert wait_until(lambda: len(answers(api)) == 4, 60)
            # The serving process runs no turn: what /metrics counts came from the children.
            assert wait_until(lambda: turns_counted(port) == 4, 10)
            assert [status for status, _ in inbox(db_path)] == ["done"] * 4
            # Each turn process, once warm, kept what it loaded out of the collector
            # (heap.py); after another process changes the index, each rebuilds and settles
            # again. The serving process answers nothing, so it loads no model and builds no
            # index: it never settles.
            log = Path(f"{db_path}.{port}.log")
            assert log.read_text().count("heap settled:") == 2
            other = Store(db_path)
            other.replace_document(parse_document(
                "plants.md", "plants", "## Ficus\nWater the office ficus every Monday.\n"),
                "/tmp/plants.md")
            other.close()
            assert wait_until(lambda: log.read_text().count("heap settled:") == 4, 30)
        finally:
            sender.close()
            kill_replica(bot)
    threads = [str(answer.thread_ts) for answer in answers(api)]
    assert sorted(threads) == sorted(set(threads)) and len(threads) == 4  # one per message


def test_a_killed_turn_process_is_replaced_and_its_event_answered_once(db_path: Path) -> None:
    with FakeSlackApi() as api, ModelServer() as model:
        model.respond("/v1/chat/completions", model_responder(3.0))
        port = free_port()
        env = {**model_env(model.url), **FAST, "DOCASSIST_TURN_PROCESSES": "1",
               "DOCASSIST_INBOX_LEASE": "2"}
        bot = start_bot(db_path, api, port, SECRET, env)
        sender = EventSender(f"http://127.0.0.1:{port}/slack/events", SECRET)
        try:
            [child] = turn_processes(bot.pid)
            assert sender.send(0, 0).status == 200
            # Its turn waits on the model: the event is claimed by the child, named after
            # the serving process (the replica) and then the child.
            assert wait_until(lambda: model.bodies("/v1/chat/completions"), 20)
            [(status, holder)] = inbox(db_path)
            assert status == "pending" and f":{bot.pid}:turns-{child}:" in str(holder)
            os.kill(child, signal.SIGKILL)
            assert wait_until(lambda: [kid for kid in turn_processes(bot.pid) if kid != child],
                              20)
            # The new child takes the event once the dead one's lease ends, and answers it.
            assert wait_until(lambda: [s for s, _ in inbox(db_path)] == ["done"], 60)
        finally:
            sender.close()
            kill_replica(bot)
        log = Path(f"{db_path}.{port}.log").read_text()
    assert f"turn process 0 (pid {child}) exited with -9; starting it again" in log
    assert len(answers(api)) == 1  # answered once
    with sqlite3.connect(db_path) as connection:
        assert connection.execute("SELECT count(*) FROM turns").fetchone()[0] == 1


SOCKET_ENVELOPE = "env-socket"


def socket_slack(acked: threading.Event) -> Callable[[ServerConnection], None]:
    """Slack's side of Socket Mode: hello, one mention, then the acks the bot sends back."""
    payload = {"token": "t", "team_id": "T1", "api_app_id": "A1", "type": "event_callback",
               "event_id": "EvSocketTurns", "event_time": 1,
               "event": {"type": "app_mention", "user": "U1", "ts": "654.1", "channel": "C1",
                         "team": "T1", "text": "<@UBOT> How do I renew the TLS certificate?"}}

    def slack(connection: ServerConnection) -> None:
        connection.send(json.dumps({"type": "hello", "num_connections": 1}))
        connection.send(json.dumps({"envelope_id": SOCKET_ENVELOPE, "type": "events_api",
                                    "payload": payload, "accepts_response_payload": False}))
        for raw in connection:
            if json.loads(raw).get("envelope_id") == SOCKET_ENVELOPE:
                acked.set()
    return slack


def test_socket_mode_runs_turns_in_turn_processes_too(db_path: Path) -> None:
    """`docassist slack` without --http: the websocket's event is acked and stored by the
    serving process and answered by its turn process, as in HTTP mode."""
    acked = threading.Event()
    with serve(socket_slack(acked), "127.0.0.1", 0) as websocket, FakeSlackApi() as api, \
            ModelServer() as model:
        threading.Thread(target=websocket.serve_forever, daemon=True).start()
        api.socket_url = f"ws://127.0.0.1:{websocket.socket.getsockname()[1]}/link"
        model.respond("/v1/chat/completions", model_responder(2.0))
        env = {**os.environ, "DOCASSIST_DB": str(db_path), "SLACK_BOT_TOKEN": "xoxb-process",
               "SLACK_SIGNING_SECRET": SECRET, "SLACK_APP_TOKEN": "xapp-process",
               "DOCASSIST_SLACK_API_URL": api.url, **model_env(model.url), **FAST,
               "DOCASSIST_TURN_PROCESSES": "1"}
        log = db_path.with_name("socket-mode.log")
        with log.open("wb") as stderr:
            bot = subprocess.Popen([sys.executable, "-m", "docassist", "slack"], env=env,
                                   cwd=REPO, stdout=subprocess.DEVNULL, stderr=stderr,
                                   start_new_session=True)  # killed with its children
        try:
            assert acked.wait(90), log.read_text(errors="replace")
            [child] = turn_processes(bot.pid)
            # The turn waits on the model, claimed by the child of the serving process.
            assert wait_until(lambda: model.bodies("/v1/chat/completions"), 20)
            [(status, holder)] = inbox(db_path)
            assert status == "pending" and f":{bot.pid}:turns-{child}:" in str(holder)
            assert wait_until(lambda: [s for s, _ in inbox(db_path)] == ["done"], 60)
        finally:
            kill_replica(bot)
        websocket.shutdown()
    [answer] = answers(api)
    assert answer.thread_ts == "654.1"


def test_turn_processes_stop_with_their_server(db_path: Path) -> None:
    with FakeSlackApi() as api:
        for stop in (signal.SIGTERM, signal.SIGKILL):
            port = free_port()
            bot = start_bot(db_path, api, port, SECRET, {**FAST,
                                                         "DOCASSIST_TURN_PROCESSES": "2"})
            children = turn_processes(bot.pid)
            assert len(children) == 2
            bot.send_signal(stop)  # the serving process alone; its children read end of file
            bot.wait(10)
            assert wait_until(partial(none_alive, children), 20), stop


def test_without_turn_processes_the_serving_process_answers(db_path: Path) -> None:
    with FakeSlackApi() as api:
        port = free_port()
        bot = start_bot(db_path, api, port, SECRET, {**FAST, "DOCASSIST_TURN_PROCESSES": "0"})
        sender = EventSender(f"http://127.0.0.1:{port}/slack/events", SECRET)
        try:
            assert turn_processes(bot.pid) == []
            assert "turn_processes" not in httpx.get(f"http://127.0.0.1:{port}/readyz",
                                                     timeout=10).json()["checks"]
            assert sender.send(0, 0).status == 200
            assert wait_until(lambda: len(answers(api)) == 1, 30)
        finally:
            sender.close()
            kill_replica(bot)


def test_a_negative_number_of_turn_processes_is_refused(db_path: Path) -> None:
    env = {**os.environ, "DOCASSIST_DB": str(db_path), "SLACK_BOT_TOKEN": "xoxb-t",
           "SLACK_SIGNING_SECRET": SECRET, "DOCASSIST_TURN_PROCESSES": "-1"}
    done = subprocess.run([sys.executable, "-m", "docassist", "slack", "--http", "--port",
                           str(free_port())], env=env, cwd=REPO, capture_output=True,
                          timeout=60)
    assert done.returncode != 0
    stderr = done.stderr.decode()
    assert "DOCASSIST_TURN_PROCESSES='-1'" in stderr and "Traceback" not in stderr
    assert done.stdout == b""
    with sqlite3.connect(db_path) as connection:  # nothing was stored or answered
        assert connection.execute("SELECT count(*) FROM inbox").fetchone()[0] == 0


def test_socket_mode_without_its_app_token_is_refused_before_anything_starts(
        db_path: Path) -> None:
    env = {**os.environ, "DOCASSIST_DB": str(db_path), "SLACK_BOT_TOKEN": "xoxb-t",
           "SLACK_SIGNING_SECRET": SECRET, "DOCASSIST_TURN_PROCESSES": "1"}
    env.pop("SLACK_APP_TOKEN", None)
    done = subprocess.run([sys.executable, "-m", "docassist", "slack"], env=env, cwd=REPO,
                          capture_output=True, timeout=60)
    assert done.returncode != 0 and done.stdout == b""
    said = done.stderr.decode()
    assert "Socket Mode needs SLACK_APP_TOKEN (or use --http)" in said
    assert "Traceback" not in said and "turn process" not in said
    with sqlite3.connect(db_path) as connection:  # nothing was stored or answered
        assert connection.execute("SELECT count(*) FROM inbox").fetchone()[0] == 0


def test_an_unreadable_report_from_a_turn_process_is_said_and_counts_nothing(
        caplog: pytest.LogCaptureFixture) -> None:
    metrics = Metrics()
    before = metrics.exposition()
    with caplog.at_level(logging.WARNING, logger="docassist.serving.turn_processes"):
        assert replay_line(b'{"kind": "turn_finished", "status": 1', metrics) is None
        assert replay_line(b'{"kind": "reboot"}', metrics) is None
    assert [record.getMessage().startswith("turn process sent an unreadable report")
            for record in caplog.records] == [True, True]
    assert metrics.exposition() == before
    line = TurnFinished(status="answered", decision="answer_from_documents",
                        seconds=0.5).model_dump_json().encode()
    assert isinstance(replay_line(line, metrics), TurnFinished)
    assert b'docassist_turns_total{decision="answer_from_documents",status="answered"} 1.0' \
        in metrics.exposition()
    assert json.loads(line)["kind"] == "turn_finished"


COUNT_WAKES = """
import os, sys
from pathlib import Path
out = Path(sys.argv[1]) / str(os.getpid())
print('{"kind": "ready"}', flush=True)
while chunk := os.read(0, 4096):
    with out.open("ab") as sink:
        sink.write(chunk)
"""
"""A stand-in child: says it is ready, then writes the wake-ups it reads to a file of its
own."""


def test_a_stored_event_wakes_one_child_in_turn_and_passes_over_a_dead_one(
        tmp_path: Path) -> None:
    children = TurnProcesses(2, [sys.executable, "-c", COUNT_WAKES, str(tmp_path)],
                             NULL_OBSERVER)
    children.start()
    try:
        assert children.wait_ready(30)

        def wakes() -> dict[str, int]:
            return {path.name: len(path.read_bytes()) for path in tmp_path.iterdir()}

        for _ in range(4):
            children.wake()
        assert wait_until(lambda: sorted(wakes().values()) == [2, 2])
        dead, survivor = sorted(wakes())
        os.kill(int(dead), signal.SIGKILL)
        assert wait_until(lambda: not alive(int(dead)))
        for _ in range(2):
            children.wake()
        assert wait_until(lambda: wakes()[survivor] == 4)
        assert wakes()[dead] == 2
    finally:
        children.close(timeout=5)


LOWERED = """
import json, os, threading
import numpy  # OpenBLAS starts its worker thread(s) here, as in a turn process
from docassist.serving.turn_processes import lower_priority

def nices():
    return {int(tid): os.getpriority(os.PRIO_PROCESS, int(tid))
            for tid in os.listdir("/proc/self/task")}

stop = threading.Event()
early = threading.Thread(target=stop.wait)
early.start()
before = nices()
lower_priority(0)
unchanged = nices()
lower_priority(5)
later = threading.Thread(target=stop.wait)
later.start()
after = nices()
lower_priority(30)
floor = nices()
stop.set()
print(json.dumps({"main": threading.get_native_id(), "early": early.native_id,
                  "later": later.native_id, "before": before, "unchanged": unchanged,
                  "after": after, "floor": floor}))
"""
"""Threads started before and after `lower_priority`, and each thread's nice value at each
step (JSON)."""


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="threads listed in /proc")
def test_a_turn_process_lowers_the_priority_of_every_thread_not_only_its_own() -> None:
    run = subprocess.run([sys.executable, "-c", LOWERED], capture_output=True, text=True,
                         cwd=REPO, timeout=60, check=True)
    seen = json.loads(run.stdout)
    before = {int(tid): nice for tid, nice in seen["before"].items()}
    after = {int(tid): nice for tid, nice in seen["after"].items()}
    assert {seen["main"], seen["early"]} <= set(before)
    assert {int(tid): nice for tid, nice in seen["unchanged"].items()} == before
    # Every thread that was there (the caller, one started before, numpy's BLAS workers)
    # runs 5 lower now, and one started after takes the priority of its starter.
    assert {tid: after[tid] for tid in before} == {
        tid: min(19, nice + 5) for tid, nice in before.items()}
    assert after[seen["later"]] == after[seen["main"]]
    assert set(seen["floor"].values()) == {19}  # a nice value goes no lower


def test_where_threads_have_no_entry_of_their_own_the_process_is_lowered(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    calls: list[int] = []
    monkeypatch.setattr(os, "nice", calls.append)
    lower_priority(4, tasks=str(tmp_path / "no-such-folder"))
    lower_priority(0, tasks=str(tmp_path / "no-such-folder"))
    assert calls == [4]


BLAS_THREADS = """
import json, sys
import numpy
from threadpoolctl import ThreadpoolController, threadpool_info
from docassist.serving.turn_processes import limit_blas_threads

def threads():
    return sorted({lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"})

before = threads()
limit_blas_threads(int(sys.argv[1]))
after = threads()
with ThreadpoolController().limit(limits=1, user_api="blas"):  # as the embedder's calls do
    numpy.ones((64, 64), dtype=numpy.float32) @ numpy.ones((64, 64), dtype=numpy.float32)
print(json.dumps({"before": before, "after": after, "then": threads()}))
"""
"""numpy's BLAS threads before and after `limit_blas_threads`, and once a limit set around
one call has ended (JSON)."""


def test_a_turn_process_keeps_its_blas_on_the_threads_it_was_given() -> None:
    env = {name: value for name, value in os.environ.items()
           if name not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    run = subprocess.run([sys.executable, "-c", BLAS_THREADS, "1"], capture_output=True,
                         text=True, cwd=REPO, timeout=60, check=True, env=env)
    seen = json.loads(run.stdout)
    assert seen["before"]  # numpy's BLAS was found (by default it uses one thread per core)
    assert seen["after"] == [1]
    assert seen["then"] == [1]  # not the value before: the limit is the process's now
