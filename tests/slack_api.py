"""A fake Slack Web API on 127.0.0.1 (port 0): records every call, answers like Slack."""

from __future__ import annotations

import itertools
import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs

from tests.loopback import LoopbackServer, QuietHandler


@dataclass
class Call:
    method: str
    body: dict[str, Any]
    at: float = field(default_factory=time.monotonic)
    """When the call arrived (answer latency in load runs)."""
    reply: dict[str, Any] = field(default_factory=dict)
    """What the fake answered (a stream's `ts`, for instance)."""


@dataclass
class FakeSlackApi:
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

    def __enter__(self) -> FakeSlackApi:
        owner = self

        class Handler(QuietHandler):
            def do_GET(self) -> None:
                self.do_POST()

            def do_POST(self) -> None:
                if self.path.startswith("/upload/"):
                    owner.uploads.append(self.read_body())
                    self.reply(200, b"OK", "text/plain")
                    return
                method, _, query = self.path.partition("?")
                method = method.removeprefix("/api/")
                raw = self.read_body().decode() if self.command == "POST" else query
                if "json" in (self.headers.get("Content-Type") or ""):
                    body = json.loads(raw or "{}")
                else:
                    body = {k: v[0] for k, v in parse_qs(raw).items()}
                    for name in ("blocks", "attachments"):
                        if isinstance(body.get(name), str):
                            body[name] = json.loads(body[name])
                if method == "chat.postMessage" and owner.held is not None:
                    owner.held.wait(30)
                    self._reply(500, {"ok": False, "error": "dropped"})
                    return
                if method == "chat.postMessage" and owner.reject_blocks and body.get("blocks"):
                    self._reply(200, {"ok": False, "error": "invalid_blocks"})
                    return
                statuses = owner.failures.get(method)
                if statuses:
                    status = statuses.pop(0)
                    self._reply(status, {"ok": False, "error": "fake_failure"})
                    return
                answer: dict[str, Any] = {"ok": True}
                owner.calls.append(Call(method, body, reply=answer))
                if method == "apps.connections.open":
                    answer.update(url=owner.socket_url)
                elif method == "chat.getPermalink":
                    answer.update(permalink=f"https://acme.slack.com/archives/"
                                            f"{body.get('channel')}/p{body.get('message_ts')}")
                elif method == "conversations.open":
                    answer.update(channel={"id": f"D-{body.get('users')}"})
                elif method == "files.getUploadURLExternal":
                    base = owner._server.base_url
                    answer.update(upload_url=f"{base}/upload/F1", file_id="F1")
                elif method == "files.completeUploadExternal":
                    answer.update(files=[{"id": "F1", "title": "DocAssist traces"}])
                elif method in ("conversations.replies", "conversations.history"):
                    answer.update(messages=owner.messages(
                        str(body.get("channel")),
                        str(body["ts"]) if method == "conversations.replies" else None),
                        has_more=False)
                elif method == "auth.test":
                    answer.update(user_id="UBOT", bot_id="BBOT", team_id="T1", user="docassist")
                elif method in ("chat.postMessage", "chat.startStream"):
                    answer.update(channel=body.get("channel"),
                                  ts=f"1800000000.{next(owner._ts):06d}")
                self._reply(200, answer)

            def _reply(self, status: int, answer: dict[str, Any]) -> None:
                self.reply(status, json.dumps(answer).encode(),
                           extra={"Retry-After": "0"} if status == 429 else None)

        self._server = LoopbackServer(Handler)
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.stop()

    @property
    def url(self) -> str:
        return f"{self._server.base_url}/api/"
