"""`docassist teams` runs its turns in turn processes, as Slack does: the serving process
stores and acks, its `turn-worker` children answer through the connector. A caller that waits
for the replies in its request (expectReplies) is answered by the serving process itself,
which claims that event in the write that stores it; one queued behind an unfinished
activity of its conversation is answered after it, through the connector. Real processes on
loopback: the serving process, its children, the fake connector and the stand-in model."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from docassist_testkit.fakes.loopback import (
    free_port,
    kill_replica,
    turn_processes,
    wait_healthy,
    wait_until,
)
from docassist_testkit.fakes.model_server import ModelServer
from docassist_testkit.fakes.teams_connector import FakeConnector
from docassist_testkit.slack_load import model_env, model_responder
from tests.conftest import REPO
from tests.teams.process import activity, teams_env

CHAT = "/v1/chat/completions"
FAST = {"DOCASSIST_EMBEDDER": "none", "DOCASSIST_RETRIEVER": "bm25"}


@dataclass
class Rig:
    connector: FakeConnector
    server: subprocess.Popen[bytes]
    url: str
    """Its POST /api/messages."""


@pytest.fixture
def rig(db_path: Path) -> Iterator[Rig]:
    """`docassist teams` with one turn process, a connector and a model that takes 2 s."""
    with FakeConnector() as connector, ModelServer() as model:
        model.respond(CHAT, model_responder(2.0))
        port = free_port()
        server = start(db_path, port, model.url)
        try:
            yield Rig(connector, server, f"http://127.0.0.1:{port}/api/messages")
        finally:
            kill_replica(server)


def start(db: Path, port: int, model_url: str) -> subprocess.Popen[bytes]:
    log = db.with_name(f"teams.{port}.log")
    env = teams_env(db, DOCASSIST_TEAMS_ANONYMOUS="true", DOCASSIST_TURN_PROCESSES="1",
                    **FAST, **model_env(model_url))
    with log.open("wb") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "docassist", "teams", "--port", str(port)], env=env,
            cwd=REPO, stdout=subprocess.DEVNULL, stderr=stderr, start_new_session=True)
    return wait_healthy(process, port, lambda: log.read_text(errors="replace"), 90)


def claimed(db: Path) -> bool:
    """Some event is claimed (its turn waits on the stand-in model)."""
    return any(holder for _, holder in holders(db))


def holders(db: Path) -> list[tuple[str, str | None]]:
    with sqlite3.connect(db) as connection:
        return [(str(row[0]), row[1]) for row in connection.execute(
            "SELECT status, claimed_by FROM inbox ORDER BY id")]


def test_turns_run_in_the_turn_process_and_replies_go_through_the_connector(
        db_path: Path, rig: Rig) -> None:
    [child] = turn_processes(rig.server.pid)
    response = httpx.post(rig.url, timeout=30, json=activity(
        rig.connector, "How do I renew the TLS certificate?", "tp-1"))
    assert response.status_code in (200, 202)
    # The turn waits on the model, claimed by the child of the serving process.
    assert wait_until(lambda: claimed(db_path), 20)
    [(status, holder)] = holders(db_path)
    assert status == "pending" and f":{rig.server.pid}:turns-{child}:" in str(holder)
    assert wait_until(lambda: [s for s, _ in holders(db_path)] == ["done"], 60)
    assert wait_until(lambda: rig.connector.messages(), 10)
    assert "TLS" in rig.connector.messages()[-1].text


def test_an_expect_replies_turn_runs_in_the_serving_process_and_answers_inline(
        db_path: Path, rig: Rig) -> None:
    replies: list[httpx.Response] = []
    asked = threading.Thread(target=lambda: replies.append(httpx.post(
        rig.url, timeout=60, json=activity(rig.connector, "How do I renew the TLS "
                                           "certificate?", "er-1",
                                           deliveryMode="expectReplies"))))
    asked.start()
    assert wait_until(lambda: claimed(db_path), 20)
    # Claimed by the serving process itself (its name, no turn process's).
    [(status, holder)] = holders(db_path)
    assert status == "pending" and f":{rig.server.pid}:" in str(holder)
    assert ":teams:" in str(holder) and "turns-" not in str(holder)
    asked.join(60)
    [reply] = replies[0].json()["activities"]
    assert "TLS" in str(reply)
    assert wait_until(lambda: [s for s, _ in holders(db_path)] == ["done"], 10)
    assert rig.connector.sent == []  # nothing went through the connector


def test_an_expect_replies_activity_behind_its_conversation_is_answered_after_it(
        db_path: Path, rig: Rig) -> None:
    """Order per conversation wins over the inline answer: the request returns without the
    replies, which the turn process posts after the earlier activity's."""
    httpx.post(rig.url, timeout=30, json=activity(
        rig.connector, "How do I renew the TLS certificate?", "q-1"))
    assert wait_until(lambda: claimed(db_path), 20)
    second = httpx.post(rig.url, timeout=30, json=activity(
        rig.connector, "How do I restore a database backup?", "q-2",
        deliveryMode="expectReplies"))
    assert second.status_code == 200
    assert second.json().get("activities", []) == []
    assert wait_until(lambda: [s for s, _ in holders(db_path)] == ["done"] * 2, 60)
    assert wait_until(lambda: len(rig.connector.messages()) >= 2, 10)
    texts = [sent.text for sent in rig.connector.messages()]
    assert "TLS" in texts[0] and "backup" in texts[-1].lower()


def test_a_turn_process_for_an_unknown_platform_refuses_to_start(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "docassist", "turn-worker", "--platforms",
                           "teams,matrix"], env=teams_env(tmp_path / "x.db"), cwd=REPO,
                          capture_output=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 2
    assert "unknown platform matrix: use slack or teams" in done.stderr.decode()
    assert b"Traceback" not in done.stderr
    assert not (tmp_path / "x.db").exists()  # nothing opened, no turn run


def test_a_teams_turn_process_without_teams_settings_says_which_are_missing(
        tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "docassist", "turn-worker", "--platforms",
                           "teams"], env=teams_env(tmp_path / "x.db", **FAST), cwd=REPO,
                          capture_output=True, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 2
    assert "DOCASSIST_TEAMS_APP_ID" in done.stderr.decode()
    assert b"Traceback" not in done.stderr
    assert done.stdout == b""  # no report for /metrics: it never became ready
