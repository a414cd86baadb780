"""A chat model timed for the observer (metrics): each call's latency, and whether it failed
after its retries. Wrapped around a backend only when something observes (`serve`)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

from docassist.core.ports import ChatModel, Message, Observer


class ObservedChatModel:
    def __init__(self, inner: ChatModel, observer: Observer) -> None:
        self.inner = inner
        self.observer = observer
        self.backend = inner.backend
        self.model = inner.model

    def _report(self, started: float, failed: bool) -> None:
        self.observer.model_called(self.backend, time.perf_counter() - started, failed)

    def chat(self, messages: list[Message], schema: dict[str, Any] | None = None) -> str:
        started = time.perf_counter()
        try:
            reply = self.inner.chat(messages, schema)
        except Exception:
            self._report(started, failed=True)
            raise
        self._report(started, failed=False)
        return reply

    def chat_stream(self, messages: list[Message]) -> Iterator[str]:
        """Timed until the stream ends (the whole answer), failed if it broke off."""
        started = time.perf_counter()
        try:
            yield from self.inner.chat_stream(messages)
        except Exception:
            self._report(started, failed=True)
            raise
        self._report(started, failed=False)

    def embed(self, texts: list[str]) -> list[list[float]]:
        started = time.perf_counter()
        try:
            vectors = self.inner.embed(texts)
        except Exception:
            self._report(started, failed=True)
            raise
        self._report(started, failed=False)
        return vectors
