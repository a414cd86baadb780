"""Several `docassist slack --http` processes on one database (issue 17): signed events spread
over them, every Slack retry sent to another replica, and one replica killed with SIGKILL in
the middle of the load. Every message is answered exactly once, in order within its thread,
and the database holds exactly the expected state.

The processes are real (`python -m docassist slack --http`); the database they share is one
SQLite file or one PostgreSQL database (a throwaway cluster, docassist_testkit.pg), and
PostgreSQL is also stopped and started under load. The stand-ins are the model server and
Slack's Web API. A short DOCASSIST_INBOX_LEASE makes a dead replica's claims expire within
the test.
"""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from docassist.core import i18n
from docassist_testkit.any_db import rows, unclaimed_and_done
from docassist_testkit.fakes.loopback import free_port, kill_replica
from docassist_testkit.fakes.model_server import ModelServer
from docassist_testkit.fakes.slack_api import FakeSlackApi
from docassist_testkit.pg import PgCluster
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
from tests.conftest import STORES
from tests.slack.rig import SECRET

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


@pytest.fixture(params=STORES)
def shared_db(request: pytest.FixtureRequest, db_path: Path) -> str:
    """The database the replicas share: an SQLite file, or a PostgreSQL database."""
    if request.param == "postgresql":
        return str(request.getfixturevalue("pg_demo_url"))
    return str(db_path)


def start_replicas(db: str, api: FakeSlackApi, env: dict[str, str], logs: Path,
                   count: int = REPLICAS) -> tuple[list[subprocess.Popen[bytes]], list[int]]:
    ports = [free_port() for _ in range(count)]
    with ThreadPoolExecutor(count) as pool:
        processes = list(pool.map(lambda port: start_bot(
            db, api, port, SECRET, env, log=logs / f"slack.{port}.log"), ports))
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


def claims_of(db: Path | str, pid: int) -> int:
    """Unfinished events the process `pid` holds a claim on (its holder names its pid)."""
    return int(rows(db, "SELECT count(*) AS n FROM inbox WHERE status IN "
                        "('pending', 'answered') AND claimed_by LIKE ?",
                    [f"%:{pid}:%"])[0]["n"])


def test_three_replicas_answer_every_message_once_in_order(
        model_server: ModelServer, shared_db: str, tmp_path: Path) -> None:
    db_path = shared_db
    conversations, turns = 9, 3
    expected = conversations * turns
    with FakeSlackApi() as api:
        processes, ports = start_replicas(db_path, api, replica_env(model_server.url),
                                          tmp_path)
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
        model_server: ModelServer, shared_db: str, tmp_path: Path) -> None:
    db_path = shared_db
    conversations, turns = 9, 4
    expected = conversations * turns
    with FakeSlackApi() as api:
        processes, ports = start_replicas(db_path, api, replica_env(model_server.url),
                                          tmp_path)
        sender = ReplicaSender([f"http://127.0.0.1:{port}/slack/events" for port in ports],
                               SECRET)
        run = LoadRun(conversations, turns, think_seconds=1.0)  # sending outlasts the first answers
        # On a busy machine answers can start after every event was acked; sending stops near
        # the end, so the kill is mid-load anyway (the rest is sent after it).
        near_the_end = threading.Event()
        loader = threading.Thread(target=send_load, args=(sender, run, near_the_end),
                                  daemon=True)
        victim = processes[0]

        def mid_load() -> bool:
            if run.acked() >= expected - conversations:
                near_the_end.set()
            return (len(answers(api)) >= 4 and run.acked() >= 12
                    and claims_of(db_path, victim.pid) > 0)

        try:
            loader.start()
            assert wait_for(mid_load)
            kill_replica(victim)  # mid-load: turns running, events arriving
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


def test_postgresql_restarting_under_load_fails_turns_clearly_and_replicas_recover(
        model_server: ModelServer, pg_cluster: PgCluster, pg_demo_url: str,
        tmp_path: Path) -> None:
    """The database goes away while turns run (every connection drops) and comes back:
    a turn that could not be saved is answered with the storage note and nothing of it is
    kept; the replicas reconnect by themselves and answer every acked message once, in
    order (the refused turns run again once their claim ends)."""
    conversations, turns = 6, 4
    expected = conversations * turns
    note = i18n.text("storage_unavailable", "en")
    with FakeSlackApi() as api:
        processes, ports = start_replicas(pg_demo_url, api, replica_env(model_server.url),
                                          tmp_path, count=2)
        sender = ReplicaSender([f"http://127.0.0.1:{port}/slack/events" for port in ports],
                               SECRET)
        run = LoadRun(conversations, turns, think_seconds=0.2)
        loader = threading.Thread(target=send_load, args=(sender, run), daemon=True)
        try:
            loader.start()
            assert wait_for(lambda: len(answers(api)) >= 3)
            pg_cluster.stop("fast")  # connections drop mid-turn
            try:
                assert wait_for(lambda: note in _posted_texts(api), 60)
            finally:
                pg_cluster.start()
            loader.join(SETTLE_SECONDS)
            assert all(process.poll() is None for process in processes)  # no crash
            _retry_until_acked(sender, run, expected)
            assert run.acked() >= expected
            assert wait_for(lambda: _answered(api) >= expected
                            and unclaimed_and_done(pg_demo_url)), (
                rows(pg_demo_url, "SELECT id, event_id, status, claimed_by, claim_expires "
                                  "FROM inbox WHERE status != 'done' ORDER BY id"),
                rows(pg_demo_url, "SELECT event_id, status FROM turns WHERE status != "
                                  "'answered'"), _answered(api))
            time.sleep(1.0)
        finally:
            sender.close()
            stop(processes)
    # Answers carry their result id (feedback buttons); the notes, and the streams of turns
    # that could not be saved (stopped without buttons), carry none.
    delivered = [answer for answer in answers(api) if answer.result_id is not None]
    assert any(post.get("text") == note for post in api.posted())
    assert answer_problems(delivered, conversations, turns) == []
    assert store_problems(pg_demo_url, conversations, turns) == []  # nothing half-written


def _retry_until_acked(sender: ReplicaSender, run: LoadRun, expected: int) -> None:
    """What got a 5xx meanwhile, sent again as Slack's retries are (after about a minute, then
    five): psycopg_pool doubles its reconnect delay through an outage, so a replica may take
    a few seconds after the database is back to take events again."""
    deadline = time.monotonic() + SETTLE_SECONDS
    send_load(sender, run)
    while run.acked() < expected and time.monotonic() < deadline:
        time.sleep(2.0)
        send_load(sender, run)


def _posted_texts(api: FakeSlackApi) -> list[str]:
    return [str(post.get("text") or "") for post in api.posted()]


def _answered(api: FakeSlackApi) -> int:
    return len([answer for answer in answers(api) if answer.result_id is not None])
