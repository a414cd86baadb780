"""OpenAI-compatible servers: `/chat/completions` (json_schema response_format, SSE
streaming) and `/embeddings`. Works with OpenAI, Azure OpenAI (deployment URLs, `api-key`
header, `api-version`), vLLM, llama.cpp server and LM Studio."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, Final

import httpx

from docassist.core.errors import ModelResponseError
from docassist.models.base import Message, RetryPolicy, dig, json_body, send_with_retries

DEFAULT_OPENAI_URL: Final = "https://api.openai.com/v1"
MAX_ANSWER_TOKENS: Final = 800
MAX_SELECTION_TOKENS: Final = 300
"""Bounds generation; the schema's maxLength bounds each string, this bounds the rest."""


class OpenAIModel:
    backend = "openai"

    def __init__(
        self,
        model: str,
        client: httpx.Client,
        *,
        base_url: str = DEFAULT_OPENAI_URL,
        api_key: str | None = None,
        azure_api_version: str | None = None,
        policy: RetryPolicy | None = None,
        answer_max_tokens: int = MAX_ANSWER_TOKENS,
        selection_max_tokens: int = MAX_SELECTION_TOKENS,
    ) -> None:
        self.model = model
        self.answer_max_tokens = answer_max_tokens
        self.selection_max_tokens = selection_max_tokens
        self.client = client
        self.base_url = base_url.rstrip("/")
        self.azure_api_version = azure_api_version
        self.policy = policy or RetryPolicy()
        self._headers: dict[str, str] = {}
        if api_key:
            # Azure wants `api-key`; everyone else a bearer token.
            self._headers = ({"api-key": api_key} if azure_api_version
                             else {"Authorization": f"Bearer {api_key}"})

    def url(self, endpoint: str) -> str:
        if self.azure_api_version:
            return (f"{self.base_url}/openai/deployments/{self.model}/{endpoint}"
                    f"?api-version={self.azure_api_version}")
        return f"{self.base_url}/{endpoint}"

    def _post(self, endpoint: str, body: dict[str, Any], *, stream: bool = False
              ) -> httpx.Response:
        request = self.client.build_request("POST", self.url(endpoint), json=body,
                                            headers=self._headers)
        return send_with_retries(lambda: self.client.send(request, stream=stream), self.policy,
                                 f"openai {endpoint}")

    def _body(self, messages: list[Message], **extra: Any) -> dict[str, Any]:
        body: dict[str, Any] = {"messages": messages, "temperature": 0, **extra}
        if not self.azure_api_version:
            body["model"] = self.model  # Azure names the deployment in the URL
        return body

    def chat(self, messages: list[Message], schema: dict[str, Any] | None = None) -> str:
        extra: dict[str, Any] = {"max_tokens": self.answer_max_tokens}
        if schema is not None:
            extra = {
                "max_tokens": self.selection_max_tokens,
                # Not "strict": OpenAI's strict mode needs every property required, and tool
                # arguments have optional ones. llama.cpp, vLLM and LM Studio enforce the
                # schema as a grammar either way; our parser is strict regardless.
                "response_format": {"type": "json_schema",
                                    "json_schema": {"name": "decision", "schema": schema,
                                                    "strict": False}},
            }
        data = json_body(self._post("chat/completions", self._body(messages, **extra)),
                         "openai chat/completions")
        content = dig(data, "choices", 0, "message", "content")
        if not isinstance(content, str):
            raise ModelResponseError("openai chat/completions: no choices[0].message.content",
                                     json.dumps(data))
        return content

    def chat_stream(self, messages: list[Message]) -> Iterator[str]:
        body = self._body(messages, stream=True, max_tokens=self.answer_max_tokens)
        response = self._post("chat/completions", body, stream=True)
        try:
            for line in response.iter_lines():
                if not line.startswith("data:"):
                    continue  # SSE comments, event names, keep-alives
                payload = line[len("data:"):].strip()
                if payload == "[DONE]":
                    return
                try:
                    event = json.loads(payload)
                except ValueError as error:
                    raise ModelResponseError("openai stream: an event is not JSON",
                                             payload) from error
                delta = dig(event, "choices", 0, "delta", "content")
                if isinstance(delta, str) and delta:
                    yield delta
        finally:
            response.close()

    def embed(self, texts: list[str]) -> list[list[float]]:
        body: dict[str, Any] = {"input": texts}
        if not self.azure_api_version:
            body["model"] = self.model
        data = json_body(self._post("embeddings", body), "openai embeddings")
        items = data.get("data")
        if not isinstance(items, list) or len(items) != len(texts):
            raise ModelResponseError("openai embeddings: wrong data", json.dumps(data)[:2000])
        ordered = sorted(items, key=lambda item: int(item.get("index", 0)))
        return [[float(x) for x in item["embedding"]] for item in ordered]
