"""`docassist teams` as a child process, and the Activities it is sent."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from docassist_testkit.fakes.loopback import wait_healthy
from docassist_testkit.fakes.teams_connector import FakeConnector
from tests.conftest import REPO


def teams_env(db: Path, **extra: str) -> dict[str, str]:
    env = {name: value for name, value in os.environ.items()
           if not name.startswith("DOCASSIST_TEAMS_")}
    return {**env, "DOCASSIST_DB": str(db), **extra}


def start_teams(db: Path, port: int) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(
        [sys.executable, "-m", "docassist", "teams", "--port", str(port)],
        env=teams_env(db, DOCASSIST_TEAMS_ANONYMOUS="true"), cwd=REPO,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return wait_healthy(process, port, lambda: process.stderr.read().decode()
                        if process.stderr else "no start")


def activity(connector: FakeConnector, text: str, activity_id: str,
             **extra: Any) -> dict[str, Any]:
    return {"type": "message", "id": activity_id, "channelId": "msteams",
            "serviceUrl": connector.url, "text": text,
            "from": {"id": "29:u1", "aadObjectId": "aad-u1"},
            "recipient": {"id": "28:bot", "name": "DocAssist"},
            "conversation": {"id": "a:chat-1", "conversationType": "personal",
                             "tenantId": "tenant-1"}, **extra}
