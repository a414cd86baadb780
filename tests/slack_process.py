"""`docassist slack --http` as a real process: start it, send it a signed event."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.conftest import REPO
from tests.fakes.loopback import wait_healthy
from tests.fakes.slack_api import FakeSlackApi, slack_signature

SECRET = "process-signing-secret"



def start_bot(db: Path, api: FakeSlackApi, port: int) -> subprocess.Popen[bytes]:
    env = {**os.environ, "DOCASSIST_DB": str(db), "SLACK_BOT_TOKEN": "xoxb-process",
           "SLACK_SIGNING_SECRET": SECRET, "DOCASSIST_SLACK_API_URL": api.url}
    process = subprocess.Popen(
        [sys.executable, "-m", "docassist", "slack", "--http", "--port", str(port)],
        env=env, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        start_new_session=True)  # its turn processes die with it (kill_replica)
    return wait_healthy(process, port, lambda: process.stderr.read().decode()
                        if process.stderr else "no start")


def signed_event(port: int) -> httpx.Response:
    body = json.dumps({"token": "t", "team_id": "T1", "api_app_id": "A1",
                       "type": "event_callback", "event_id": "EvCrash", "event_time": 1,
                       "event": {"type": "app_mention", "user": "U1", "ts": "555.1",
                                 "channel": "C1", "team": "T1",
                                 "text": "<@UBOT> How do I renew the TLS certificate?"}})
    timestamp = str(int(time.time()))
    return httpx.post(f"http://127.0.0.1:{port}/slack/events", content=body.encode(),
                      headers={"Content-Type": "application/json",
                               "X-Slack-Request-Timestamp": timestamp,
                               "X-Slack-Signature": slack_signature(SECRET, timestamp, body)},
                      timeout=10)
