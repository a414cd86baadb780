"""Turns wait for the model, not for each other (issue 25): one `docassist slack --http`
process keeps up to DOCASSIST_MODEL_CONCURRENCY turns in flight (capped by
DOCASSIST_INBOX_WORKERS when set), and still answers every message exactly once, in order
within its thread. The stand-in model counts the requests it was serving at once."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from docassist_testkit.any_db import unclaimed_and_done
from docassist_testkit.fakes.loopback import free_port, wait_until
from docassist_testkit.fakes.model_server import ModelServer
from docassist_testkit.fakes.slack_api import FakeSlackApi
from docassist_testkit.model_capacity import CapacityModel
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
from tests.slack.rig import SECRET

CHAT = "/v1/chat/completions"
CONVERSATIONS, TURNS = 16, 3


@pytest.fixture
def model() -> Iterator[tuple[ModelServer, CapacityModel]]:
    capacity = CapacityModel(model_responder(delay=0.0), capacity=64, latency=0.3)
    with ModelServer() as server:
        server.respond(CHAT, capacity)
        yield server, capacity


@pytest.mark.parametrize(("settings", "most"), [
    ({"DOCASSIST_MODEL_CONCURRENCY": "12"}, 12),
    ({"DOCASSIST_MODEL_CONCURRENCY": "12", "DOCASSIST_INBOX_WORKERS": "2"}, 2),
])
def test_turns_in_flight_up_to_the_setting_in_order_and_once(
        model: tuple[ModelServer, CapacityModel], db_path: Path, settings: dict[str, str],
        most: int) -> None:
    server, capacity = model
    expected = CONVERSATIONS * TURNS
    with FakeSlackApi() as api:
        port = free_port()
        env = {**model_env(server.url), "DOCASSIST_EMBEDDER": "none",
               "DOCASSIST_RETRIEVER": "bm25", **settings}
        process = start_bot(db_path, api, port, SECRET, env)
        sender = EventSender(f"http://127.0.0.1:{port}/slack/events", SECRET)
        try:
            run = LoadRun(CONVERSATIONS, TURNS)
            send_load(sender, run)
            assert run.acked() == expected
            assert wait_until(lambda: len(answers(api)) >= expected
                              and unclaimed_and_done(db_path), 180)
        finally:
            sender.close()
            process.terminate()
            process.wait(15)
    assert answer_problems(answers(api), CONVERSATIONS, TURNS) == []
    assert len(answers(api)) == expected
    assert store_problems(db_path, CONVERSATIONS, TURNS) == []
    assert capacity.completed == 2 * expected  # a selection and an answer per turn, once
    # Turns overlapped up to the setting and never beyond it (a turn has one request out).
    assert 1 < capacity.peak <= most
    if most > 2:
        assert capacity.peak > 4  # more than the four workers before issue 25
