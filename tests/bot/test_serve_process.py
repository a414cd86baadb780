"""`docassist serve` as a real process: both platforms on one port from the environment,
JSON logs (one object per line, no secret, no raw question), /metrics counting the turns,
/readyz 503 on a read-only database, and a clear error when nothing is configured."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
from prometheus_client.parser import text_string_to_metric_families

from docassist.storage import Store
from docassist_testkit.fakes.loopback import free_port, wait_healthy, wait_until
from docassist_testkit.fakes.slack_api import FakeSlackApi, slack_signature
from docassist_testkit.fakes.teams_connector import FakeConnector, card_text
from tests.conftest import REPO
from tests.helpers import slack_seen

BOT_TOKEN = "xoxb-serve-secret-token-1234"
SIGNING_SECRET = "serve-signing-secret-5678"
SLACK_QUESTION = "How do I renew the TLS certificate before it expires?"
TEAMS_QUESTION = "Jak odtworzyć bazę danych z kopii zapasowej?"


def serve_env(db: str, **extra: str) -> dict[str, str]:
    env = {name: value for name, value in os.environ.items()
           if not name.startswith(("DOCASSIST_", "SLACK_"))}
    return {**env, "DOCASSIST_DB": db, "DOCASSIST_EMBEDDER": "none",
            "DOCASSIST_RETRIEVER": "bm25", **extra}


def start_serve(env: dict[str, str], port: int) -> subprocess.Popen[bytes]:
    process = subprocess.Popen([sys.executable, "-m", "docassist", "serve", "--port", str(port)],
                               env=env, cwd=REPO, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    return wait_healthy(process, port, lambda: process.stderr.read().decode()
                        if process.stderr else "no start")


def slack_event(url: str, text: str) -> httpx.Response:
    body = json.dumps({"token": "t", "team_id": "T1", "api_app_id": "A1",
                       "type": "event_callback", "event_id": "EvServe1", "event_time": 1,
                       "event": {"type": "app_mention", "user": "U1", "team": "T1",
                                 "channel": "C1", "ts": "1.1", "text": f"<@UBOT> {text}"}})
    stamp = str(int(time.time()))
    signature = slack_signature(SIGNING_SECRET, stamp, body)
    return httpx.post(f"{url}/slack/events", content=body.encode(), timeout=10, headers={
        "Content-Type": "application/json", "X-Slack-Request-Timestamp": stamp,
        "X-Slack-Signature": signature})


def teams_activity(connector: FakeConnector, text: str) -> dict[str, object]:
    return {"type": "message", "id": "serve-1", "channelId": "msteams",
            "serviceUrl": connector.url, "text": text, "deliveryMode": "expectReplies",
            "from": {"id": "29:u1", "aadObjectId": "aad-u1"},
            "recipient": {"id": "28:bot", "name": "DocAssist"},
            "conversation": {"id": "a:chat-1", "conversationType": "personal",
                             "tenantId": "tenant-1"}}


def turns_counted(url: str) -> float:
    text = httpx.get(f"{url}/metrics", timeout=10).text
    return sum(sample.value for family in text_string_to_metric_families(text)
               for sample in family.samples if sample.name == "docassist_turns_total")


def test_serve_runs_both_platforms_and_logs_json_without_secrets_or_questions(
        db_path: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with FakeSlackApi() as api, FakeConnector() as connector:
        process = start_serve(serve_env(
            str(db_path), SLACK_BOT_TOKEN=BOT_TOKEN, SLACK_SIGNING_SECRET=SIGNING_SECRET,
            DOCASSIST_SLACK_API_URL=api.url, DOCASSIST_TEAMS_ANONYMOUS="true",
            DOCASSIST_LOG_FORMAT="json"), port)
        try:
            assert turns_counted(url) == 0
            assert slack_event(url, SLACK_QUESTION).status_code == 200
            assert wait_until(lambda: len(api.posted()) == 1)
            reply = httpx.post(f"{url}/api/messages", json=teams_activity(
                connector, TEAMS_QUESTION), timeout=30).json()["activities"][0]
            assert "DOC-" in card_text(reply["attachments"][0]["content"])
            assert "DOC-TLS-" in slack_seen(api.posted()[0])
            assert turns_counted(url) == 2
            assert httpx.get(f"{url}/readyz", timeout=10).status_code == 200
        finally:
            process.terminate()
            stdout, stderr = process.communicate(timeout=20)
    assert stdout == b""
    lines = [json.loads(line) for line in stderr.decode().splitlines() if line.strip()]
    assert all({"time", "level", "logger", "event"} <= set(line) for line in lines)
    turns = [line for line in lines if line["event"] == "turn finished"]
    assert len(turns) == 2 and all(line["turn_id"] and line["conversation"] for line in turns)
    assert any("WITHOUT authentication" in line["event"] for line in lines)
    assert any(line["event"] == f"listening on {url}/slack/events" for line in lines)
    for secret_or_text in (BOT_TOKEN, SIGNING_SECRET, SLACK_QUESTION, TEAMS_QUESTION,
                           "renew the TLS", "bazę danych"):
        assert secret_or_text not in stderr.decode()


def test_readyz_is_503_with_the_reason_when_the_database_is_read_only(
        db_path: Path) -> None:
    port = free_port()
    process = start_serve(serve_env(f"file:{db_path}?mode=ro",
                                    DOCASSIST_TEAMS_ANONYMOUS="true"), port)
    try:
        ready = httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=15)
        health = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=5)
    finally:
        process.terminate()
        process.communicate(timeout=20)
    assert ready.status_code == 503
    body = ready.json()
    assert body["ready"] is False and body["reason"].startswith("database")
    assert "read-only" in body["checks"]["database"] or "readonly" in body["checks"]["database"]
    assert health.status_code == 200


def test_serve_without_any_platform_configured_says_what_to_set(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "docassist", "serve", "--port", "0"],
                          env=serve_env(str(tmp_path / "x.db")), cwd=REPO,
                          capture_output=True, timeout=120)
    assert done.returncode != 0
    message = done.stderr.decode()
    assert "SLACK_BOT_TOKEN" in message and "DOCASSIST_TEAMS_APP_ID" in message
    assert not (tmp_path / "x.db").exists()  # nothing opened, nothing indexed


def test_a_half_configured_slack_is_said_and_left_out(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "docassist", "serve", "--port", "0"],
                          env=serve_env(str(tmp_path / "x.db"), SLACK_BOT_TOKEN=BOT_TOKEN),
                          cwd=REPO, capture_output=True, timeout=120)
    assert done.returncode != 0
    message = done.stderr.decode()
    assert "SLACK_SIGNING_SECRET" in message and BOT_TOKEN not in message


def test_slack_alone_serves_the_operator_routes_too(db_path: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with FakeSlackApi() as api:
        process = subprocess.Popen(
            [sys.executable, "-m", "docassist", "slack", "--http", "--port", str(port)],
            env=serve_env(str(db_path), SLACK_BOT_TOKEN=BOT_TOKEN,
                          SLACK_SIGNING_SECRET=SIGNING_SECRET,
                          DOCASSIST_SLACK_API_URL=api.url),
            cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        wait_healthy(process, port, lambda: process.stderr.read().decode()
                     if process.stderr else "no start")
        try:
            assert slack_event(url, SLACK_QUESTION).status_code == 200
            assert wait_until(lambda: len(api.posted()) == 1)
            assert turns_counted(url) == 1
            assert httpx.get(f"{url}/readyz", timeout=10).json()["ready"] is True
            assert httpx.post(f"{url}/api/messages", json={}).status_code == 404  # no Teams
        finally:
            process.terminate()
            process.communicate(timeout=20)


def test_serve_starts_the_gaps_digest_on_slack_and_teams(db_path: Path) -> None:
    """DOCASSIST_GAPS_DIGEST_CHANNEL names a channel per platform and `serve` starts both
    digests, the first look right at start: Slack's by chat.postMessage, Teams' as a new
    message in the channel's conversation, through the service URL the store learnt from an
    earlier activity of the channel's team."""
    team, admins = "19:team-admins@thread.tacv2", "19:docassist-admins@thread.tacv2"
    port = free_port()
    with FakeSlackApi() as api, FakeConnector() as connector:
        store = Store(db_path)
        store.record_team_address([team, admins], team, connector.url)
        store.close()
        process = start_serve(serve_env(
            str(db_path), SLACK_BOT_TOKEN=BOT_TOKEN, SLACK_SIGNING_SECRET=SIGNING_SECRET,
            DOCASSIST_SLACK_API_URL=api.url, DOCASSIST_TEAMS_ANONYMOUS="true",
            DOCASSIST_GAPS_DIGEST_CHANNEL=f"slack:C-ADMIN,teams:{admins}"), port)
        try:
            assert wait_until(lambda: api.posted() and connector.messages())
        finally:
            process.terminate()
            process.communicate(timeout=20)
    [slack] = api.posted()
    assert (slack["channel"], slack["text"]) == ("C-ADMIN", "No gaps this week.")
    [teams] = connector.messages()
    assert (teams.conversation_id, teams.reply_to_id) == (admins, None)
    assert teams.text == "No gaps this week."


def test_serve_starts_and_slack_answers_when_the_sign_in_service_is_out_of_reach(
        db_path: Path) -> None:
    """Issue 39: with Teams credentials set and Microsoft's sign-in service out of reach,
    Slack on the same server still answers; `/readyz` lists the directory."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    down = f"https://127.0.0.1:{free_port()}"
    with FakeSlackApi() as api:
        process = start_serve(serve_env(
            str(db_path), SLACK_BOT_TOKEN=BOT_TOKEN, SLACK_SIGNING_SECRET=SIGNING_SECRET,
            DOCASSIST_SLACK_API_URL=api.url, DOCASSIST_TEAMS_APP_ID="app-1",
            DOCASSIST_TEAMS_TENANT_ID="tenant-1", DOCASSIST_TEAMS_APP_PASSWORD="pw-9",
            DOCASSIST_GRAPH_AUTHORITY_HOST=down), port)
        try:
            ready = httpx.get(f"{url}/readyz", timeout=10)
            assert ready.status_code == 200, ready.text
            assert ready.json()["checks"]["directory:teams"] == "ok"
            assert ready.json()["degraded"] == []
            assert slack_event(url, SLACK_QUESTION).status_code == 200
            assert wait_until(lambda: len(api.posted()) == 1)
            assert "DOC-TLS-" in slack_seen(api.posted()[0])
        finally:
            process.terminate()
            process.communicate(timeout=20)
