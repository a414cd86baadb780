"""HTTP mode: `POST /slack/events` (events, commands, interactivity) and `GET /healthz`.

The handler translates HTTP to a BoltRequest and back; Bolt verifies the signature again and
runs the listeners. Before that, the request itself is checked, so that nothing Slack would
never send reaches Bolt as a traceback or a dropped connection: a Content-Length that is not
a number (400) or too large (413); a body not sent within the read timeout (408); with the
signing secret, a body that is not UTF-8 (400: Slack signs nothing else), then a bad or
missing signature or timestamp (401) — before anything is parsed; a body that is not the
JSON or form it claims to be (400). A client that sends nothing for the read timeout is
disconnected, so stalled connections do not hold server threads.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Final
from urllib.parse import parse_qs

from slack_bolt import App
from slack_bolt.request import BoltRequest
from slack_sdk.signature import SignatureVerifier

from docassist.core.limits import HTTP_READ_TIMEOUT_SECONDS

logger = logging.getLogger(__name__)

EVENTS_PATH: Final = "/slack/events"
HEALTH_PATH: Final = "/healthz"
MAX_BODY_BYTES: Final = 1_000_000
LISTEN_BACKLOG: Final = 128
"""Pending connections the socket holds; the default 5 resets bursts of Slack events."""


class BadRequest(Exception):
    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status


def _is_number(value: str) -> bool:
    value = value.strip()
    return value.isascii() and value.isdigit()


def content_length(headers: Any) -> int:
    raw = headers.get("Content-Length")
    if raw is None:
        return 0
    if not _is_number(raw):  # "abc", "-5", "1e3": not a length
        raise BadRequest(400, "bad Content-Length")
    length = int(raw)
    if length > MAX_BODY_BYTES:
        raise BadRequest(413, "too large")
    return length


def check_signature(verifier: SignatureVerifier | None, headers: Any, body: str) -> None:
    if verifier is None:
        return
    timestamp = headers.get("X-Slack-Request-Timestamp")
    if timestamp is None or not _is_number(timestamp):
        raise BadRequest(401, "invalid request")  # what Bolt says, without a 500 first
    if not verifier.is_valid(body, timestamp, headers.get("X-Slack-Signature")):
        raise BadRequest(401, "invalid request")


def utf8(body: bytes) -> str:
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:  # Slack sends UTF-8 only (and signs nothing else)
        raise BadRequest(400, "body is not UTF-8") from None


def check_content(text: str, content_type: str) -> None:
    """Is the body what its Content-Type says (Bolt would raise while parsing it)?"""
    try:
        if "application/json" in content_type:
            if not isinstance(json.loads(text), dict):
                raise BadRequest(400, "body is not a JSON object")
        else:
            payload = parse_qs(text).get("payload")
            if payload and not isinstance(json.loads(payload[0]), dict):
                raise BadRequest(400, "payload is not a JSON object")
    except (ValueError, RecursionError):
        raise BadRequest(400, "body is not valid JSON") from None


def make_server(app: App, host: str, port: int, *, signing_secret: str | None = None,
                read_timeout: float = HTTP_READ_TIMEOUT_SECONDS) -> ThreadingHTTPServer:
    verifier = SignatureVerifier(signing_secret) if signing_secret else None

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        timeout = read_timeout  # applies to every read of the socket: headers and body

        def log_message(self, *args: Any) -> None:
            pass

        def _send(self, status: int, body: bytes, headers: dict[str, str]) -> None:
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _refuse(self, status: int, reason: str) -> None:
            self.close_connection = True  # the rest of the stream cannot be trusted
            self._send(status, reason.encode(), {"Content-Type": "text/plain",
                                                 "Connection": "close"})

        def do_GET(self) -> None:
            if self.path.split("?")[0] == HEALTH_PATH:
                self._send(200, json.dumps({"ok": True}).encode(),
                           {"Content-Type": "application/json"})
            else:
                self._send(404, b"not found", {"Content-Type": "text/plain"})

        def do_POST(self) -> None:
            if self.path.split("?")[0] != EVENTS_PATH:
                self._send(404, b"not found", {"Content-Type": "text/plain"})
                return
            try:
                length = content_length(self.headers)
                raw = self.rfile.read(length)
                if len(raw) < length:
                    raise BadRequest(400, "body shorter than its Content-Length")
                body = utf8(raw)
                check_signature(verifier, self.headers, body)
                check_content(body, self.headers.get("Content-Type") or "")
            except TimeoutError:
                self._refuse(408, "request timeout")
                return
            except BadRequest as problem:
                logger.warning("Slack request refused (%d): %s", problem.status, problem)
                self._refuse(problem.status, str(problem))
                return
            headers: dict[str, str | Sequence[str]] = {
                name.lower(): value for name, value in self.headers.items()}
            response = app.dispatch(BoltRequest(body=body, headers=headers))
            out_headers = {name: values[0] for name, values in response.headers.items()
                           if values and name.lower() != "content-length"}
            self._send(response.status, (response.body or "").encode("utf-8"), out_headers)

    return _Server((host, port), Handler)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = LISTEN_BACKLOG


def serve_in_thread(server: ThreadingHTTPServer) -> threading.Thread:
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    return thread
