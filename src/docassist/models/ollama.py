"""Ollama: `/api/chat` (with `format` = a JSON Schema for constrained output; NDJSON
streaming) and `/api/embed`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, Final

import httpx

from docassist.core.errors import ModelResponseError
from docassist.models.base import Message, RetryPolicy, dig, json_body, send_with_retries

DEFAULT_OLLAMA_URL: Final = "http://127.0.0.1:11434"


class OllamaModel:
    backend = "ollama"

    def __init__(self, model: str, client: httpx.Client, base_url: str = DEFAULT_OLLAMA_URL,
                 policy: RetryPolicy | None = None) -> None:
        self.model = model
        self.client = client
        self.base_url = base_url.rstrip("/")
        self.policy = policy or RetryPolicy()

    def _post(self, path: str, body: dict[str, Any], *, stream: bool = False) -> httpx.Response:
        request = self.client.build_request("POST", f"{self.base_url}{path}", json=body)
        return send_with_retries(lambda: self.client.send(request, stream=stream), self.policy,
                                 f"ollama {path}")

    def chat(self, messages: list[Message], schema: dict[str, Any] | None = None) -> str:
        body: dict[str, Any] = {"model": self.model, "messages": messages, "stream": False,
                                "options": {"temperature": 0}}
        if schema is not None:
            body["format"] = schema
        data = json_body(self._post("/api/chat", body), "ollama /api/chat")
        content = dig(data, "message", "content")
        if not isinstance(content, str):
            raise ModelResponseError("ollama /api/chat: no message.content", json.dumps(data))
        return content

    def chat_stream(self, messages: list[Message]) -> Iterator[str]:
        body = {"model": self.model, "messages": messages, "stream": True,
                "options": {"temperature": 0}}
        response = self._post("/api/chat", body, stream=True)
        try:
            for line in response.iter_lines():
                if not line.strip():
                    continue
                try:
                    event = json.loads(line)
                except ValueError as error:
                    raise ModelResponseError("ollama stream: a line is not JSON", line) from error
                delta = dig(event, "message", "content")
                if isinstance(delta, str) and delta:
                    yield delta
                if event.get("done") is True:
                    return
        finally:
            response.close()

    def embed(self, texts: list[str]) -> list[list[float]]:
        data = json_body(self._post("/api/embed", {"model": self.model, "input": texts}),
                         "ollama /api/embed")
        vectors = data.get("embeddings")
        if not isinstance(vectors, list) or len(vectors) != len(texts):
            raise ModelResponseError("ollama /api/embed: wrong embeddings", json.dumps(data))
        return [[float(x) for x in vector] for vector in vectors]
