"""`docassist slack --http` as a real process: health, and a crash after the ack."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
from slack_sdk.signature import SignatureVerifier

from docassist.storage import Store
from tests.conftest import REPO
from tests.loopback import free_port, wait_healthy, wait_until
from tests.slack_api import FakeSlackApi

SECRET = "process-signing-secret"



def start_bot(db: Path, api: FakeSlackApi, port: int) -> subprocess.Popen[bytes]:
    env = {**os.environ, "DOCASSIST_DB": str(db), "SLACK_BOT_TOKEN": "xoxb-process",
           "SLACK_SIGNING_SECRET": SECRET, "DOCASSIST_SLACK_API_URL": api.url}
    process = subprocess.Popen(
        [sys.executable, "-m", "docassist", "slack", "--http", "--port", str(port)],
        env=env, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
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
                               "X-Slack-Signature": SignatureVerifier(SECRET).generate_signature(
                                   timestamp=timestamp, body=body)}, timeout=10)


def test_killed_after_the_ack_the_restarted_bot_answers_once(db_path: Path) -> None:
    with FakeSlackApi() as api:
        api.held = threading.Event()  # the first process never gets its reply out
        port = free_port()
        first = start_bot(db_path, api, port)
        try:
            assert httpx.get(f"http://127.0.0.1:{port}/healthz").json() == {"ok": True}
            assert signed_event(port).status_code == 200  # acked: Slack will not resend
            store = Store(db_path)
            wait_until(lambda: [row for row in store.inbox_rows() if row["status"] == "answered"])
            assert store.inbox_rows()[0]["status"] == "answered"
        finally:
            first.send_signal(signal.SIGKILL)
            first.wait(10)
        api.held.set()
        api.held = None
        second = start_bot(db_path, api, free_port())  # resumes unfinished events on start
        try:
            # done is marked after the post went out
            wait_until(lambda: store.inbox_rows()[0]["status"] == "done")
        finally:
            second.terminate()
            second.wait(10)
    [post] = api.posted()
    assert post["thread_ts"] == "555.1" and "[DOC-TLS-" in post["blocks"][0]["text"]["text"]
    assert len(store.turns()) == 1  # answered once, delivered after the restart
    assert store.inbox_rows()[0]["status"] == "done"
    store.close()
