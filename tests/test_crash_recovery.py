"""A bot killed after the platform was told "got it" answers once after its restart: one
test over both platforms (Slack over HTTP, Teams), each a real `docassist` process."""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from docassist.storage import Store
from docassist_testkit.fakes.loopback import free_port, kill_replica, wait_until
from docassist_testkit.fakes.slack_api import FakeSlackApi
from docassist_testkit.fakes.teams_connector import FakeConnector
from tests.slack_process import signed_event, start_bot
from tests.teams.process import activity, start_teams


@dataclass(frozen=True)
class Platform:
    fake: Callable[[], AbstractContextManager[Any]]
    """The platform's API, faked on loopback; its `held` event keeps replies from going out."""
    start: Callable[[Path, Any], subprocess.Popen[bytes]]
    send: Callable[[Any, int], httpx.Response]
    accepted: int
    """The HTTP status that tells the platform not to resend."""
    check_delivered: Callable[[Any], None]
    check_running: Callable[[int], None] = lambda port: None


def _slack_start(db: Path, api: FakeSlackApi) -> subprocess.Popen[bytes]:
    return start_bot(db, api, free_port())


def _slack_delivered(api: FakeSlackApi) -> None:
    [post] = api.posted()
    assert post["thread_ts"] == "555.1" and "[1]" in post["blocks"][0]["text"]["text"]
    assert "DOC-TLS-" in str(post["blocks"])  # the marker resolved in the sources


def _slack_running(port: int) -> None:
    assert httpx.get(f"http://127.0.0.1:{port}/healthz").json() == {"ok": True}


def _teams_start(db: Path, connector: FakeConnector) -> subprocess.Popen[bytes]:
    return start_teams(db, free_port())


def _teams_send(connector: FakeConnector, port: int) -> httpx.Response:
    return httpx.post(f"http://127.0.0.1:{port}/api/messages", timeout=30,
                      json=activity(connector, "How do I renew TLS?", "crash-1"))


def _teams_delivered(connector: FakeConnector) -> None:
    [reply] = connector.messages()
    assert reply.reply_to_id == "crash-1" and "DOC-TLS-" in reply.text


CRASH_LEASE_SECONDS = "2"

PLATFORMS = {
    "slack": Platform(FakeSlackApi, _slack_start, lambda api, port: signed_event(port), 200,
                      _slack_delivered, _slack_running),
    "teams": Platform(FakeConnector, _teams_start, _teams_send, 202, _teams_delivered),
}


@pytest.mark.parametrize("name", sorted(PLATFORMS))
def test_killed_after_the_ack_the_restarted_bot_answers_once(
        name: str, db_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The restarted bot takes the event over once the killed one's claim ends: a short
    # DOCASSIST_INBOX_LEASE (both processes read it from the environment) instead of 30 s.
    monkeypatch.setenv("DOCASSIST_INBOX_LEASE", CRASH_LEASE_SECONDS)
    platform = PLATFORMS[name]
    with platform.fake() as fake:
        fake.held = threading.Event()  # the first process never gets its reply out
        first = platform.start(db_path, fake)
        assert isinstance(first.args, list)
        port = int(first.args[-1])
        try:
            platform.check_running(port)
            # acked: the platform will not resend
            assert platform.send(fake, port).status_code == platform.accepted
            store = Store(db_path)
            wait_until(lambda: [row for row in store.inbox_rows() if row["status"] == "answered"])
            assert store.inbox_rows()[0]["status"] == "answered"
        finally:
            kill_replica(first)
        fake.held.set()
        fake.held = None
        second = platform.start(db_path, fake)  # resumes unfinished events on start
        try:
            # done is marked after the platform took the reply
            wait_until(lambda: store.inbox_rows()[0]["status"] == "done")
        finally:
            second.terminate()
            second.wait(10)
    platform.check_delivered(fake)
    assert len(store.turns()) == 1  # answered once, delivered after the restart
    assert store.inbox_rows()[0]["status"] == "done"
    store.close()
