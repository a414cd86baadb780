"""`docassist slack --http` as a real process: start it, send it a signed event."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx

from docassist_testkit.fakes.loopback import wait_healthy
from docassist_testkit.fakes.slack_api import FakeSlackApi, post_signed_mention
from tests.conftest import REPO

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
    return post_signed_mention(port, SECRET, "How do I renew the TLS certificate?", "EvCrash",
                               "555.1")
