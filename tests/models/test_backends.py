"""Every backend over real HTTP against the loopback model server."""

from __future__ import annotations

import json
import re
import socket
from collections.abc import Iterator

import httpx
import pytest

from docassist.core.errors import ModelResponseError, ModelUnavailableError
from docassist.core.selection import decision_schema
from docassist.core.tools import default_registry
from docassist.models.base import Message, RetryPolicy
from docassist.models.ollama import OllamaModel
from docassist.models.openai import OpenAIModel
from docassist_testkit.fakes.model_server import (
    ModelServer,
    Reply,
    ollama_chat,
    ollama_embed,
    ollama_stream,
    openai_chat,
    openai_embeddings,
    openai_stream,
)

FAST = RetryPolicy(attempts=3, backoff_seconds=0.01)
MESSAGES: list[Message] = [{"role": "user", "content": "hi"}]
SCHEMA = decision_schema(default_registry().specs())


@pytest.fixture
def server() -> Iterator[ModelServer]:
    with ModelServer() as running:
        yield running


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=httpx.Timeout(2.0, connect=1.0)) as http:
        yield http


def test_ollama_chat_sends_the_schema_as_format(server: ModelServer,
                                                client: httpx.Client) -> None:
    server.script("/api/chat", ollama_chat('{"decision": "rejected"}'))
    model = OllamaModel("qwen2.5:7b", client, base_url=server.url, policy=FAST)
    assert model.chat(MESSAGES, SCHEMA) == '{"decision": "rejected"}'
    [body] = server.bodies("/api/chat")
    assert body == {"model": "qwen2.5:7b", "messages": MESSAGES, "stream": False,
                    "options": {"temperature": 0}, "format": SCHEMA}


def test_ollama_streams_and_embeds(server: ModelServer, client: httpx.Client) -> None:
    server.script("/api/chat", ollama_stream("Zrób ", "kopię. ", "Potem restart."))
    server.script("/api/embed", ollama_embed([1.0, 0.0], [0.0, 2.0]))
    model = OllamaModel("m", client, base_url=server.url, policy=FAST)
    assert list(model.chat_stream(MESSAGES)) == ["Zrób ", "kopię. ", "Potem restart."]
    assert server.bodies("/api/chat")[0]["stream"] is True
    assert model.embed(["a", "b"]) == [[1.0, 0.0], [0.0, 2.0]]
    assert server.bodies("/api/embed") == [{"model": "m", "input": ["a", "b"]}]


def test_openai_constrained_output_request_body(server: ModelServer,
                                                client: httpx.Client) -> None:
    server.script("/v1/chat/completions", openai_chat('{"decision": "no_suitable_tool"}'))
    model = OpenAIModel("gpt-4o-mini", client, base_url=f"{server.url}/v1", api_key="sk-test",
                        policy=FAST)
    assert model.chat(MESSAGES, SCHEMA) == '{"decision": "no_suitable_tool"}'
    [request] = [r for r in server.requests if r.path == "/v1/chat/completions"]
    assert request.headers["Authorization"] == "Bearer sk-test"
    assert request.body == {
        "model": "gpt-4o-mini", "messages": MESSAGES, "temperature": 0, "max_tokens": 300,
        "response_format": {"type": "json_schema",
                            "json_schema": {"name": "decision", "schema": SCHEMA,
                                            "strict": False}}}


def test_azure_deployment_url_and_api_key_header(server: ModelServer,
                                                 client: httpx.Client) -> None:
    server.script("/openai/deployments/gpt4o-prod/chat/completions", openai_chat("ok"))
    model = OpenAIModel("gpt4o-prod", client, base_url=server.url, api_key="azure-secret",
                        azure_api_version="2024-10-21", policy=FAST)
    assert model.chat(MESSAGES) == "ok"
    [request] = server.requests
    assert request.path == "/openai/deployments/gpt4o-prod/chat/completions?api-version=2024-10-21"
    assert request.headers["api-key"] == "azure-secret"
    assert "Authorization" not in request.headers
    assert "model" not in request.body


def test_openai_sse_stream_and_embeddings(server: ModelServer, client: httpx.Client) -> None:
    server.script("/v1/chat/completions", openai_stream("Renew ", "30 days ", "ahead."))
    server.script("/v1/embeddings", openai_embeddings([0.5, 0.5], [1.0, 0.0]))
    model = OpenAIModel("m", client, base_url=f"{server.url}/v1", policy=FAST)
    assert "".join(model.chat_stream(MESSAGES)) == "Renew 30 days ahead."
    assert server.bodies("/v1/chat/completions")[0]["stream"] is True
    assert model.embed(["a", "b"]) == [[0.5, 0.5], [1.0, 0.0]]  # reordered by index


def test_server_errors_are_retried_then_succeed(server: ModelServer,
                                                client: httpx.Client) -> None:
    server.script("/v1/chat/completions", Reply(status=500, json={"error": "boom"}),
                  Reply(status=503, body=b"busy"), openai_chat("third time lucky"))
    model = OpenAIModel("m", client, base_url=f"{server.url}/v1", policy=FAST)
    assert model.chat(MESSAGES) == "third time lucky"
    assert len(server.requests) == 3


def test_retries_are_bounded(server: ModelServer, client: httpx.Client) -> None:
    server.always("/api/chat", Reply(status=502, body=b"bad gateway"))
    model = OllamaModel("m", client, base_url=server.url, policy=FAST)
    with pytest.raises(ModelUnavailableError, match="after 3 attempts: HTTP 502"):
        model.chat(MESSAGES)
    assert len(server.requests) == 3


def test_connection_refused_is_unavailable(client: httpx.Client) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    model = OllamaModel("m", client, base_url=f"http://127.0.0.1:{port}", policy=FAST)
    with pytest.raises(ModelUnavailableError, match="ConnectError"):
        model.chat(MESSAGES)


def test_a_slow_server_times_out(server: ModelServer) -> None:
    server.always("/api/chat", Reply(delay=0.6, json={"message": {"content": "late"}}))
    with httpx.Client(timeout=0.2) as slow_client:
        model = OllamaModel("m", slow_client, base_url=server.url,
                            policy=RetryPolicy(attempts=2, backoff_seconds=0.01))
        with pytest.raises(ModelUnavailableError, match="ReadTimeout"):
            model.chat(MESSAGES)
    assert len(server.requests) == 2


@pytest.mark.parametrize(("reply", "fragment"), [
    (Reply(status=400, json={"error": "bad schema"}), "HTTP 400"),
    (Reply(body=b"<html>gateway</html>", content_type="text/html"), "not JSON"),
    (Reply(body=b""), "not JSON"),
    (Reply(json={"choices": []}), "no choices[0].message.content"),
    (Reply(json=["not", "an", "object"]), "not a JSON object"),
])
def test_bad_responses_are_errors_and_never_retried(server: ModelServer, client: httpx.Client,
                                                    reply: Reply, fragment: str) -> None:
    server.script("/v1/chat/completions", reply)
    model = OpenAIModel("m", client, base_url=f"{server.url}/v1", policy=FAST)
    with pytest.raises(ModelResponseError, match=re.escape(fragment)) as caught:
        model.chat(MESSAGES)
    assert len(server.requests) == 1
    if reply.body:
        assert caught.value.body == reply.body.decode()


def test_a_broken_stream_line_is_an_error(server: ModelServer, client: httpx.Client) -> None:
    server.script("/v1/chat/completions",
                  Reply(lines=["data: {oops", "data: [DONE]"], content_type="text/event-stream"))
    model = OpenAIModel("m", client, base_url=f"{server.url}/v1", policy=FAST)
    with pytest.raises(ModelResponseError, match="not JSON"):
        list(model.chat_stream(MESSAGES))


def test_wrong_embedding_count_is_an_error(server: ModelServer, client: httpx.Client) -> None:
    server.script("/api/embed", Reply(json={"embeddings": [[1.0]]}))
    model = OllamaModel("m", client, base_url=server.url, policy=FAST)
    with pytest.raises(ModelResponseError, match="wrong embeddings"):
        model.embed(["a", "b"])
    assert json.dumps(server.bodies("/api/embed")[0]) == '{"model": "m", "input": ["a", "b"]}'
