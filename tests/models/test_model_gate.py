"""A process keeps at most its share of DOCASSIST_MODEL_CONCURRENCY model requests open,
however many turns it runs (models/gate.py), and runs twice as many turns as requests."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from docassist.config import Settings
from docassist.core.ports import Message
from docassist.models.gate import GatedChatModel, ModelGate


class SlowModel:
    """A stand-in for a model server's client that counts the requests open at once."""

    backend = "stand-in"
    model = "slow"

    def __init__(self) -> None:
        self.open = 0
        self.peak = 0
        self._lock = threading.Lock()

    def _request(self) -> None:
        with self._lock:
            self.open += 1
            self.peak = max(self.peak, self.open)
        time.sleep(0.02)
        with self._lock:
            self.open -= 1

    def chat(self, messages: list[Message], schema: dict[str, Any] | None = None) -> str:
        self._request()
        return "ok"

    def chat_stream(self, messages: list[Message]) -> Iterator[str]:
        self._request()
        yield "ok"

    def embed(self, texts: list[str]) -> list[list[float]]:
        self._request()
        return [[1.0] for _ in texts]


def test_requests_beyond_the_gate_wait_their_turn() -> None:
    inner = SlowModel()
    gated = GatedChatModel(inner, ModelGate(3))
    calls = [lambda: gated.chat([]), lambda: "".join(gated.chat_stream([])),
             lambda: gated.embed(["x"])]
    with ThreadPoolExecutor(max_workers=12) as pool:
        results = list(pool.map(lambda n: calls[n % 3](), range(36)))
    assert inner.peak == 3 and inner.open == 0
    assert results.count("ok") == 24


def test_a_failed_request_gives_its_slot_back() -> None:
    class Broken(SlowModel):
        def chat(self, messages: list[Message], schema: dict[str, Any] | None = None) -> str:
            raise ConnectionError("model server down")

    gated = GatedChatModel(Broken(), ModelGate(1))
    for _ in range(3):  # with the slot leaked, the second call would wait forever
        with pytest.raises(ConnectionError):
            gated.chat([])
    assert "".join(gated.chat_stream([])) == "ok"


@pytest.mark.parametrize(("env", "turns", "per_process", "requests"), [
    ({"DOCASSIST_MODEL_CONCURRENCY": "32", "DOCASSIST_TURN_PROCESSES": "2"}, 64, 32, 16),
    ({"DOCASSIST_MODEL_CONCURRENCY": "5", "DOCASSIST_TURN_PROCESSES": "2"}, 10, 5, 3),
    ({"DOCASSIST_MODEL_CONCURRENCY": "12", "DOCASSIST_INBOX_WORKERS": "2",
      "DOCASSIST_TURN_PROCESSES": "0"}, 2, 2, 12),
])
def test_a_replica_runs_twice_as_many_turns_as_model_requests(
        monkeypatch: pytest.MonkeyPatch, env: dict[str, str], turns: int, per_process: int,
        requests: int) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    settings = Settings()
    assert settings.turns_in_flight() == turns
    assert settings.turns_per_process() == per_process
    assert settings.model_requests_per_process() == requests
    assert settings.model_config_for().gate is not None
    assert settings.model_config_for().gate.requests == requests  # type: ignore[union-attr]


def test_the_gate_says_when_a_request_waits_for_a_slot() -> None:
    """What the inbox reads before it claims more (core.ports.ModelBacklog)."""
    gate = ModelGate(1)
    assert not gate.queued()
    with gate:
        assert not gate.queued()  # the one slot is taken; nobody waits yet
        def wait_for_a_slot() -> None:
            with gate:
                pass

        waiter = threading.Thread(target=wait_for_a_slot)
        waiter.start()
        deadline = time.monotonic() + 10
        while not gate.queued() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert gate.queued()
    waiter.join(10)
    assert not waiter.is_alive() and not gate.queued()
