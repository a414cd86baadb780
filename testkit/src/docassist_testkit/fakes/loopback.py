"""The one base of the fakes of external systems (Slack, Teams' Bot Connector, model servers,
web sites): started on 127.0.0.1 port 0 in a thread, a `url`, `stop()`, every request
recorded; and the helpers for child processes (a free port, waiting until healthy)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar, Self

import httpx

PROCESS_START_SECONDS = 180.0
"""How long a test waits for a child process (a bot, a server) to come up: a deadline that
only catches one that never will. At 60 s, four bots missed it with the suite run beside four
busy loops on CI's two cores (three times its load)."""


class QuietHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    """TCP_NODELAY, as production servers commonly set it. Without it, a reply written in two sends
    (headers, then body) on a kept-alive connection waited for the client's delayed ACK:
    the fake model server with a 200 ms delay answered in 245 ms instead of 203 (httpx,
    idle machine), which was the fake's time, not the code under test's."""

    def log_message(self, *args: Any) -> None:
        pass

    def read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def reply(self, status: int, data: bytes, content_type: str = "application/json",
              extra: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in (extra or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


class OneWriteHandler(QuietHandler):
    def reply(self, status: int, data: bytes, content_type: str = "application/json",
              extra: dict[str, str] | None = None) -> None:
        """Headers and body in one write (one send a reply; before QuietHandler set
        TCP_NODELAY, two writes also met the client's delayed ACK)."""
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in (extra or {}).items():
            self.send_header(name, value)
        self._headers_buffer.append(b"\r\n" + data)  # type: ignore[attr-defined]
        self.flush_headers()


class LoopbackServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # bursts of concurrent clients in load tests

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self.accepted = 0
        """Connections accepted so far (kept-alive clients reuse theirs)."""
        super().__init__(("127.0.0.1", 0), handler)
        threading.Thread(target=self.serve_forever, args=(0.05,), daemon=True).start()

    def get_request(self) -> tuple[socket.socket, Any]:
        accepted = super().get_request()
        self.accepted += 1  # on the one serving thread
        return accepted

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that timed out and hung up is part of a test, not an error

    def stop(self) -> None:
        self.shutdown()
        self.server_close()

    @property
    def base_url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}"


class TlsLoopbackServer(LoopbackServer):
    """A loopback server whose accepted connections speak TLS (a test CA's certificate)."""

    def __init__(self, handler: type[BaseHTTPRequestHandler], tls: ssl.SSLContext) -> None:
        self.tls = tls
        super().__init__(handler)

    def get_request(self) -> tuple[socket.socket, Any]:
        connection, address = super().get_request()
        return self.tls.wrap_socket(connection, server_side=True), address


@dataclass
class Request:
    """One request as a fake received it; `body` is JSON when it parses, else text (None
    when empty)."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    raw: bytes = b""


def _decoded(raw: bytes) -> Any:
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode("utf-8", "replace")


@dataclass
class FakeServer:
    """Base of every fake: `start()` (or `with`) serves on 127.0.0.1 port 0 in a thread,
    `url` is where it listens, `stop()` ends it, `requests` holds every request received.
    A fake says how it answers in `answer(exchange, request)`."""

    requests: list[Request] = field(default_factory=list)
    handler: ClassVar[type[QuietHandler]] = QuietHandler
    """The request handler class (a fake may change how replies are written)."""

    def answer(self, exchange: QuietHandler, request: Request) -> None:
        raise NotImplementedError

    def start(self) -> Self:
        owner = self

        class Handler(self.handler):  # type: ignore[name-defined,misc]
            def do_GET(self) -> None:
                owner._receive(self)

            def do_POST(self) -> None:
                owner._receive(self)

            def do_PUT(self) -> None:
                owner._receive(self)

            def do_DELETE(self) -> None:
                owner._receive(self)

        self._server = self.make_server(Handler)
        return self

    def make_server(self, handler: type[BaseHTTPRequestHandler]) -> LoopbackServer:
        """Where the fake listens (a fake speaking TLS returns a TlsLoopbackServer)."""
        return LoopbackServer(handler)

    def _receive(self, exchange: QuietHandler) -> None:
        raw = exchange.read_body()
        request = Request(exchange.command, exchange.path, dict(exchange.headers),
                          _decoded(raw), raw)
        self.requests.append(request)
        self.answer(exchange, request)

    def stop(self) -> None:
        self._server.stop()

    @property
    def connections(self) -> int:
        """TCP connections the fake accepted so far."""
        return self._server.accepted

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        return self._server.base_url

    @property
    def url(self) -> str:
        return self.base_url


def free_port() -> int:
    """A port free right now on 127.0.0.1, for a child process that must be told its port."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_healthy(process: subprocess.Popen[bytes], port: int,
                 describe_failure: Any = lambda: "no start",
                 seconds: float = PROCESS_START_SECONDS) -> subprocess.Popen[bytes]:
    """Wait until the child answers `GET /healthz` on `port`; kill it and fail (with
    `describe_failure()`, e.g. its log) when it dies or does not come up in time."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and process.poll() is None:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return process
        except httpx.HTTPError:
            time.sleep(0.1)
    process.kill()
    process.wait(10)
    raise AssertionError(f"the process did not start: {describe_failure()}")


def children_of(pid: int) -> list[int]:
    """Every thread's children (a process started from a thread is listed under it)."""
    kids: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            kids += [int(kid) for kid in (task / "children").read_text().split()]
        except OSError:  # the thread ended meanwhile
            continue
    return kids


def turn_processes(pid: int) -> list[int]:
    """The `docassist turn-worker` children of the serving process `pid`."""
    return [kid for kid in children_of(pid) if b"turn-worker" in _cmdline(kid)]


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def kill_replica(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL a server started in a session of its own (`start_new_session=True`) together
    with its turn processes: the whole replica dies at once, as when its machine does."""
    with contextlib.suppress(ProcessLookupError):
        if os.getpgid(process.pid) == process.pid:
            os.killpg(process.pid, signal.SIGKILL)
        else:  # not a session of its own: it runs its turns itself
            process.kill()
    process.wait(10)


def wait_until(condition: Callable[[], object], seconds: float = 30.0) -> bool:
    """Poll `condition` until it is true or `seconds` pass; whether it became true."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)
    return True
