"""What /metrics, /readyz and the JSON logs say beyond turns: model latency, errors and
retries against a loopback model server, rate-limit refusals, syncs, readiness with a model
server down or an empty index, and log lines with no secret."""

from __future__ import annotations

import io
import json
import logging
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from docassist.bot.slack.app import SlackAdapter, SlackConfig
from docassist.bot.slack.runner import make_slack_server
from docassist.bot.slack.server import serve_in_thread
from docassist.config import Settings
from docassist.core.errors import ModelUnavailableError
from docassist.core.extractive import ExtractiveAnswerer
from docassist.core.sources import Source, SourceKind
from docassist.core.tools import ToolRegistry
from docassist.core.turn import TurnEngine
from docassist.logs import JsonFormatter, secret_values
from docassist.models.registry import ModelConfig, chat_model
from docassist.runtime import Runtime, sync_and_embed
from docassist.serving.metrics import Metrics
from docassist.serving.readiness import ModelProbe, readiness
from docassist.storage import Bm25Retriever, Store
from docassist_testkit.fakes.loopback import free_port
from docassist_testkit.fakes.model_server import ModelServer, Reply, ollama_chat
from docassist_testkit.fakes.slack_api import FakeSlackApi
from tests.helpers import rules_selector
from tests.slack.rig import SECRET, SlackRig, mention


def samples(metrics: Metrics) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    text = metrics.exposition().decode()
    return {(sample.name, tuple(sorted(sample.labels.items()))): sample.value
            for family in text_string_to_metric_families(text) for sample in family.samples}


def runtime_for(store: Store, db_path: Path, metrics: Metrics, registry: ToolRegistry,
                **settings: object) -> Runtime:
    engine = TurnEngine(store=store, catalog=store, retriever=Bm25Retriever(store),
                        selector=rules_selector(), answerer=ExtractiveAnswerer(),
                        registry=registry, observer=metrics)
    return Runtime(settings=Settings(db=db_path, embedder="none", retriever="bm25",
                                     **settings),  # type: ignore[arg-type]
                   store=store, engine=engine, retrievers={})


def test_model_latency_retries_and_errors_are_counted() -> None:
    metrics = Metrics()
    with ModelServer() as server:
        model = chat_model("ollama:m", ModelConfig(ollama_url=server.url, observer=metrics))
        server.script("/api/chat", Reply(status=503), ollama_chat("OK"))
        assert model.chat([{"role": "user", "content": "hi"}]) == "OK"
        server.script("/api/chat", Reply(status=503), Reply(status=503), Reply(status=503))
        with pytest.raises(ModelUnavailableError):
            model.chat([{"role": "user", "content": "hi"}])
    seen = samples(metrics)
    assert seen[("docassist_model_retries_total", (("request", "ollama /api/chat"),))] == 3
    assert seen[("docassist_model_errors_total", (("backend", "ollama"),))] == 1
    assert seen[("docassist_model_request_duration_seconds_count",
                 (("backend", "ollama"),))] == 2


def test_rate_limit_refusals_are_counted(store: Store, db_path: Path,
                                         registry: ToolRegistry) -> None:
    metrics = Metrics(store)
    runtime = runtime_for(store, db_path, metrics, registry)
    with FakeSlackApi() as api:
        adapter = SlackAdapter(runtime.engine, store, SlackConfig(
            bot_token="xoxb-test", signing_secret=SECRET, api_url=api.url,
            per_user_per_minute=1))
        server = serve_in_thread(make_slack_server(adapter, "127.0.0.1", 0))
        rig = SlackRig(api, adapter, f"{server.url}/slack/events", store, server)
        try:
            rig.event(mention("How do I renew the TLS certificate?", "1.1"), "EvR1")
            limited = mention("Jak odtworzyć bazę danych z kopii?", "2.1", thread_ts="1.1")
            rig.event(limited, "EvR2")
            # The same message again: Slack's retry, and its "message" twin in the bot's
            # thread (another event id, the same channel and ts), which the insert itself
            # finds a duplicate.
            answers = [rig.event(limited, "EvR2", retry=1).status_code,
                       rig.event({**limited, "type": "message", "channel_type": "channel"},
                                 "EvR2m").status_code]
            notices = [post for post in api.messages("C1", "1.1")
                       if "spróbuj ponownie" in str(post.get("text"))]
        finally:
            server.stop()
            adapter.close()
    assert answers == [200, 200] and len(notices) == 1
    seen = samples(metrics)
    assert seen[("docassist_rate_limited_total", ())] == 1  # the refusal, not its duplicates
    assert sum(value for (name, _), value in seen.items()
               if name == "docassist_turns_total") == 1  # the refused message ran no turn


def test_syncs_are_counted_per_source(store: Store, db_path: Path, tmp_path: Path,
                                      registry: ToolRegistry) -> None:
    metrics = Metrics(store)
    runtime = runtime_for(store, db_path, metrics, registry)
    folder = tmp_path / "handbook"
    folder.mkdir()
    (folder / "a.md").write_text("# Backups\n\nRun the backup job nightly.\n")
    (folder / "b.md").write_text("# Restores\n\nRestore from the latest backup.\n")
    store.add_source(Source(name="handbook", kind=SourceKind.FOLDER,
                            settings={"path": str(folder)}))
    sync_and_embed(runtime, "handbook")
    (folder / "b.md").unlink()
    sync_and_embed(runtime, "handbook")
    seen = samples(metrics)
    assert seen[("docassist_sync_runs_total", (("result", "ok"), ("source", "handbook")))] == 2
    items = {change: seen[("docassist_sync_items_total",
                           (("change", change), ("source", "handbook")))]
             for change in ("added", "updated", "deleted", "failed")}
    assert items == {"added": 2, "updated": 0, "deleted": 1, "failed": 0}
    assert seen[("docassist_sync_last_success_timestamp_seconds",
                 (("source", "handbook"),))] > 0


def test_readiness_names_a_model_server_that_does_not_answer(
        store: Store, db_path: Path, registry: ToolRegistry) -> None:
    down = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    runtime = runtime_for(store, db_path, Metrics(), registry, model="ollama:qwen2.5:7b",
                          ollama_url=down)
    state = readiness(runtime, ModelProbe(runtime.settings))
    assert not state.ready
    assert state.reason is not None and state.reason.startswith("selection model ollama:")
    assert state.checks["database"] == "writable"


def test_readiness_needs_an_index(tmp_path: Path, registry: ToolRegistry) -> None:
    empty = Store(tmp_path / "empty.db")
    try:
        runtime = runtime_for(empty, tmp_path / "empty.db", Metrics(), registry)
        state = readiness(runtime, ModelProbe(runtime.settings))
    finally:
        empty.close()
    assert not state.ready and state.reason == "index: no document is indexed"


def test_json_log_lines_redact_every_secret_of_the_environment() -> None:
    environ = {"SLACK_BOT_TOKEN": "xoxb-very-secret", "DOCASSIST_OPENAI_API_KEY": "sk-abcdef",
               "DOCASSIST_TEAMS_APP_PASSWORD": "hunter2hunter2", "DOCASSIST_LANGUAGE": "pl"}
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter(secret_values(environ)))
    log = logging.getLogger("docassist.test_json_logs")
    log.addHandler(handler)
    log.propagate = False
    try:
        log.warning("token xoxb-very-secret refused by sk-abcdef", extra={
            "turn_id": "r1", "conversation": "c0ffee"})
        try:
            raise RuntimeError("password hunter2hunter2")
        except RuntimeError:
            log.exception("failed")
    finally:
        log.removeHandler(handler)
    first, second = (json.loads(line) for line in stream.getvalue().splitlines())
    assert first["event"] == "token [redacted] refused by [redacted]"
    assert (first["level"], first["turn_id"], first["conversation"]) == ("warning", "r1",
                                                                         "c0ffee")
    assert "hunter2hunter2" not in second["error"] and "[redacted]" in second["error"]
    assert "pl" not in secret_values(environ)


def test_a_degraded_optional_dependency_is_shown_and_leaves_the_process_ready(
        store: Store, db_path: Path, registry: ToolRegistry) -> None:
    runtime = runtime_for(store, db_path, Metrics(), registry)
    problems: list[str | None] = [None]
    runtime.optional["directory:teams"] = lambda: problems[-1]
    state = readiness(runtime, ModelProbe(runtime.settings))
    assert state.ready and state.checks["directory:teams"] == "ok" and state.degraded == []
    problems.append("Entra ID groups unavailable: the sign-in service could not be reached")
    state = readiness(runtime, ModelProbe(runtime.settings))
    assert state.ready and state.reason is None
    assert state.degraded == ["directory:teams: Entra ID groups unavailable: the sign-in "
                              "service could not be reached"]
