"""A fake Slack Web API on 127.0.0.1 (port 0): records every call, answers like Slack."""

from __future__ import annotations

import itertools
import json
import ssl
import threading
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs

import httpx
import trustme
from slack_sdk.signature import SignatureVerifier

from docassist_testkit.fakes.loopback import (
    FakeServer,
    LoopbackServer,
    QuietHandler,
    Request,
    TlsLoopbackServer,
    wait_until,
)

STREAM_METHODS = ("chat.startStream", "chat.appendStream", "chat.stopStream")


def slack_signature(secret: str, timestamp: str, body: str) -> str:
    """The `X-Slack-Signature` Slack sends with `body` at `timestamp` (v0 HMAC-SHA256)."""
    signature = SignatureVerifier(secret).generate_signature(timestamp=timestamp, body=body)
    assert signature is not None  # None only without a timestamp or a body
    return signature


def post_signed_mention(port: int, secret: str, question: str, event_id: str,
                        ts: str) -> httpx.Response:
    """An `app_mention` in channel C1 as Slack delivers it: signed now with `secret`, posted
    to a DocAssist server's `/slack/events` on 127.0.0.1:`port`."""
    body = json.dumps({"token": "t", "team_id": "T1", "api_app_id": "A1",
                       "type": "event_callback", "event_id": event_id, "event_time": 1,
                       "event": {"type": "app_mention", "user": "U1", "ts": ts,
                                 "channel": "C1", "team": "T1",
                                 "text": f"<@UBOT> {question}"}})
    timestamp = str(int(time.time()))
    return httpx.post(f"http://127.0.0.1:{port}/slack/events", content=body.encode(),
                      headers={"Content-Type": "application/json",
                               "X-Slack-Request-Timestamp": timestamp,
                               "X-Slack-Signature": slack_signature(secret, timestamp, body)},
                      timeout=10)

@dataclass
class Call:
    method: str
    body: dict[str, Any]
    at: float = field(default_factory=time.monotonic)
    """When the call arrived (answer latency in load runs)."""
    reply: dict[str, Any] = field(default_factory=dict)
    """What the fake answered (a stream's `ts`, for instance)."""


@dataclass
class FakeSlackApi(FakeServer):
    calls: list[Call] = field(default_factory=list)
    failures: dict[str, list[int]] = field(default_factory=dict)
    _ts: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    socket_url: str = ""
    reject_blocks: bool = False
    """Answer posts with blocks `ok: false` (as Slack does for invalid blocks)."""
    uploads: list[bytes] = field(default_factory=list)
    held: threading.Event | None = None
    """While set to an unset Event, posts wait for it and are then dropped (a dead client)."""

    def fail(self, method: str, *statuses: int) -> None:
        """Answer the next calls of `method` with these HTTP statuses."""
        self.failures.setdefault(method, []).extend(statuses)

    def posted(self, method: str = "chat.postMessage") -> list[dict[str, Any]]:
        return [call.body for call in self.calls if call.method == method]

    def wait_posted(self, method: str, count: int = 1) -> list[dict[str, Any]]:
        """The calls of `method` once there are `count` (work done in the background, such
        as the assistant pane's prompts and title); what there is after 10 s otherwise."""
        wait_until(lambda: len(self.posted(method)) >= count)
        return self.posted(method)

    def streamed(self) -> list[str]:
        """The text of the stream calls in order (`markdown_text` of chat.startStream,
        .appendStream and .stopStream): what a streamed answer showed, piece by piece."""
        return [str(call.body["markdown_text"]) for call in self.calls
                if call.method in STREAM_METHODS and call.body.get("markdown_text")]

    def messages(self, channel: str, thread_ts: str | None) -> list[dict[str, Any]]:
        """The bot's messages in a thread (or, without `thread_ts`, the channel) as
        `conversations.replies` / `.history` show them: posts, and streams with the blocks
        they were stopped with."""
        found: list[dict[str, Any]] = []
        streams: dict[str, dict[str, Any]] = {}
        for call in list(self.calls):
            body = call.body
            if call.method in ("chat.postMessage", "chat.startStream") and \
                    body.get("channel") == channel and \
                    (thread_ts is None or body.get("thread_ts") == thread_ts):
                message = {"type": "message", "bot_id": "BBOT", "ts": call.reply.get("ts"),
                           "thread_ts": body.get("thread_ts"), "text": body.get("text", ""),
                           "blocks": body.get("blocks") or []}
                if body.get("metadata"):
                    message["metadata"] = body["metadata"]
                streams[str(message["ts"])] = message
                found.append(message)
            elif call.method == "chat.stopStream" and body.get("ts") in streams:
                streams[body["ts"]]["blocks"] = body.get("blocks") or []
        return found

    def answer(self, exchange: QuietHandler, request: Request) -> None:
        if request.path.startswith("/upload/"):
            self.uploads.append(request.raw)
            exchange.reply(200, b"OK", "text/plain")
            return
        method, _, query = request.path.partition("?")
        method = method.removeprefix("/api/")
        raw = request.raw.decode() if request.method == "POST" else query
        if "json" in (request.headers.get("Content-Type") or ""):
            body = json.loads(raw or "{}")
        else:
            body = {k: v[0] for k, v in parse_qs(raw).items()}
            for name in ("blocks", "attachments"):
                if isinstance(body.get(name), str):
                    body[name] = json.loads(body[name])
        if method == "chat.postMessage" and self.held is not None:
            self.held.wait(30)
            _reply(exchange, 500, {"ok": False, "error": "dropped"})
            return
        if method == "chat.postMessage" and self.reject_blocks and body.get("blocks"):
            _reply(exchange, 200, {"ok": False, "error": "invalid_blocks"})
            return
        statuses = self.failures.get(method)
        if statuses:
            _reply(exchange, statuses.pop(0), {"ok": False, "error": "fake_failure"})
            return
        answer: dict[str, Any] = {"ok": True}
        self.calls.append(Call(method, body, reply=answer))
        answer.update(self._method_answer(method, body))
        _reply(exchange, 200, answer)

    def _method_answer(self, method: str, body: dict[str, Any]) -> dict[str, Any]:
        if method == "apps.connections.open":
            return {"url": self.socket_url}
        if method == "chat.getPermalink":
            return {"permalink": f"https://acme.slack.com/archives/"
                                 f"{body.get('channel')}/p{body.get('message_ts')}"}
        if method == "conversations.open":
            return {"channel": {"id": f"D-{body.get('users')}"}}
        if method == "files.getUploadURLExternal":
            return {"upload_url": f"{self.base_url}/upload/F1", "file_id": "F1"}
        if method == "files.completeUploadExternal":
            return {"files": [{"id": "F1", "title": "DocAssist traces"}]}
        if method in ("conversations.replies", "conversations.history"):
            return {"messages": self.messages(
                str(body.get("channel")),
                str(body["ts"]) if method == "conversations.replies" else None),
                "has_more": False}
        if method == "auth.test":
            return {"user_id": "UBOT", "bot_id": "BBOT", "team_id": "T1", "user": "docassist"}
        if method in ("chat.postMessage", "chat.startStream"):
            return {"channel": body.get("channel"), "ts": f"1800000000.{next(self._ts):06d}"}
        return {}

    @property
    def url(self) -> str:
        return f"{self.base_url}/api/"


def _reply(exchange: QuietHandler, status: int, answer: dict[str, Any]) -> None:
    exchange.reply(status, json.dumps(answer).encode(),
                   extra={"Retry-After": "0"} if status == 429 else None)


class TlsSlackApi(FakeSlackApi):
    """The fake Web API over TLS, as slack.com is (a test CA's certificate)."""

    def __init__(self) -> None:
        super().__init__()
        self.ca = trustme.CA()
        self.tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.ca.issue_cert("127.0.0.1").configure_cert(self.tls)

    def make_server(self, handler: type[QuietHandler]) -> LoopbackServer:  # type: ignore[override]
        return TlsLoopbackServer(handler, self.tls)

    @property
    def url(self) -> str:
        return super().url.replace("http://", "https://", 1)
