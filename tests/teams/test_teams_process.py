"""`docassist teams` as a real process: configuration errors, anonymous mode said loudly,
inline replies, and a crash after the activity was stored."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx

from docassist_testkit.fakes.loopback import free_port
from docassist_testkit.fakes.teams_connector import FakeConnector, card_text
from tests.conftest import REPO
from tests.teams.process import activity, start_teams, teams_env


def test_without_credentials_it_refuses_to_start(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "docassist", "teams", "--port", "0"],
                          env=teams_env(tmp_path / "x.db"), cwd=REPO, capture_output=True,
                          timeout=60)
    assert done.returncode != 0
    message = done.stderr.decode()
    assert "DOCASSIST_TEAMS_APP_ID" in message and "DOCASSIST_TEAMS_APP_PASSWORD" in message
    assert "DOCASSIST_TEAMS_ANONYMOUS=true" in message
    assert not (tmp_path / "x.db").exists()  # nothing opened, nothing indexed


def test_anonymous_mode_warns_and_replies_inline(db_path: Path) -> None:
    port = free_port()
    process = start_teams(db_path, port)
    try:
        with FakeConnector() as connector:
            response = httpx.post(
                f"http://127.0.0.1:{port}/api/messages", timeout=30,
                json=activity(connector, "How do I renew the TLS certificate?", "p-1",
                              deliveryMode="expectReplies"))
            [reply] = response.json()["activities"]
            assert "DOC-TLS-" in card_text(reply["attachments"][0]["content"])
            assert connector.sent == []
    finally:
        process.terminate()
        stderr = process.communicate(timeout=10)[1].decode()
    assert "WITHOUT authentication" in stderr


def test_a_bad_worker_count_is_a_configuration_error(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "docassist", "teams", "--port", "0"],
                          env=teams_env(tmp_path / "x.db", DOCASSIST_TEAMS_ANONYMOUS="true",
                                        DOCASSIST_INBOX_WORKERS="0"),
                          cwd=REPO, capture_output=True, timeout=60)
    assert done.returncode == 2
    assert "DOCASSIST_INBOX_WORKERS='0'" in done.stderr.decode()


def test_a_bad_teams_setting_names_its_variable_not_pydantics_dump(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "docassist", "teams", "--port", "0"],
                          env=teams_env(tmp_path / "x.db", DOCASSIST_TEAMS_ANONYMOUS="maybe"),
                          cwd=REPO, capture_output=True, timeout=60)
    assert done.returncode == 2
    stderr = done.stderr.decode()
    assert "DOCASSIST_TEAMS_ANONYMOUS='maybe'" in stderr
    assert "errors.pydantic.dev" not in stderr and "Traceback" not in stderr
    package = subprocess.run([sys.executable, "-m", "docassist", "teams-package", "--json"],
                             env=teams_env(tmp_path / "x.db", DOCASSIST_TEAMS_ANONYMOUS="maybe"),
                             cwd=REPO, capture_output=True, timeout=60)
    assert package.returncode == 2 and package.stdout.count(b"\n{") == 0
    assert "DOCASSIST_TEAMS_ANONYMOUS='maybe'" in json.loads(package.stdout)["error"]
