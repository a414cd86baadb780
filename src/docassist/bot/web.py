"""The one asynchronous HTTP server every platform mounts its routes on (aiohttp).

A platform package exposes `mount(app, ...)`, which adds its routes to any
`web.Application`; `docassist serve` mounts both platforms on one application, `docassist
slack --http` and `docassist teams` mount one. This module runs such an application:
`serve` until a future completes, or `AppServer` on its own event loop in a thread (tests,
benches, embedding).

Stalled clients: aiohttp closes a connection that has not sent a complete request line and
headers within its keep-alive timeout (counted from the connection's start or its last
response), so the timeout is set to HTTP_READ_TIMEOUT_SECONDS — a client stalled in its
headers is disconnected without an answer (there is no request to answer). A body not sent
in time is each handler's to refuse (`read_body`: 408).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Final

from aiohttp import web

from docassist.bot.limits import MAX_BODY_BYTES
from docassist.core.limits import HTTP_READ_TIMEOUT_SECONDS

HEALTH_PATH: Final = "/healthz"
LISTEN_BACKLOG: Final = 128
"""Pending connections the socket holds; a small backlog resets bursts of Slack events."""
LINGER_SECONDS: Final = 1.0
"""After refusing a body it did not read, the server reads and drops what the client still
sends for this long before closing, so the client sees the answer rather than a reset
(aiohttp's default, 10 s, kept a client that announced 2 MB and sent 2 bytes waiting)."""


class BodyRefused(Exception):
    """A request body that cannot be used: answered with `status`, nothing run."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status


def declared_length(request: web.Request) -> int:
    """The Content-Length, checked before anything is read (aiohttp itself answers 400 to
    one that is not a number)."""
    length = request.content_length or 0
    if length > MAX_BODY_BYTES:
        raise BodyRefused(413, "too large")
    return length


async def read_body(request: web.Request, timeout: float) -> bytes:
    """The whole body, or BodyRefused: 413 when too large, 408 when not sent in time, 400
    when the client hung up before sending what it announced."""
    declared_length(request)
    try:
        return await asyncio.wait_for(request.read(), timeout)
    except TimeoutError:
        raise BodyRefused(408, "request timeout") from None
    except web.HTTPRequestEntityTooLarge:  # chunked bodies have no length to check first
        raise BodyRefused(413, "too large") from None
    except (ConnectionError, asyncio.IncompleteReadError):
        raise BodyRefused(400, "body shorter than its Content-Length") from None


@dataclass(frozen=True)
class RawRequest:
    """A request as a platform without its own aiohttp code sees it (Slack: Bolt's App is
    synchronous and knows nothing of aiohttp): the whole body, read and size-checked."""

    body: bytes
    headers: Mapping[str, str]


@dataclass(frozen=True)
class RawResponse:
    status: int
    body: bytes
    headers: dict[str, str]


RawHandler = Callable[[RawRequest], Awaitable[RawResponse]]


@dataclass(frozen=True)
class Route:
    """A POST route of a platform, in no server's terms; `add_routes` mounts it."""

    path: str
    handler: RawHandler
    close: Callable[[], None] | None = None
    """Called when the server stops (a handler's thread pool)."""


def add_routes(app: web.Application, routes: list[Route],
               read_timeout: float = HTTP_READ_TIMEOUT_SECONDS) -> None:
    """Mount platform routes: the body is read here (408, 413, 400 as `read_body` says);
    a handler's BodyRefused becomes its status, with the connection closed."""
    for route in routes:
        app.router.add_post(route.path, _aiohttp_handler(route.handler, read_timeout))
        if route.close is not None:
            app.on_cleanup.append(_cleanup(route.close))


def _cleanup(close: Callable[[], None]) -> Callable[[web.Application], Awaitable[None]]:
    async def cleanup(_app: web.Application) -> None:
        close()

    return cleanup


def _aiohttp_handler(handler: RawHandler, read_timeout: float
                     ) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
    async def handle(request: web.Request) -> web.StreamResponse:
        try:
            body = await read_body(request, read_timeout)
            answer = await handler(RawRequest(body, request.headers))
        except BodyRefused as problem:
            return refusal(problem)
        return web.Response(status=answer.status, body=answer.body, headers=answer.headers)

    return handle


def refusal(problem: BodyRefused) -> web.Response:
    """The answer to a refused body; the connection is closed (the rest of the stream cannot
    be trusted)."""
    return web.Response(status=problem.status, text=str(problem),
                        headers={"Connection": "close"})


async def health(_request: web.Request) -> web.Response:
    """The process is up (readiness is /readyz in `docassist serve`)."""
    return web.json_response({"ok": True})


def new_application() -> web.Application:
    """An application with /healthz; platforms mount their routes on it."""
    app = web.Application(client_max_size=MAX_BODY_BYTES)
    app.router.add_get(HEALTH_PATH, health)
    return app


def json_response(body: object, status: int = 200) -> web.Response:
    return web.Response(status=status, text=json.dumps(body), content_type="application/json")


async def serve(app: web.Application, host: str, port: int,
                on_ready: Callable[[int], None], stop: Awaitable[object],
                read_timeout: float = HTTP_READ_TIMEOUT_SECONDS) -> None:
    """Serve until `stop` completes; `on_ready` gets the bound port (useful with port 0)."""
    await serve_with(runner_for(app, read_timeout), host, port, on_ready, stop)


def runner_for(app: web.Application, read_timeout: float) -> web.AppRunner:
    return web.AppRunner(app, access_log=None, keepalive_timeout=read_timeout,
                         lingering_time=LINGER_SECONDS)


async def serve_with(runner: web.AppRunner, host: str, port: int,
                     on_ready: Callable[[int], None], stop: Awaitable[object]) -> None:
    await runner.setup()
    site = web.TCPSite(runner, host, port, backlog=LISTEN_BACKLOG)
    await site.start()
    sockets = runner.addresses
    on_ready(int(sockets[0][1]) if sockets else port)
    try:
        await stop
    finally:
        await runner.cleanup()


def run_forever(app: web.Application, host: str, port: int,
                on_ready: Callable[[int], None]) -> None:
    """Serve in this thread until interrupted (the command-line servers)."""
    async def run() -> None:
        await serve(app, host, port, on_ready, asyncio.get_running_loop().create_future())

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(run())


class AppServer:
    """An application on its own event loop in a background thread (tests, benches)."""

    def __init__(self, app: web.Application, host: str = "127.0.0.1", port: int = 0,
                 read_timeout: float = HTTP_READ_TIMEOUT_SECONDS) -> None:
        self.app = app
        self.host = host
        self.port = port
        self.runner = runner_for(app, read_timeout)
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Future[None] | None = None
        self._thread = threading.Thread(target=self._run, daemon=True, name="http-server")

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        self._stop = loop.create_future()

        def ready(port: int) -> None:
            self.port = port
            self._ready.set()

        loop.run_until_complete(serve_with(self.runner, self.host, self.port, ready,
                                           self._stop))
        loop.close()

    def start(self, timeout: float = 10.0) -> int:
        self._thread.start()
        if not self._ready.wait(timeout):
            raise RuntimeError("the HTTP server did not start")
        return self.port

    def open_connections(self) -> int:
        """Connections the server holds now (stalled clients included)."""
        server = self.runner.server
        return len(server.connections) if server is not None else 0

    @property
    def server_address(self) -> tuple[str, int]:
        return self.host, self.port

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def stop(self) -> None:
        """Stop serving (again: nothing)."""
        if self._loop is not None and self._stop is not None and not self._loop.is_closed():
            stop = self._stop

            def finish() -> None:
                if not stop.done():
                    stop.set_result(None)

            self._loop.call_soon_threadsafe(finish)
        self._thread.join(timeout=10)

    # The names of http.server's servers, which the Slack tests and benches call.
    def shutdown(self) -> None:
        self.stop()

    def server_close(self) -> None:
        self.stop()
