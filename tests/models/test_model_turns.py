"""Whole turns with a model selector and answerer served over loopback HTTP."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from docassist.core.errors import ReplayMissError
from docassist.core.tools import ToolRegistry
from docassist.models.adapters import ModelAnswerer, ModelEmbedder, ModelSelector
from docassist.models.base import RetryPolicy
from docassist.models.ollama import OllamaModel
from docassist.models.openai import OpenAIModel
from docassist.models.replay import ReplayModel
from docassist.storage import Store
from docassist_testkit.fakes.model_server import (
    ModelServer,
    Reply,
    ollama_chat,
    ollama_embed,
    openai_chat,
    openai_stream,
    proposal,
)
from tests.conftest import EngineFactory
from tests.helpers import message, recording

FAST = RetryPolicy(attempts=2, backoff_seconds=0.01)
API_KEY = "sk-live-very-secret-0123456789"
CHAT = "/v1/chat/completions"


@pytest.fixture
def server() -> Iterator[ModelServer]:
    with ModelServer() as running:
        yield running


@pytest.fixture
def openai(server: ModelServer) -> Iterator[OpenAIModel]:
    with httpx.Client(timeout=2.0) as client:
        yield OpenAIModel("gpt-test", client, base_url=f"{server.url}/v1", api_key=API_KEY,
                          policy=FAST)


def answer_question_proposal(question: str) -> Reply:
    return openai_chat(proposal("tool_call", "answer_from_documents", {"question": question}))


def test_model_selects_and_answers_with_checked_citations(
    make_engine: EngineFactory, server: ModelServer, openai: OpenAIModel, store: Store
) -> None:
    engine = make_engine(ModelSelector(openai), answerer=ModelAnswerer(openai))
    server.script(CHAT, answer_question_proposal("How do I renew the TLS certificate?"))
    # The answer cites the first retrieved chunk (known only after retrieval) and a fake id.
    server.always(CHAT, Reply(status=599))  # fail loudly if called more than scripted
    chunk_id = engine.retriever.search("How do I renew the TLS certificate?", 3)[0].chunk.chunk_id
    server.script(CHAT, openai_chat(f"Renew 30 days before expiry [{chunk_id}]. "
                                    "Ask Bob [DOC-FAKE-0123456789-0001]."))
    result = engine.handle(message("How do I renew the TLS certificate?"))
    assert result and result.status == "answered"
    assert f"[{chunk_id}]" in result.answer and "DOC-FAKE" not in result.answer
    assert "Ask Bob" not in result.answer  # left without a valid citation: dropped
    assert result.warnings == ["removed_citation:DOC-FAKE-0123456789-0001",
                               "dropped_uncited_sentences:1"]
    selection_body, answer_body = server.bodies(CHAT)
    assert selection_body["response_format"]["json_schema"]["schema"]["required"] == [
        "decision", "action", "arguments", "message"]
    assert "response_format" not in answer_body
    data = json.loads(answer_body["messages"][1]["content"].removeprefix("DATA:\n"))
    assert data["question"] == "How do I renew the TLS certificate?"
    assert chunk_id in [chunk["id"] for chunk in data["chunks"]]
    [row] = store.turns()
    assert (row["backend"], row["model"]) == ("openai", "gpt-test")


@pytest.mark.parametrize("body", [b"", b"{not json", b"```json\n{}\n```"])
def test_malformed_selection_is_a_parse_error_never_retried(
    make_engine: EngineFactory, server: ModelServer, openai: OpenAIModel, store: Store,
    registry: ToolRegistry, body: bytes
) -> None:
    server.script(CHAT, Reply(body=body))
    engine = make_engine(ModelSelector(openai), answerer=ModelAnswerer(openai))
    with recording(registry, *registry.names()) as recorders:
        result = engine.handle(message("How do I renew the TLS certificate?"))
    assert result and result.status == "parse_error"
    assert "nothing was done" in result.answer
    assert len(server.requests) == 1
    assert all(r.calls == [] for r in recorders.values())
    [row] = store.turns()
    assert (row["decision_status"], row["error_code"]) == ("parse_error", "parse_error")


def test_contradictory_and_unknown_tool_proposals(
    make_engine: EngineFactory, server: ModelServer, openai: OpenAIModel, store: Store
) -> None:
    engine = make_engine(ModelSelector(openai))
    server.script(CHAT, openai_chat(proposal("tool_call", "show_last_sources", {}, "here")),
                  openai_chat(proposal("tool_call", "drop_database", {})))
    first = engine.handle(message("show sources"))
    second = engine.handle(message("show sources", thread="t2"))
    assert first and first.status == "parse_error" and first.tool.status is None
    assert second and second.status == "tool_error" and second.tool.status == "unknown_tool"
    assert [row["status"] for row in store.tool_calls()] == ["unknown_tool"]


def test_selector_down_hands_off_after_bounded_retries(
    make_engine: EngineFactory, server: ModelServer, openai: OpenAIModel, store: Store
) -> None:
    server.always(CHAT, Reply(status=503))
    engine = make_engine(ModelSelector(openai), human_channel="#humans")
    result = engine.handle(message("How do I renew the TLS certificate?"))
    assert result and result.status == "handoff" and "#humans" in result.answer
    assert len(server.requests) == FAST.attempts
    assert store.tool_calls() == []


def test_answerer_down_hands_off(make_engine: EngineFactory, server: ModelServer,
                                 openai: OpenAIModel, store: Store) -> None:
    server.script(CHAT, answer_question_proposal("How do I renew the TLS certificate?"))
    server.always(CHAT, Reply(status=500))
    engine = make_engine(ModelSelector(openai), answerer=ModelAnswerer(openai))
    result = engine.handle(message("How do I renew the TLS certificate?"))
    assert result and result.status == "handoff"
    [row] = store.tool_calls()
    assert (row["status"], row["error_code"]) == ("tool_error", "model_unavailable")
    assert store.load(message("x").key).state.last_result is None


def test_streamed_answer_is_released_sentence_by_sentence(
    make_engine: EngineFactory, server: ModelServer, openai: OpenAIModel
) -> None:
    engine = make_engine(answerer=ModelAnswerer(openai))
    chunk_id = engine.retriever.search("How do I renew the TLS certificate?", 3)[0].chunk.chunk_id
    server.script(CHAT, openai_stream("Renew the cert", "ificate early.", f" [{chunk_id}] Then",
                                      " reload [DOC-FAKE-0123456789-0009]. Done."))
    released: list[str] = []
    result = engine.handle(message("How do I renew the TLS certificate?"),
                           on_partial=released.append)
    # "Then reload" cited only a chunk it was not given, "Done." cites nothing: not released.
    assert released == [f"Renew the certificate early. [{chunk_id}]"]
    assert result and result.status == "answered"
    assert "DOC-FAKE" not in result.answer and f"[{chunk_id}]" in result.answer
    assert result.answer == released[0]  # the stream and the stored answer agree
    assert "dropped_uncited_sentences:2" in result.warnings
    assert server.bodies(CHAT)[0]["stream"] is True


def test_ollama_embedder_normalises_vectors(server: ModelServer) -> None:
    server.script("/api/embed", ollama_embed([3.0, 4.0], [0.0, 0.0]))
    with httpx.Client(timeout=2.0) as client:
        embedder = ModelEmbedder(OllamaModel("nomic-embed-text", client, base_url=server.url))
        vectors = embedder.embed_passages(["a", "b"])
    assert embedder.name == "ollama:nomic-embed-text" and embedder.dimensions == 2
    assert vectors.tolist() == [[pytest.approx(0.6), pytest.approx(0.8)], [0.0, 0.0]]


def test_replay_records_then_answers_without_the_server(
    make_engine: EngineFactory, tmp_path: Path, store: Store
) -> None:
    recording_file = tmp_path / "session.jsonl"
    with ModelServer() as live, httpx.Client(timeout=2.0) as client:
        live.script("/api/chat", ollama_chat(proposal("rejected", message="No.")))
        recorder = ReplayModel(recording_file, inner=OllamaModel("m", client, base_url=live.url))
        recorded = make_engine(ModelSelector(recorder)).handle(message("Restart the api now"))
    assert recorded and recorded.status == "rejected"
    replayed = make_engine(ModelSelector(ReplayModel(recording_file))).handle(
        message("Restart the api now", thread="t2"))
    assert replayed and replayed.status == recorded.status
    assert replayed.decision == recorded.decision
    with pytest.raises(ReplayMissError, match=r"replay miss: no recorded answer for request "
                                              r"[0-9a-f]{64}"):
        make_engine(ModelSelector(ReplayModel(recording_file))).handle(
            message("Restart the api NOW please", thread="t3"))


def test_the_api_key_reaches_no_trace_and_no_log(
    make_engine: EngineFactory, server: ModelServer, openai: OpenAIModel, store: Store,
    caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    server.script(CHAT, Reply(status=500), Reply(status=401, json={"error": "bad key"}))
    engine = make_engine(ModelSelector(openai), save_raw=True)
    result = engine.handle(message("How do I renew the TLS certificate?"))
    assert result and result.status == "parse_error"
    assert server.requests[0].headers["Authorization"] == f"Bearer {API_KEY}"
    dumped = json.dumps([store.turns(), store.tool_calls()]) + caplog.text
    assert API_KEY not in dumped
    assert "retry" in caplog.text  # the retry was logged, without the key
