"""`docassist serve` starts whatever state an optional dependency is in (issue 39): with
Teams credentials set and Microsoft's sign-in service out of reach, Slack on the same server
still answers, and `/readyz` lists the directory among its checks."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.bot.test_serve_process import (
    BOT_TOKEN,
    SIGNING_SECRET,
    SLACK_QUESTION,
    serve_env,
    slack_event,
    start_serve,
)
from tests.fakes.loopback import free_port, wait_until
from tests.fakes.slack_api import FakeSlackApi


def test_serve_starts_and_slack_answers_when_the_sign_in_service_is_out_of_reach(
        db_path: Path) -> None:
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
            assert "[DOC-TLS-" in api.posted()[0]["text"]
        finally:
            process.terminate()
            process.communicate(timeout=20)
