"""Configured secrets appear in no log line, no trace export and no byte of the database.

Slack conversations over the real HTTP path (signed requests, fake Slack Web API) with a
model backend over loopback that answers, fails with 500s (retries, then handoff) and
refuses with 401. Once in this process (caplog at DEBUG, every logger) and once as the real
`docassist slack --http` process configured from the environment (stderr at DEBUG). Then
every log line, a JSONL and a CSV export (storage.exports), every row of every table and
the raw database files are scanned for each secret.
(tests/slack/test_slack_http.py and tests/models/test_model_turns.py check the bot token,
signing secret and API key on narrower paths.)
"""

from __future__ import annotations

import json
import logging
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import urlencode

import httpx
import pytest

from docassist.bot.slack.app import SlackAdapter, SlackConfig
from docassist.bot.slack.runner import make_slack_server
from docassist.bot.slack.server import serve_in_thread
from docassist.models.adapters import ModelAnswerer, ModelSelector
from docassist.models.base import RetryPolicy
from docassist.models.openai import OpenAIModel
from docassist.storage import Store
from docassist.storage.exports import trace_rows, write_export
from docassist_testkit.fakes.loopback import PROCESS_START_SECONDS, free_port
from docassist_testkit.fakes.model_server import (
    ModelServer,
    Reply,
    openai_chat,
    openai_stream,
    proposal,
)
from docassist_testkit.fakes.slack_api import FakeSlackApi, slack_signature
from tests.conftest import REPO, EngineFactory

SECRETS = {
    "SLACK_BOT_TOKEN": "xoxb-scan-7f3a9c21-BOTTOKEN",
    "SLACK_SIGNING_SECRET": "scan-signing-5e1d88b0-SECRET",
    "SLACK_APP_TOKEN": "xapp-scan-0b7e4412-APPTOKEN",
    "DOCASSIST_OPENAI_API_KEY": "sk-scan-4c2f9d63-MODELKEY",
}
CHAT = "/v1/chat/completions"
WAIT_SECONDS = PROCESS_START_SECONDS
"""For the bot to start, or to answer: only a bot that never will misses it."""
QUESTION = "How do I renew the TLS certificate?"
TURNS = 3
DELIVERED = "SELECT count(*) FROM inbox WHERE status = 'done'"


class Sender:
    """Signs and posts Slack requests to one events URL."""

    def __init__(self, url: str, signing_secret: str) -> None:
        self.url = url
        self.secret = signing_secret

    def _post(self, body: str, content_type: str) -> httpx.Response:
        timestamp = str(int(time.time()))
        response = httpx.post(self.url, content=body.encode(), timeout=30, headers={
            "Content-Type": content_type, "X-Slack-Request-Timestamp": timestamp,
            "X-Slack-Signature": slack_signature(self.secret, timestamp, body)})
        assert response.status_code == 200, response.text
        return response

    def event(self, text: str, ts: str, event_id: str, thread_ts: str | None = None) -> None:
        event = {"type": "app_mention", "user": "U1", "text": f"<@UBOT> {text}", "ts": ts,
                 "channel": "C1", "team": "T1"}
        if thread_ts:
            event["thread_ts"] = thread_ts
        self._post(json.dumps({"token": "t", "team_id": "T1", "api_app_id": "A1",
                               "type": "event_callback", "event_id": event_id,
                               "event_time": 1, "event": event}), "application/json")

    def command(self, command: str) -> None:
        self._post(urlencode({"command": command, "text": "", "team_id": "T1",
                              "channel_id": "C1", "user_id": "U1", "trigger_id": "t",
                              "response_url": "http://127.0.0.1:9/unused"}),
                   "application/x-www-form-urlencoded")


def script_model(server: ModelServer, attempts: int) -> None:
    """Turn 1 answered (streamed), turn 2 model down (500 on every attempt: handoff), turn 3
    refused with 401 (not retried)."""
    server.script(CHAT, openai_chat(proposal("tool_call", "answer_from_documents",
                                             {"question": QUESTION})),
                  openai_stream("Renew the certificate ", "as the TLS document says."),
                  *[Reply(status=500, json={"error": {"message": "upstream down"}})] * attempts,
                  Reply(status=401, json={"error": {"message": "Incorrect API key provided"}}))
    server.always(CHAT, Reply(status=599))  # more calls than scripted: fail loudly


def conversation(send: Sender, answered: Callable[[int], None]) -> None:
    """Three turns one after another (the model's replies are scripted in this order)."""
    send.event(QUESTION, "100.1", "EvScan1")
    answered(1)
    send.event("How do I check the status of docassist-api?", "100.2", "EvScan2", "100.1")
    answered(2)
    send.event("Which documents cover backups?", "200.1", "EvScan3")
    answered(3)
    send.command("/docassist-docs")


def wait_for(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def stored_text(db: Path, tmp_path: Path) -> dict[str, str]:
    """Everything the database holds, four ways: exports, table rows, raw file bytes."""
    store = Store(db)
    rows = trace_rows(store)
    store.close()
    assert [row["status"] for row in rows] == ["answered", "handoff", "parse_error"]
    write_export(rows, "jsonl", tmp_path / "traces.jsonl")
    write_export(rows, "csv", tmp_path / "traces.csv")
    connection = sqlite3.connect(db)
    tables = [name for (name,) in connection.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table'")]
    dump = {table: [list(map(repr, row)) for row in connection.execute(
        f'SELECT * FROM "{table}"')] for table in tables}
    connection.close()
    raw = b"".join(path.read_bytes() for path in db.parent.glob(db.name + "*"))
    return {"jsonl export": (tmp_path / "traces.jsonl").read_text(encoding="utf-8"),
            "csv export": (tmp_path / "traces.csv").read_text(encoding="utf-8"),
            "tables": json.dumps(dump), "database files": raw.decode("latin-1")}


def assert_no_secret(places: dict[str, str]) -> None:
    leaks = [(name, place) for place, text in places.items()
             for name, secret in SECRETS.items() if secret in text]
    assert leaks == []


@pytest.fixture
def model_server() -> Iterator[ModelServer]:
    with ModelServer() as server:
        yield server


def count(db: Path, sql: str) -> int:
    connection = sqlite3.connect(db)
    try:
        return int(connection.execute(sql).fetchone()[0])
    finally:
        connection.close()


def test_no_secret_in_logs_traces_or_files_in_process(
        make_engine: EngineFactory, store: Store, db_path: Path, tmp_path: Path,
        model_server: ModelServer, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)  # the root logger: every library's debug lines too
    script_model(model_server, attempts=2)
    with httpx.Client(timeout=5.0) as client, FakeSlackApi() as api:
        model = OpenAIModel("gpt-scan", client, base_url=f"{model_server.url}/v1",
                            api_key=SECRETS["DOCASSIST_OPENAI_API_KEY"],
                            policy=RetryPolicy(attempts=2, backoff_seconds=0.01))
        engine = make_engine(ModelSelector(model), answerer=ModelAnswerer(model), save_raw=True)
        adapter = SlackAdapter(engine, store, SlackConfig(
            bot_token=SECRETS["SLACK_BOT_TOKEN"],
            signing_secret=SECRETS["SLACK_SIGNING_SECRET"], api_url=api.url))
        server = make_slack_server(adapter, "127.0.0.1", 0)
        serve_in_thread(server)
        try:
            conversation(Sender(f"http://127.0.0.1:{server.server_address[1]}/slack/events",
                                SECRETS["SLACK_SIGNING_SECRET"]),
                         lambda turns: wait_for(adapter.worker.wait_idle, "the inbox"))
        finally:
            server.shutdown()
            server.server_close()
            adapter.worker.close()
        posted = [call.body for call in api.calls if call.method.startswith("chat.")]
    assert model_server.requests[0].headers["Authorization"] == (
        f"Bearer {SECRETS['DOCASSIST_OPENAI_API_KEY']}")  # the key was really used
    assert any("#docassist-help" in str(body) for body in posted)  # the handoff was posted
    log = caplog.text + "\n".join(str(record.args) for record in caplog.records)
    assert "chat.postMessage" in log and "retry" in log  # the scanned logs are the real ones
    assert_no_secret({"logs": log, **stored_text(db_path, tmp_path)})


def test_no_secret_in_logs_traces_or_files_of_the_real_process(
        db_path: Path, tmp_path: Path, model_server: ModelServer) -> None:
    script_model(model_server, attempts=3)  # the default retry policy
    port = free_port()
    stderr_path = tmp_path / "stderr.log"
    # Logging at DEBUG for every logger of every process (the server and its turn processes),
    # configured as an operator would, then the real CLI.
    with FakeSlackApi() as api, stderr_path.open("wb") as stderr:
        env = {**os.environ, **SECRETS, "DOCASSIST_DB": str(db_path),
               "DOCASSIST_SLACK_API_URL": api.url, "DOCASSIST_MODEL": "openai:gpt-scan",
               "DOCASSIST_OPENAI_BASE_URL": f"{model_server.url}/v1",
               "DOCASSIST_SAVE_RAW": "true", "DOCASSIST_LOG_LEVEL": "debug"}
        process = subprocess.Popen(
            [sys.executable, "-m", "docassist", "slack", "--http", "--port", str(port)],
            env=env, cwd=REPO, stdout=subprocess.DEVNULL, stderr=stderr)
        try:
            wait_for(lambda: _healthy(port), "the bot to start")
            conversation(Sender(f"http://127.0.0.1:{port}/slack/events",
                                SECRETS["SLACK_SIGNING_SECRET"]),
                         lambda turns: wait_for(lambda: count(db_path, DELIVERED) == turns,
                                                "a delivered answer"))
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(30)
    log = stderr_path.read_text(encoding="utf-8", errors="replace")
    # The scanned log is the real one, the turn processes' included: only they post.
    assert "DEBUG" in log and "chat.postMessage" in log
    assert model_server.requests[0].headers["Authorization"] == (
        f"Bearer {SECRETS['DOCASSIST_OPENAI_API_KEY']}")
    assert_no_secret({"stderr": log, **stored_text(db_path, tmp_path)})


def _healthy(port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False
