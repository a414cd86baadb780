"""Recorded model sessions: answers keyed by the SHA-256 of the canonical request.

Recording wraps a real backend and appends each request and answer to a JSONL file.
Replaying answers from that file only: a request it has not seen is a `ReplayMissError`
naming its key — never a silent live call. The key covers what the model is asked (kind,
messages, schema), so changing a prompt or a tool description makes a clear miss.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from docassist.core.errors import ReplayMissError
from docassist.models.base import ChatModel, Message


def request_key(kind: str, payload: Any) -> str:
    canonical = json.dumps({"kind": kind, "payload": payload}, sort_keys=True,
                           ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class ReplayModel:
    backend = "replay"

    def __init__(self, path: Path, inner: ChatModel | None = None) -> None:
        """Replay from `path`; with `inner`, call it and record into `path` instead."""
        self.path = path
        self.inner = inner
        self.model = inner.model if inner else path.name
        self._lock = threading.Lock()
        self._answers: dict[str, Any] = {}
        if path.exists():
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    entry = json.loads(line)
                    self._answers[entry["key"]] = entry["response"]

    def _answer(self, kind: str, payload: Any, live: Any) -> Any:
        key = request_key(kind, payload)
        with self._lock:
            if key in self._answers:
                return self._answers[key]
        if self.inner is None:
            raise ReplayMissError(f"replay miss: no recorded answer for request {key} "
                                  f"({kind}) in {self.path}")
        response = live()
        with self._lock:
            self._answers[key] = response
            with self.path.open("a", encoding="utf-8") as file:
                file.write(json.dumps({"key": key, "request": {"kind": kind, "payload": payload},
                                       "response": response}, ensure_ascii=False) + "\n")
        return response

    def chat(self, messages: list[Message], schema: dict[str, Any] | None = None) -> str:
        inner = self.inner
        answer = self._answer("chat", {"messages": messages, "schema": schema},
                              lambda: inner.chat(messages, schema) if inner else None)
        return str(answer)

    def chat_stream(self, messages: list[Message]) -> Iterator[str]:
        inner = self.inner
        deltas = self._answer("chat_stream", {"messages": messages},
                              lambda: list(inner.chat_stream(messages)) if inner else None)
        yield from (str(delta) for delta in deltas)

    def embed(self, texts: list[str]) -> list[list[float]]:
        inner = self.inner
        vectors = self._answer("embed", {"texts": texts},
                               lambda: inner.embed(texts) if inner else None)
        return [[float(x) for x in vector] for vector in vectors]
