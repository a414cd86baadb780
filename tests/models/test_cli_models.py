"""The CLI pointed at model servers: doctor, --record and replay, secrets in output."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from docassist.storage import Store
from docassist_testkit.fakes.model_server import (
    ModelServer,
    Reply,
    ollama_embed,
    openai_chat,
    proposal,
)
from tests.cli_run import one_json, run

SECRET = "sk-cli-secret-abcdef"


@pytest.fixture
def server() -> Iterator[ModelServer]:
    with ModelServer() as running:
        yield running


def model_env(server: ModelServer, **extra: str) -> dict[str, str]:
    return {"DOCASSIST_MODEL": "openai:tiny", "DOCASSIST_OPENAI_BASE_URL": f"{server.url}/v1",
            "DOCASSIST_OPENAI_API_KEY": SECRET, **extra}


def test_doctor_reports_each_backend(db_path: Path, server: ModelServer) -> None:
    server.always("/v1/chat/completions", openai_chat("OK"))
    server.always("/api/embed", ollama_embed([0.1, 0.2, 0.3]))
    done = run("doctor", "--json", db=db_path,
               **model_env(server, DOCASSIST_EMBEDDER="ollama:nomic-embed-text",
                           DOCASSIST_OLLAMA_URL=server.url))
    assert done.returncode == 0, done.stdout + done.stderr
    report = one_json(done.stdout)
    by_role = {check["role"]: check for check in report["checks"]}
    assert by_role["selection"]["ok"] and by_role["selection"]["spec"] == "openai:tiny"
    assert by_role["selection"]["latency_ms"] >= 0
    assert by_role["embeddings"]["detail"] == "3 dimensions"
    assert "7 documents" in by_role["database"]["detail"]
    assert SECRET not in done.stdout + done.stderr


def test_doctor_fails_when_a_backend_is_down(db_path: Path, server: ModelServer) -> None:
    server.always("/v1/chat/completions", Reply(status=503))
    done = run("doctor", "--json", db=db_path,
               **model_env(server, DOCASSIST_EMBEDDER="none", DOCASSIST_RETRIEVER="bm25"))
    assert done.returncode == 1
    report = one_json(done.stdout)
    failed = [check for check in report["checks"] if not check["ok"]]
    assert [check["role"] for check in failed] == ["selection", "answers"]
    assert "unavailable after 3 attempts" in failed[0]["detail"]


def test_record_then_replay_without_a_server(db_path: Path, tmp_path: Path,
                                            server: ModelServer) -> None:
    session = tmp_path / "session.jsonl"
    server.always("/v1/chat/completions",
                  openai_chat(proposal("no_suitable_tool", message="No chart tool.")))
    recorded = run("ask", "Draw me a chart of restarts", "--json", "--record", str(session),
                   db=db_path, **model_env(server))
    assert recorded.returncode == 0, recorded.stderr
    first = one_json(recorded.stdout)
    assert first["status"] == "no_suitable_tool"
    lines = [json.loads(line) for line in session.read_text().splitlines()]
    assert len(lines) == 1 and len(lines[0]["key"]) == 64
    assert SECRET not in session.read_text()
    replayed = run("ask", "Draw me a chart of restarts", "--json", db=db_path,
                   DOCASSIST_MODEL=f"replay:{session}")
    assert one_json(replayed.stdout)["decision"] == first["decision"]
    missed = run("ask", "Draw me a graph of restarts", "--json", db=db_path,
                 DOCASSIST_MODEL=f"replay:{session}")
    assert missed.returncode == 2
    assert "replay miss: no recorded answer for request" in one_json(missed.stdout)["error"]


def test_invalid_configuration_is_a_clear_error(db_path: Path) -> None:
    done = run("ask", "hi", "--json", db=db_path, DOCASSIST_MODEL_TIMEOUT="-3")
    assert done.returncode == 2
    assert "DOCASSIST_MODEL_TIMEOUT='-3'" in one_json(done.stdout)["error"]
    missing = run("ask", "hi", "--json", db=db_path, DOCASSIST_MODEL="replay:/nope.jsonl")
    assert "replay file /nope.jsonl does not exist" in one_json(missing.stdout)["error"]
    bare = run("ask", "hi", "--json", db=db_path, DOCASSIST_MODEL="ollama")
    assert "needs a model: ollama:<model>" in one_json(bare.stdout)["error"]


def test_a_configured_model_may_search_with_translations(db_path: Path,
                                                         server: ModelServer) -> None:
    """Wiring: with a model selector the catalog offers `translations`, the tool searches
    with them, and the trace names the retriever."""
    server.always("/v1/chat/completions", openai_chat(proposal(
        "tool_call", "answer_from_documents",
        {"question": "Jak odnowić certyfikat TLS?",
         "translations": ["How do I renew the TLS certificate?"]})))
    done = run("ask", "Jak odnowić certyfikat TLS?", "--json", db=db_path,
               **model_env(server, DOCASSIST_ANSWER_MODEL="rules"))
    assert done.returncode == 0, done.stderr
    result = one_json(done.stdout)
    assert result["status"] == "answered" and result["tool"]["status"] == "tool_completed"
    [body] = server.bodies("/v1/chat/completions")
    assert '\\"translations\\"' in json.dumps(body["messages"][1]["content"])
    store = Store(db_path)
    assert store.turns()[-1]["retriever"] == "ranked+translations"  # the default since #40
    assert "How do I renew" not in json.dumps(store.tool_calls())  # hashed, not raw
    store.close()
