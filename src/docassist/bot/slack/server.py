"""HTTP mode: `POST /slack/events` (events, commands, interactivity) and `GET /healthz`.

The handler only translates HTTP to a BoltRequest and back; Bolt verifies the signature.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Final

from slack_bolt import App
from slack_bolt.request import BoltRequest

EVENTS_PATH: Final = "/slack/events"
HEALTH_PATH: Final = "/healthz"
MAX_BODY_BYTES: Final = 1_000_000
LISTEN_BACKLOG: Final = 128
"""Pending connections the socket holds; the default 5 resets bursts of Slack events."""


def make_server(app: App, host: str, port: int) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def _send(self, status: int, body: bytes, headers: dict[str, str]) -> None:
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

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
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_BODY_BYTES:
                self._send(413, b"too large", {"Content-Type": "text/plain"})
                return
            body = self.rfile.read(length).decode("utf-8")
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
