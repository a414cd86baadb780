"""`docassist serve`'s application in process: Slack and Teams on one port (the shared
scenario and Teams' expectReplies), /metrics counting exactly the turns run, /readyz, and
requests no platform would send — each refused with a 4xx or a timeout, never a dropped
connection or a traceback, on both platforms' paths."""

from __future__ import annotations

import itertools
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from docassist.bot.slack.app import SlackAdapter, SlackConfig
from docassist.bot.teams.runner import TeamsEndpoint
from docassist.bot.web import AppServer
from docassist.config import Settings, TeamsSettings
from docassist.core.extractive import ExtractiveAnswerer
from docassist.core.tools import ToolRegistry
from docassist.core.turn import TurnEngine
from docassist.runtime import Runtime
from docassist.serving.metrics import Metrics
from docassist.serving.server import Platforms, build_app
from docassist.storage import Store
from docassist.storage.dense import HybridRetriever
from docassist_testkit.fakes.loopback import wait_until
from docassist_testkit.fakes.slack_api import FakeSlackApi
from docassist_testkit.fakes.teams_connector import FakeConnector, card_text
from tests.db_locks import WriteLock
from tests.helpers import rules_selector
from tests.shared_scenario import (
    EXPECTED_STATUSES,
    SCRIPT,
    outcomes,
    run_cli,
    run_slack,
    run_teams,
)
from tests.slack.rig import SECRET, SlackRig, mention, signed_head, status_of, timed_event
from tests.teams.rig import ADMIN, TeamsRig

READ_TIMEOUT = 1.0


@dataclass
class Served:
    url: str
    slack: SlackRig
    teams: TeamsRig
    metrics: Metrics
    engine: TurnEngine
    server: AppServer

    def turns_counted(self) -> float:
        text = httpx.get(f"{self.url}/metrics", timeout=10).text
        return sum(sample.value for family in text_string_to_metric_families(text)
                   if family.name == "docassist_turns"
                   for sample in family.samples if sample.name == "docassist_turns_total")


@pytest.fixture
def served(store: Store, registry: ToolRegistry, hybrid: HybridRetriever,
           db_path: Path) -> Iterator[Served]:
    metrics = Metrics(store)
    engine = TurnEngine(store=store, catalog=store, retriever=hybrid, selector=rules_selector(),
                        answerer=ExtractiveAnswerer(), registry=registry, observer=metrics)
    runtime = Runtime(settings=Settings(db=db_path, embedder="none", retriever="bm25"),
                      store=store, engine=engine, retrievers={})
    with FakeSlackApi() as api, FakeConnector() as connector:
        slack = SlackAdapter(engine, store, SlackConfig(
            bot_token="xoxb-test", signing_secret=SECRET, api_url=api.url,
            admin_users=frozenset({"UADMIN"}), human_channel="C-HUMANS"))
        teams = TeamsEndpoint(runtime, TeamsSettings(anonymous=True, admin_users=ADMIN))
        app = build_app(runtime, metrics, Platforms(slack=slack, teams=teams), READ_TIMEOUT)
        server = AppServer(app, read_timeout=READ_TIMEOUT)
        server.start()
        url = server.url
        yield Served(url, SlackRig(api, slack, f"{url}/slack/events", store, server),
                     TeamsRig(connector, teams.adapter, f"{url}/api/messages", store,
                              itertools.count(1)), metrics, engine, server)
        server.stop()
        slack.close()
        teams.adapter.worker.close()


def test_both_platforms_on_one_port_give_the_shared_scenarios_results(
        served: Served, store: Store) -> None:
    run_cli(served.engine)
    run_slack(served.slack)
    run_teams(served.teams)
    cli, slack, teams = (outcomes(store, platform) for platform in ("cli", "slack", "teams"))
    assert [turn["status"] for turn in cli] == EXPECTED_STATUSES
    # As in tests/test_shared_scenario.py: Slack's slash command runs outside the thread,
    # so it is answered in the default language; everything else is the same.
    meta = SCRIPT.index(("meta", "DOC-TLS"))
    worded = ("language", "answer_sha256")
    assert [{k: v for k, v in turn.items() if index != meta or k not in worded}
            for index, turn in enumerate(slack)] == [
        {k: v for k, v in turn.items() if index != meta or k not in worded}
        for index, turn in enumerate(cli)]
    assert teams == cli
    inline = served.teams.post(served.teams.activity("Jak odnowić certyfikat TLS?"),
                               expect_replies=True)
    [reply] = inline.json()["activities"]
    assert "DOC-TLS-" in card_text(reply["attachments"][0]["content"])
    assert httpx.get(f"{served.url}/healthz").json() == {"ok": True}


def test_metrics_count_exactly_the_turns_run_on_both_platforms(served: Served) -> None:
    before = served.turns_counted()
    served.slack.event(mention("How do I renew the TLS certificate?", "9.1"), "EvM1")
    served.slack.event(mention("Jak odtworzyć bazę danych z kopii?", "9.2"), "EvM2")
    served.slack.event(mention("How do I renew the TLS certificate?", "9.1"), "EvM1",
                       retry=1)  # Slack's retry: no second turn
    served.teams.post(served.teams.activity("How do I renew the TLS certificate?"))
    assert served.turns_counted() - before == 3
    text = httpx.get(f"{served.url}/metrics").text
    families = {family.name: family for family in text_string_to_metric_families(text)}
    answered = [sample for sample in families["docassist_turns"].samples
                if sample.name == "docassist_turns_total"
                and sample.labels == {"status": "answered", "decision": "action_proposed"}]
    assert [sample.value for sample in answered] == [3.0]
    searches = [sample.value for sample in families["docassist_retrieval_duration_seconds"]
                .samples if sample.name.endswith("_count")]
    assert sum(searches) >= 3
    assert families["docassist_inbox_pending"].samples[0].value == 0
    assert httpx.get(f"{served.url}/metrics").headers["content-type"].startswith("text/plain")


def test_readyz_says_ready_and_why_it_would_not_be(served: Served, store: Store) -> None:
    ready = httpx.get(f"{served.url}/readyz", timeout=10)
    assert ready.status_code == 200
    assert ready.json()["ready"] is True and ready.json()["checks"]["database"] == "writable"
    store.db.execute("PRAGMA query_only = ON")  # SQLite refuses every write from here on
    try:
        refused = httpx.get(f"{served.url}/readyz", timeout=10)
    finally:
        store.db.execute("PRAGMA query_only = OFF")
    assert refused.status_code == 503
    assert refused.json()["ready"] is False and refused.json()["reason"].startswith("database")
    assert httpx.get(f"{served.url}/healthz").status_code == 200  # up, just not ready


def raw(served: Served, head: bytes, body: bytes = b"") -> bytes:
    address = urlsplit(served.url)
    with socket.create_connection((address.hostname, address.port), timeout=10) as client:
        client.sendall(head + body)
        return b"".join(iter(lambda: client.recv(65536), b""))


def head(path: str, content_type: str, length: str) -> bytes:
    return (f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: {content_type}\r\n"
            f"Content-Length: {length}\r\nConnection: close\r\n\r\n").encode()


@pytest.mark.parametrize(("path", "body", "content_type", "length", "expected"), [
    ("/api/messages", b"\xff\xfe not utf-8", "application/json", None, 400),
    ("/api/messages", b'{"type": "message", ', "application/json", None, 400),
    ("/api/messages", b"text=hello", "application/x-www-form-urlencoded", None, 400),
    ("/api/messages", b"{}", "application/json", "abc", 400),
    ("/api/messages", b"{}", "application/json", "-5", 400),
    ("/api/messages", b"{}", "application/json", "2000000", 413),
    ("/slack/events", b"\xff\xfe not utf-8", "application/json", None, 400),
    ("/slack/events", b'{"type": "event_callback", ', "application/json", None, 400),
    ("/slack/events", b"payload=%7Bnot+json", "application/x-www-form-urlencoded", None, 400),
    ("/slack/events", b"{}", "application/json", "abc", 400),
    ("/slack/events", b"{}", "application/json", "2000000", 413),
], ids=["teams-not-utf8", "teams-not-json", "teams-form", "teams-length-abc",
        "teams-length-negative", "teams-too-large", "slack-not-utf8", "slack-not-json",
        "slack-form-not-json", "slack-length-abc", "slack-too-large"])
def test_a_request_no_platform_would_send_gets_a_4xx(
        served: Served, store: Store, path: str, body: bytes, content_type: str,
        length: str | None, expected: int) -> None:
    if path == "/slack/events":
        request = signed_head(body, content_type, length=length)
    else:
        request = head(path, content_type, length if length is not None else str(len(body)))
    answer = raw(served, request, body)
    assert status_of(answer) == expected
    assert b"Traceback" not in answer
    assert store.inbox_rows() == [] and store.turns() == []
    assert served.slack.api.posted() == [] and served.teams.connector.messages() == []
    assert httpx.get(f"{served.url}/healthz").status_code == 200


def test_stalled_clients_are_timed_out_on_both_paths(served: Served) -> None:
    address = urlsplit(served.url)
    clients = []
    for path in ("/slack/events", "/api/messages"):
        client = socket.create_connection((address.hostname, address.port), timeout=10)
        client.sendall(f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
                       "\r\nContent-Length: 100\r\n\r\n{\"type\":".encode())
        clients.append(client)
    answers = [b"".join(iter(partial(client.recv, 65536), b"")) for client in clients]
    for client in clients:
        client.close()
    assert [status_of(answer) for answer in answers] == [408, 408]
    assert wait_until(lambda: served.server.open_connections() == 0, READ_TIMEOUT * 10)


def test_slack_acks_within_3_s_while_the_database_is_locked(served: Served,
                                                              db_path: Path) -> None:
    lock = WriteLock(db_path)
    started = time.monotonic()
    try:
        locked = timed_event(served.slack, mention("How do I renew the TLS certificate?",
                                                   "8.1"), "EvLocked")
        health = httpx.get(f"{served.url}/healthz", timeout=3)
    finally:
        lock.release()
    assert locked.status_code == 503 and time.monotonic() - started < 3.0
    assert health.status_code == 200  # the event loop was never blocked by the lock
    assert served.slack.adapter.worker.wait_idle()
    assert wait_until(lambda: len(served.slack.api.posted()) == 1)  # stored late, answered


def test_a_chunked_body_over_the_limit_gets_413(served: Served, store: Store) -> None:
    chunk = b"x" * 65536
    body = b"".join(b"%x\r\n" % len(chunk) + chunk + b"\r\n" for _ in range(20)) + b"0\r\n\r\n"
    request = (b"POST /api/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
               b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n")
    assert status_of(raw(served, request, body)) == 413
    assert store.inbox_rows() == []


def test_a_client_that_hangs_up_mid_body_is_let_go(served: Served, store: Store) -> None:
    address = urlsplit(served.url)
    with socket.create_connection((address.hostname, address.port), timeout=10) as client:
        client.sendall(head("/slack/events", "application/json", "100") + b'{"type":')
        client.shutdown(socket.SHUT_WR)  # no more bytes will come
        answer = b"".join(iter(lambda: client.recv(65536), b""))
    # The client gave up on its own request: the connection is closed, nothing half-read is
    # used or stored, and the server goes on.
    assert answer == b""
    assert wait_until(lambda: served.server.open_connections() == 0, READ_TIMEOUT * 10)
    assert store.inbox_rows() == []
    assert httpx.get(f"{served.url}/healthz").status_code == 200
