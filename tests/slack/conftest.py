"""Fixtures of the Slack tests (the rigs themselves are in the root conftest)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from docassist.models.adapters import ModelAnswerer
from docassist.models.base import RetryPolicy
from docassist.models.openai import OpenAIModel
from docassist_testkit.fakes.model_server import ModelServer
from tests.conftest import EngineFactory
from tests.helpers import rules_selector
from tests.slack.rig import SlackRig


@pytest.fixture
def streaming_rig(rig_factory: Any, make_engine: EngineFactory) -> Iterator[
        tuple[SlackRig, ModelServer]]:
    with ModelServer() as server, httpx.Client(timeout=5) as client:
        model = OpenAIModel("m", client, base_url=f"{server.url}/v1",
                            policy=RetryPolicy(attempts=1))
        engine = make_engine(rules_selector(), answerer=ModelAnswerer(model))
        yield rig_factory(engine), server
