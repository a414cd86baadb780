"""The Slack HTTP endpoint against requests Slack would never send, stalled clients and a
database locked by another connection: each gets a clean 4xx (or 503, so Slack retries),
never a traceback or a dropped connection, and nothing runs or is stored half."""

from __future__ import annotations

import json
import socket
import threading
import time
from functools import partial
from pathlib import Path
from urllib.parse import urlencode, urlsplit

import httpx
import pytest

from docassist.core import i18n
from docassist.core.tools import ToolRegistry
from docassist.core.trace import sha256_text
from docassist.storage import Store
from docassist_testkit.fakes.loopback import wait_until
from tests.db_locks import WriteLock
from tests.helpers import recording, slack_seen
from tests.slack.rig import (
    READ_TIMEOUT,
    SlackRig,
    channel_message,
    mention,
    signed_head,
    status_of,
    timed_event,
)


def raw_request(rig: SlackRig, head: bytes, body: bytes = b"",
                pause: float | None = None) -> bytes:
    """Send bytes as they are (no client library fixes them up); the raw answer, or b""
    when the server closed the connection without one."""
    address = urlsplit(rig.url)
    with socket.create_connection((address.hostname, address.port), timeout=10) as client:
        client.sendall(head + body)
        if pause is not None:
            time.sleep(pause)
        chunks = []
        while chunk := client.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def nothing_happened(rig: SlackRig) -> None:
    assert rig.api.calls == [] or all(not call.method.startswith("chat.")
                                      for call in rig.api.calls)
    assert rig.store.inbox_rows() == [] and rig.store.turns() == []


@pytest.mark.parametrize(("body", "content_type", "length", "expected"), [
    (b"\xff\xfe not utf-8", "application/json", None, 400),
    (b'{"type": "event_callback", "event": ', "application/json", None, 400),
    (b'["a", "list"]', "application/json", None, 400),
    (b"[" * 100_000, "application/json", None, 400),
    (b"payload=%7Bnot+json", "application/x-www-form-urlencoded", None, 400),
    (b"payload=%FF%FE", "application/x-www-form-urlencoded", None, 400),
    (b"{}", "application/json", "abc", 400),
    (b"{}", "application/json", "-5", 400),
    (b"{}", "application/json", "2000000", 413),
], ids=["not-utf8", "truncated-json", "json-list", "deep-json", "form-payload-not-json",
        "form-payload-not-utf8", "length-abc", "length-negative", "length-huge"])
def test_a_body_slack_would_never_send_is_refused_cleanly(
        rig: SlackRig, registry: ToolRegistry, body: bytes, content_type: str,
        length: str | None, expected: int) -> None:
    with recording(registry, *registry.names()) as recorders:
        answer = raw_request(rig, signed_head(body, content_type, length=length), body)
    assert status_of(answer) == expected
    assert all(recorder.calls == [] for recorder in recorders.values())
    nothing_happened(rig)
    assert httpx.get(rig.url.replace("/slack/events", "/healthz")).status_code == 200


def test_unsigned_garbage_is_refused_before_it_is_parsed(rig: SlackRig) -> None:
    body = b'{"type": "event_callback", "event": '  # truncated, and unsigned
    head = (f"POST /slack/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()
    assert status_of(raw_request(rig, head, body)) == 401
    nothing_happened(rig)


def test_a_timestamp_that_is_not_a_number_is_refused_not_a_500(rig: SlackRig) -> None:
    body = json.dumps({"type": "event_callback", "event_id": "Ev1", "team_id": "T1",
                       "event": mention("How do I renew TLS?", "1.1")}).encode()
    answer = raw_request(rig, signed_head(body, "application/json", timestamp="soon"), body)
    assert status_of(answer) == 401
    nothing_happened(rig)


def test_a_400_digit_timestamp_is_refused_with_401_not_a_500(rig: SlackRig) -> None:
    """Issue 39: the SDK turned it into a float (OverflowError) before comparing."""
    body = json.dumps({"type": "event_callback", "event_id": "Ev1", "team_id": "T1",
                       "event": mention("How do I renew TLS?", "1.1")}).encode()
    for stamp in ("9" * 400, "1" + "0" * 399):
        answer = raw_request(rig, signed_head(body, "application/json", timestamp=stamp), body)
        assert status_of(answer) == 401
    nothing_happened(rig)


def test_a_lone_surrogate_in_the_text_still_gets_one_answer(rig: SlackRig) -> None:
    event = mention("How do I renew the TLS certificate? \\ud800", "2.1")
    body = json.dumps({"type": "event_callback", "event_id": "EvSurrogate", "team_id": "T1",
                       "event": event}).replace("\\\\ud800", "\\ud800")
    assert "\\ud800" in body and "\\\\ud800" not in body  # the escape Slack's JSON carries
    response = rig.send(body, "application/json")
    assert response.status_code == 200
    [answer] = rig.api.posted()
    assert answer["thread_ts"] == "2.1" and "DOC-TLS-" in slack_seen(answer)
    [row] = rig.store.inbox_rows()
    # An answered event keeps hashes only (privacy); the hash is of the repaired text.
    stored = json.loads(row["message"])
    assert row["status"] == "done" and "text" not in stored
    assert stored["text_sha256"] == sha256_text("How do I renew the TLS certificate? \ufffd")


def test_a_button_payload_without_a_channel_is_refused_and_nothing_runs(
        rig: SlackRig, registry: ToolRegistry) -> None:
    payload = {"type": "block_actions", "team": {"id": "T1"}, "user": {"id": "U1"},
               "container": {"type": "message", "message_ts": "1.2"},
               "message": {"ts": "1.2"}, "trigger_id": "tr",
               "actions": [{"action_id": "docassist_show_sources", "action_ts": "3.1"}]}
    with recording(registry, *registry.names()) as recorders:
        no_channel = rig.interactive(payload)
        no_user = rig.interactive({**payload, "channel": {"id": "C1"}, "user": None})
        feedback = rig.interactive({**payload, "actions": [
            {"action_id": "docassist_feedback", "value": "good:r1", "action_ts": "3.2"}]})
        shortcut = rig.interactive({"type": "message_action", "user": {"id": "U1"},
                                    "callback_id": "docassist_clear_thread_shortcut",
                                    "channel": {"id": "C1"}, "trigger_id": "tr2"})
        command = rig.send(urlencode({"command": "/docassist-meta", "text": "DOC-TLS"}),
                           "application/x-www-form-urlencoded")
    assert [r.status_code for r in (no_channel, no_user, feedback, shortcut, command)] == [
        400, 400, 400, 400, 400]
    assert all(recorder.calls == [] for recorder in recorders.values())
    nothing_happened(rig)
    assert rig.store.feedback() == []


def test_a_stalled_client_is_let_go_and_holds_no_thread(rig: SlackRig) -> None:
    address = urlsplit(rig.url)
    server = rig.server
    assert server is not None
    baseline = threading.active_count()
    stalled = []
    for index in range(10):
        client = socket.create_connection((address.hostname, address.port), timeout=10)
        if index % 2:  # half stall in the headers, half in the body
            client.sendall(b"POST /slack/events HTTP/1.1\r\nHost: x\r\n")
        else:
            client.sendall(b"POST /slack/events HTTP/1.1\r\nHost: x\r\n"
                           b"Content-Length: 100\r\n\r\n{\"type\":")
        stalled.append(client)
    # The server is asynchronous: the stalled clients are held as connections, no thread
    # was started for them (http.server, before, held one thread each).
    assert wait_until(lambda: server.open_connections() >= 10, 5)
    assert threading.active_count() <= baseline
    answers = [b"".join(iter(partial(client.recv, 65536), b"")) for client in stalled]
    for client in stalled:
        client.close()
    assert [status_of(a) for a in answers[0::2]] == [408] * 5  # told, then disconnected
    assert answers[1::2] == [b""] * 5  # no request line to answer: disconnected
    assert wait_until(lambda: server.open_connections() == 0, READ_TIMEOUT * 10)
    assert threading.active_count() <= baseline
    assert rig.event(mention("How do I renew the TLS certificate?", "4.1"), "Ev1"
                     ).status_code == 200
    nothing_left = [row["status"] for row in rig.store.inbox_rows()]
    assert nothing_left == ["done"]




def test_acks_stay_within_slacks_3_s_while_another_connection_holds_the_lock(
        rig: SlackRig, db_path: Path) -> None:
    rig.event(mention("How do I renew the TLS certificate?", "5.1"), "EvBefore")
    lock = WriteLock(db_path)
    try:
        first = timed_event(rig, mention("Jak odtworzyć bazę danych z kopii?", "6.1"), "EvLocked")
        follow_up = timed_event(rig, channel_message("And how do I check it worked?", "5.2",
                                                     thread_ts="5.1"), "EvFollowUp")
        docs_command = rig.command("/docassist-docs", "")
    finally:
        lock.release()
    # Not stored in time: 503, so Slack redelivers; the writes went on behind the lock.
    assert (first.status_code, follow_up.status_code) == (503, 503)
    assert docs_command.status_code == 200
    assert rig.adapter.worker.wait_idle()
    assert wait_until(lambda: len(rig.store.turns()) == 3)
    # Slack's retries now find the events stored: acked, not answered a second time.
    assert timed_event(rig, mention("Jak odtworzyć bazę danych z kopii?", "6.1"), "EvLocked",
                       retry=1).status_code == 200
    assert timed_event(rig, channel_message("And how do I check it worked?", "5.2",
                                            thread_ts="5.1"), "EvFollowUp",
                       retry=1).status_code == 200
    assert rig.adapter.worker.wait_idle()
    assert sorted(post["thread_ts"] for post in rig.api.posted()) == ["5.1", "5.1", "6.1"]
    assert sorted(row["event_id"] for row in rig.store.turns()) == [
        "EvBefore", "EvFollowUp", "EvLocked"]
    assert {row["status"] for row in rig.store.inbox_rows()} == {"done"}


def test_an_event_whose_late_write_gives_up_is_told_once_and_answered_on_redelivery(
        rig: SlackRig, store: Store, db_path: Path) -> None:
    store.db.execute("PRAGMA busy_timeout = 1000")  # the store gives up after ~3.3 s
    event = mention("How do I renew the TLS certificate?", "7.1")
    lock = WriteLock(db_path)
    try:
        assert timed_event(rig, event, "EvGivenUp").status_code == 503
        assert wait_until(lambda: len(rig.api.posted()) == 1, 10)  # the write gave up
        assert timed_event(rig, event, "EvGivenUp", retry=1).status_code == 503
    finally:
        lock.release()
    # The first delivery's write gave up (one note); the retry's write lands once the lock
    # is gone and is answered; Slack's last retry is then a duplicate.
    assert wait_until(lambda: len(rig.api.posted()) == 2, 15)
    assert timed_event(rig, event, "EvGivenUp", retry=2).status_code == 200
    assert rig.adapter.worker.wait_idle()
    note, answer = rig.api.posted()
    assert note["thread_ts"] == "7.1" and note["text"] == i18n.text("storage_busy", "en")
    assert answer["thread_ts"] == "7.1" and "DOC-TLS-" in slack_seen(answer)
    assert [row["event_id"] for row in rig.store.turns()] == ["EvGivenUp"]
    assert [row["status"] for row in rig.store.inbox_rows()] == ["done"]
