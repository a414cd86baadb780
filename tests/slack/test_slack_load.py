"""Slack under load, and killed in the middle of it (CI sizes; bench/load.py runs 50 × 10).

Conversations × turns go through the real HTTP path as signed Events API requests, a
stand-in model answers every selection and answer after MODEL_DELAY_SECONDS, and the fake
Slack Web API records the posts. No timing is asserted: bench/load.py prints the figures.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from docassist.models.adapters import ModelAnswerer, ModelSelector
from docassist.models.base import RetryPolicy
from docassist.models.openai import OpenAIModel
from docassist_testkit.fakes.loopback import free_port, kill_replica
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
from tests.conftest import EngineFactory
from tests.slack.rig import SECRET, SlackRig, mention

INBOX_WORKERS = 4
"""The per-process cap on turns (DOCASSIST_INBOX_WORKERS) this load runs under."""

CONVERSATIONS = 10
TURNS = 3
CHAT = "/v1/chat/completions"
SETTLE_SECONDS = 90.0
THINK_SECONDS = 0.25
"""Crash test: a conversation's turns are spread out, so the kill lands while sending."""


@pytest.fixture
def model_server() -> Iterator[ModelServer]:
    with ModelServer() as server:
        server.respond(CHAT, model_responder())
        yield server


def test_every_message_is_answered_once_in_order_under_load(
        rig_factory: Any, make_engine: EngineFactory, model_server: ModelServer,
        db_path: Path) -> None:
    with httpx.Client(timeout=10) as client:
        model = OpenAIModel("load", client, base_url=f"{model_server.url}/v1",
                            policy=RetryPolicy(attempts=1))
        rig = rig_factory(make_engine(ModelSelector(model), answerer=ModelAnswerer(model)))
        sender = EventSender(rig.url, SECRET)
        run = LoadRun(CONVERSATIONS, TURNS)
        send_load(sender, run)
        assert run.acked() == CONVERSATIONS * TURNS  # every event acked at the first try
        assert rig.adapter.worker.wait_idle(SETTLE_SECONDS)
        # Slack retries and double deliveries (`message` + `app_mention`) change nothing.
        for conversation in range(CONVERSATIONS):
            for turn in range(TURNS):
                assert sender.send(conversation, turn, retry=1).status == 200
        assert rig.adapter.worker.wait_idle(SETTLE_SECONDS)
        sender.close()
    delivered = answers(rig.api)
    assert answer_problems(delivered, CONVERSATIONS, TURNS) == []
    assert len(delivered) == CONVERSATIONS * TURNS and answers(rig.api, complete=False) == []
    assert store_problems(db_path, CONVERSATIONS, TURNS) == []
    selections = [body for body in model_server.bodies(CHAT) if "response_format" in body]
    assert len(selections) == CONVERSATIONS * TURNS  # nothing was asked twice


def _unfinished(db_path: Path, *statuses: str) -> int:
    wanted = statuses or ("pending", "answered")
    with sqlite3.connect(db_path) as connection:
        return int(connection.execute(
            f"SELECT COUNT(*) FROM inbox WHERE status IN ({', '.join('?' * len(wanted))})",
            wanted).fetchone()[0])


def _wait(condition: Any, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return bool(condition())


@pytest.mark.long
def test_killed_mid_load_every_acked_event_is_answered_once_after_restart(
        model_server: ModelServer, db_path: Path) -> None:
    conversations, turns = 8, 4
    expected = conversations * turns
    with FakeSlackApi() as api:
        port = free_port()
        # At most INBOX_WORKERS turns at a time (the fragment bound below); a short lease, so
        # the restarted process takes over the killed one's claims soon.
        env = {**model_env(model_server.url), "DOCASSIST_INBOX_WORKERS": str(INBOX_WORKERS),
               "DOCASSIST_INBOX_LEASE": "3"}
        first = start_bot(db_path, api, port, SECRET, env)
        sender = EventSender(f"http://127.0.0.1:{port}/slack/events", SECRET)
        run = LoadRun(conversations, turns, think_seconds=THINK_SECONDS)
        held_back = threading.Event()  # the last turns wait if answers are slow to start
        loader = threading.Thread(target=send_load, args=(sender, run, held_back), daemon=True)
        try:
            loader.start()
            # Kill once answers are going out while events are still arriving (on a busy
            # machine the sender pauses before the end, so the kill is mid-load anyway).
            def mid_load() -> bool:
                if run.acked() >= expected - 8:
                    held_back.set()
                return len(answers(api)) >= 3 and run.acked() >= 10

            assert _wait(mid_load, SETTLE_SECONDS)
        finally:
            kill_replica(first)
        loader.join(SETTLE_SECONDS)
        acked_before = {sent.event_id for sent in run.sent if sent.status == 200}
        unfinished_at_kill = _unfinished(db_path)
        answered_at_kill = _unfinished(db_path, "answered")
        assert len(acked_before) < expected and unfinished_at_kill > 0  # truly mid-load
        assert store_problems(db_path, conversations, turns)  # (not everything done yet)

        second = start_bot(db_path, api, port, SECRET, env)
        try:
            sender.url = f"http://127.0.0.1:{port}/slack/events"
            send_load(sender, run)  # the rest; unacked ones again with X-Slack-Retry-Num
            assert run.acked() >= expected
            assert _wait(lambda: len(answers(api)) >= expected and _unfinished(db_path) == 0,
                         SETTLE_SECONDS)
        finally:
            sender.close()
            second.terminate()
            second.wait(10)
    delivered = answers(api)
    assert answer_problems(delivered, conversations, turns) == []
    assert store_problems(db_path, conversations, turns) == []
    # A stream the killed process had started stays a fragment; its answer came again whole.
    assert len(answers(api, complete=False)) <= INBOX_WORKERS
    answered_turns = {f"EvLoad-{c}-{t}" for answer in delivered for c, t in answer.turns()}
    assert acked_before <= answered_turns
    if answered_at_kill:  # answers committed, maybe posted: the thread was looked at first
        assert len(api.posted("conversations.replies")) >= answered_at_kill


def test_a_resumed_answer_already_in_the_thread_is_not_posted_again(rig: SlackRig) -> None:
    """The process died after posting and before marking the event done."""
    rig.store.save_raw = True  # done rows keep what an `answered` row holds, to turn them back
    rig.event(mention("How do I renew the TLS certificate?", "2000.1"), "EvPosted")
    rig.event(mention("How do I renew the TLS certificate?", "2001.1"), "EvNotPosted")
    rig.api.calls = [call for call in rig.api.calls
                     if call.body.get("thread_ts") != "2001.1"]  # that post never happened
    with sqlite3.connect(rig.store.path) as connection:  # as the killed process left them
        connection.execute("UPDATE inbox SET status = 'answered'")
    assert rig.adapter.worker.resume() == 2
    assert rig.adapter.worker.wait_idle()
    threads = [post["thread_ts"] for post in rig.api.posted()]
    assert threads == ["2000.1", "2001.1"]  # only the missing answer was posted
    assert {row["status"] for row in rig.store.inbox_rows()} == {"done"}
    assert sorted(call.body["ts"] for call in rig.api.calls
                  if call.method == "conversations.replies") == ["2000.1", "2001.1"]
