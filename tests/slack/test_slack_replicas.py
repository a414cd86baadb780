"""Several `docassist slack --http` processes on one database (issue 17): signed events spread
over them, every Slack retry sent to another replica, and one replica killed with SIGKILL in
the middle of the load. Every message is answered exactly once, in order within its thread,
and the database holds exactly the expected state.

The processes are real (`python -m docassist slack --http`), the database is one SQLite
file they share; the stand-ins are the model server and Slack's Web API. A short
DOCASSIST_INBOX_LEASE makes a dead replica's claims expire within the test.
"""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tests.loopback import free_port
from tests.model_server import ModelServer
from tests.slack.test_slack_http import SECRET
from tests.slack_api import FakeSlackApi
from tests.slack_load import (
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

CHAT = "/v1/chat/completions"
REPLICAS = 3
SETTLE_SECONDS = 120.0
LEASE_SECONDS = "2"
TURNS_PER_REPLICA = "4"


@pytest.fixture
def model_server() -> Iterator[ModelServer]:
    with ModelServer() as server:
        server.respond(CHAT, model_responder())
        yield server


def replica_env(model_url: str, **extra: str) -> dict[str, str]:
    """Light processes (BM25 only: no embedding model to load three times), a short lease."""
    return {**model_env(model_url), "DOCASSIST_EMBEDDER": "none",
            "DOCASSIST_RETRIEVER": "bm25", "DOCASSIST_INBOX_LEASE": LEASE_SECONDS,
            "DOCASSIST_INBOX_WORKERS": TURNS_PER_REPLICA, **extra}


def start_replicas(db: Path, api: FakeSlackApi, env: dict[str, str],
                   count: int = REPLICAS) -> tuple[list[subprocess.Popen[bytes]], list[int]]:
    ports = [free_port() for _ in range(count)]
    with ThreadPoolExecutor(count) as pool:
        processes = list(pool.map(lambda port: start_bot(db, api, port, SECRET, env), ports))
    return processes, ports


def stop(processes: list[subprocess.Popen[bytes]]) -> None:
    for process in processes:
        if process.poll() is None:
            process.terminate()
    for process in processes:
        process.wait(15)


def wait_for(condition: Callable[[], Any], seconds: float = SETTLE_SECONDS) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return bool(condition())


def unclaimed_and_done(db: Path) -> bool:
    with sqlite3.connect(db) as connection:
        return connection.execute(
            "SELECT count(*) FROM inbox WHERE status != 'done' OR claimed_by IS NOT NULL"
        ).fetchone()[0] == 0


def claims_of(db: Path, pid: int) -> int:
    """Unfinished events the process `pid` holds a claim on (its holder names its pid)."""
    with sqlite3.connect(db) as connection:
        return int(connection.execute(
            "SELECT count(*) FROM inbox WHERE status IN ('pending', 'answered') "
            "AND claimed_by LIKE ?", [f"%:{pid}:%"]).fetchone()[0])


def test_three_replicas_answer_every_message_once_in_order(
        model_server: ModelServer, db_path: Path) -> None:
    conversations, turns = 9, 3
    expected = conversations * turns
    with FakeSlackApi() as api:
        processes, ports = start_replicas(db_path, api, replica_env(model_server.url))
        sender = ReplicaSender([f"http://127.0.0.1:{port}/slack/events" for port in ports],
                               SECRET)
        try:
            run = LoadRun(conversations, turns)
            send_load(sender, run)
            assert run.acked() == expected
            # Slack retries every event, each to a replica other than the first delivery's.
            for conversation in range(conversations):
                for turn in range(turns):
                    assert sender.send(conversation, turn, retry=1).status == 200
            assert wait_for(lambda: len(answers(api)) >= expected
                            and unclaimed_and_done(db_path))
            time.sleep(1.0)  # a late duplicate would show up now
        finally:
            sender.close()
            stop(processes)
    delivered = answers(api)
    assert answer_problems(delivered, conversations, turns) == []
    assert len(delivered) == expected and answers(api, complete=False) == []
    assert store_problems(db_path, conversations, turns) == []
    selections = [body for body in model_server.bodies(CHAT) if "response_format" in body]
    assert len(selections) == expected  # no turn ran twice, on any replica


def test_a_replica_killed_mid_load_loses_no_acked_event(
        model_server: ModelServer, db_path: Path) -> None:
    conversations, turns = 9, 4
    expected = conversations * turns
    with FakeSlackApi() as api:
        processes, ports = start_replicas(db_path, api, replica_env(model_server.url))
        sender = ReplicaSender([f"http://127.0.0.1:{port}/slack/events" for port in ports],
                               SECRET)
        run = LoadRun(conversations, turns, think_seconds=0.3)
        loader = threading.Thread(target=send_load, args=(sender, run), daemon=True)
        victim = processes[0]
        try:
            loader.start()
            assert wait_for(lambda: len(answers(api)) >= 4 and run.acked() >= 12
                            and claims_of(db_path, victim.pid) > 0)
            victim.send_signal(signal.SIGKILL)  # mid-load: turns running, events arriving
            victim.wait(10)
            assert claims_of(db_path, victim.pid) > 0  # left behind: only their lease ends
            acked_at_kill = {sent.event_id for sent in run.sent if sent.status == 200}
            assert len(acked_at_kill) < expected  # truly mid-load
            sender.dead.add(0)  # the load balancer notices
            loader.join(SETTLE_SECONDS)
            send_load(sender, run)  # the rest; unacked ones again, as Slack's retries
            assert run.acked() >= expected
            assert wait_for(lambda: len(answers(api)) >= expected
                            and unclaimed_and_done(db_path))
            time.sleep(1.0)
        finally:
            sender.close()
            stop(processes)
    delivered = answers(api)
    assert answer_problems(delivered, conversations, turns) == []
    assert store_problems(db_path, conversations, turns) == []
    answered = {f"EvLoad-{c}-{t}" for answer in delivered for c, t in answer.turns()}
    assert acked_at_kill <= answered
    # A stream the killed replica had started stays a fragment (at most one per turn it
    # was running); the answer came again, whole, from another replica.
    assert len(answers(api, complete=False)) <= int(TURNS_PER_REPLICA)
