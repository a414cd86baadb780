"""At most N model requests of this process at once (its share of DOCASSIST_MODEL_CONCURRENCY).

A turn spends part of its life outside the model (retrieval, storage, posting), so a replica
runs more turns than it keeps model requests (Settings.turns_in_flight); this gate keeps
the requests themselves within the model server's capacity. One gate per process, shared by
every chat model built from one ModelConfig (selector, answerer, shadow), around the call:
a request waits here, not in the model server's queue, and the time it waits is not counted
as the model's latency (metrics)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

from docassist.core.ports import ChatModel, Message


class ModelGate:
    def __init__(self, requests: int) -> None:
        self.requests = requests
        self._slots = threading.BoundedSemaphore(requests)
        self._lock = threading.Lock()
        self._waiting = 0

    def __enter__(self) -> None:
        if self._slots.acquire(blocking=False):
            return
        with self._lock:
            self._waiting += 1
        try:
            self._slots.acquire()
        finally:
            with self._lock:
                self._waiting -= 1

    def queued(self) -> bool:
        """A request waits for a slot (core.ports.ModelBacklog): this process has turns enough
        to keep its share busy, so it claims no more (serving/inbox.py)."""
        return self._waiting > 0

    def __exit__(self, *_exc: object) -> None:
        self._slots.release()


class GatedChatModel:
    def __init__(self, inner: ChatModel, gate: ModelGate) -> None:
        self.inner = inner
        self.gate = gate
        self.backend = inner.backend
        self.model = inner.model

    def chat(self, messages: list[Message], schema: dict[str, Any] | None = None) -> str:
        with self.gate:
            return self.inner.chat(messages, schema)

    def chat_stream(self, messages: list[Message]) -> Iterator[str]:
        """The slot is held until the stream ends (the request is open until then)."""
        with self.gate:
            yield from self.inner.chat_stream(messages)

    def embed(self, texts: list[str]) -> list[list[float]]:
        with self.gate:
            return self.inner.embed(texts)
