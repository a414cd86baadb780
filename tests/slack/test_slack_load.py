"""Slack under load, and killed in the middle of it (CI sizes; bench/load.py runs 50 × 10).

Conversations × turns go through the real HTTP path as signed Events API requests, a
stand-in model answers every selection and answer after MODEL_DELAY_SECONDS, and the fake
Slack Web API records the posts. No timing is asserted: bench/load.py prints the figures.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from docassist.models.adapters import ModelAnswerer, ModelSelector
from docassist.models.base import RetryPolicy
from docassist.models.openai import OpenAIModel
from tests.conftest import EngineFactory
from tests.model_server import ModelServer
from tests.slack.test_slack_http import SECRET
from tests.slack_load import (
    EventSender,
    LoadRun,
    answer_problems,
    answers,
    model_responder,
    send_load,
    store_problems,
)

CONVERSATIONS = 10
TURNS = 3
CHAT = "/v1/chat/completions"
SETTLE_SECONDS = 90.0


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
        sender = EventSender(rig.url, SECRET, CONVERSATIONS)
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
