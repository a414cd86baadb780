"""The Slack adapter behind its real HTTP server, driven by signed requests."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
import uuid
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import httpx

from docassist.bot.slack.app import SlackAdapter
from docassist.bot.web import AppServer
from docassist.storage import Store
from docassist_testkit.fakes.slack_api import FakeSlackApi, slack_signature

PANE = {"channel": "D1", "channel_type": "im", "team": "T1", "user": "U1"}
SECRET = "slack-signing-secret"
READ_TIMEOUT = 1.0
"""Short, so that the stalled-client tests end quickly."""
TEAM = "T1"
CHANNEL = "C1"


@dataclass
class SlackRig:
    api: FakeSlackApi
    adapter: SlackAdapter
    url: str
    store: Store
    server: AppServer | None = None

    def send(self, body: str, content_type: str, *, signature: str | None = None,
             retry: int | None = None, wait: bool = True) -> httpx.Response:
        timestamp = str(int(time.time()))
        headers = {"Content-Type": content_type, "X-Slack-Request-Timestamp": timestamp,
                   "X-Slack-Signature": signature or slack_signature(SECRET, timestamp, body)}
        if retry is not None:
            headers["X-Slack-Retry-Num"] = str(retry)
            headers["X-Slack-Retry-Reason"] = "http_timeout"
        response = httpx.post(self.url, content=body.encode(), headers=headers, timeout=10)
        if wait:
            assert self.adapter.worker.wait_idle()
        return response

    def event(self, event: dict[str, Any], event_id: str, **options: Any) -> httpx.Response:
        body = json.dumps({"token": "t", "team_id": TEAM, "api_app_id": "A1",
                           "type": "event_callback", "event_id": event_id,
                           "event_time": 1, "event": event})
        return self.send(body, "application/json", **options)

    def interactive(self, payload: dict[str, Any]) -> httpx.Response:
        return self.send(urlencode({"payload": json.dumps(payload)}),
                         "application/x-www-form-urlencoded")

    def command(self, command: str, text: str, user: str = "U1",
                trigger_id: str | None = None) -> httpx.Response:
        """Slack gives every invocation its own trigger id (a replay repeats one)."""
        return self.send(urlencode({"command": command, "text": text, "team_id": TEAM,
                                    "channel_id": CHANNEL, "user_id": user,
                                    "response_url": "http://127.0.0.1:9/unused",
                                    "trigger_id": trigger_id or f"t-{uuid.uuid4().hex}"}),
                         "application/x-www-form-urlencoded")


def mention(text: str, ts: str, thread_ts: str | None = None, **extra: Any) -> dict[str, Any]:
    event = {"type": "app_mention", "user": "U1", "text": f"<@UBOT> {text}", "ts": ts,
             "channel": CHANNEL, "team": TEAM, **extra}
    if thread_ts:
        event["thread_ts"] = thread_ts
    return event


def channel_message(text: str, ts: str, thread_ts: str | None = None,
                    **extra: Any) -> dict[str, Any]:
    event = {"type": "message", "user": "U1", "text": text, "ts": ts, "channel": CHANNEL,
             "channel_type": "channel", "team": TEAM, **extra}
    if thread_ts:
        event["thread_ts"] = thread_ts
    return event


def feedback_payload(value: str, user: str = "U1") -> dict[str, Any]:
    return {"type": "block_actions", "team": {"id": TEAM}, "user": {"id": user},
            "container": {"type": "message", "channel_id": CHANNEL, "message_ts": "1.1",
                          "thread_ts": "1000.1"},
            "channel": {"id": CHANNEL}, "trigger_id": "tr",
            "actions": [{"action_id": "docassist_feedback", "value": value,
                         "action_ts": "1000.9"}]}


SLACK_ACK_SECONDS = 3.0
"""Slack gives up on a request after 3 s: a client with this timeout stands in for it."""


def signed_head(body: bytes, content_type: str, *, length: str | None = None,
                timestamp: str | None = None) -> bytes:
    stamp = timestamp or str(int(time.time()))
    signature = "v0=" + hmac.new(SECRET.encode(), b"v0:" + stamp.encode() + b":" + body,
                                 hashlib.sha256).hexdigest()  # Slack's scheme, on any bytes
    return (f"POST /slack/events HTTP/1.1\r\nHost: x\r\nContent-Type: {content_type}\r\n"
            f"Content-Length: {length if length is not None else len(body)}\r\n"
            f"X-Slack-Request-Timestamp: {stamp}\r\nX-Slack-Signature: {signature}\r\n"
            "Connection: close\r\n\r\n").encode()


def status_of(answer: bytes) -> int:
    assert answer, "the connection was dropped without a response"
    return int(answer.split(b" ", 2)[1])


def timed_event(rig: SlackRig, event: dict[str, Any], event_id: str,
                retry: int | None = None) -> httpx.Response:
    """Delivered as Slack does: it waits 3 s at most (httpx raises past that)."""
    body = json.dumps({"token": "t", "team_id": "T1", "api_app_id": "A1",
                       "type": "event_callback", "event_id": event_id, "event_time": 1,
                       "event": event})
    stamp = str(int(time.time()))
    headers = {"Content-Type": "application/json", "X-Slack-Request-Timestamp": stamp,
               "X-Slack-Signature": slack_signature(SECRET, stamp, body)}
    if retry is not None:
        headers["X-Slack-Retry-Num"] = str(retry)
    return httpx.post(rig.url, content=body.encode(), headers=headers,
                      timeout=SLACK_ACK_SECONDS)
