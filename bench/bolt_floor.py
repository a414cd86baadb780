"""The ack floor: a bare Bolt app that only acks, as a process (bench/burst.py starts it).

    python bench/bolt_floor.py --port 3000 --api-url http://127.0.0.1:PORT \\
        [--server aiohttp+threads|aiohttp|http.server] [--store SQLITE_FILE]

Same Bolt version as the product (it is the installed `slack_bolt`), the same fake Web API
(`--api-url`), the same signing secret check, and by default the same server kind as
`docassist slack --http`:
- `aiohttp+threads` (default, ours): a synchronous Bolt `App` mounted exactly as
  `bot/slack/runner.serve` mounts the product's — the product's own `SlackEvents` route
  (its request checks, Bolt's `dispatch` on its thread pool of SLACK_DISPATCH_THREADS)
  added by `bot/web.add_routes` to `bot/web.new_application()` and served by
  `bot/web.run_forever` (same read timeout, backlog and keep-alive). The code is reused,
  not copied, so the floor follows the product's server when it changes.
- `aiohttp`: a Bolt `AsyncApp` through Bolt's own aiohttp adapter (no thread pool).
- `http.server`: the sync `App` behind a `ThreadingHTTPServer`, a thread per connection
  (what HTTP mode ran before it moved to aiohttp).
Its listeners do nothing but ack: whatever the product adds on the ack path (storing the
event, admission, turns running beside it) is the difference.

With `--store` (the durable floor) they first write the event to an SQLite file, as little as
an app that keeps the inbox's promise (nothing acked is lost) can do: what durability itself
costs, apart from everything else the product does.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

SERVER_KINDS = ("aiohttp+threads", "aiohttp", "http.server")
DEFAULT_SERVER = SERVER_KINDS[0]
SECRET_ENV = "SLACK_SIGNING_SECRET"
HEALTH_PATH = "/healthz"
EVENTS_PATH = "/slack/events"


def sync_app(secret: str, api_url: str, store: Path | None = None) -> Any:
    """A synchronous Bolt App configured as the product's (bot/slack/app.py) that only acks;
    with `store`, it first writes each event durably there (`durable_writer`)."""
    from slack_bolt import App
    from slack_sdk import WebClient

    app = App(signing_secret=secret, client=WebClient(token="xoxb-floor", base_url=api_url),
              process_before_response=True)
    keep = durable_writer(store) if store is not None else lambda _body: None

    @app.event("app_mention")
    def mention(ack: Any, body: dict[str, Any]) -> None:
        keep(body)
        ack()

    @app.event("message")
    def message(ack: Any, body: dict[str, Any]) -> None:
        keep(body)
        ack()

    return app


def durable_writer(path: Path) -> Callable[[dict[str, Any]], object]:
    """Store-before-ack at its simplest: the event's JSON as one row of a WAL-mode SQLite file
    (fsync at commit, as the product's inbox), events that arrive together sharing one
    transaction through the product's group commit; returns once the row is committed.
    No admission, no dedupe, no turns."""
    import sqlite3

    from docassist.storage.group_commit import GroupCommit

    connection = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
    connection.execute("PRAGMA journal_mode = WAL")
    connection.execute("CREATE TABLE IF NOT EXISTS events (event_id TEXT PRIMARY KEY, body TEXT)")

    def write(bodies: list[dict[str, Any]]) -> list[None]:
        connection.execute("BEGIN IMMEDIATE")
        connection.executemany("INSERT OR IGNORE INTO events VALUES (?, ?)",
                               [(body.get("event_id"), json.dumps(body)) for body in bodies])
        connection.execute("COMMIT")
        return [None] * len(bodies)

    return GroupCommit(write).submit


def serve_aiohttp_threads(secret: str, api_url: str, host: str, port: int,
                          store: Path | None = None) -> None:
    from docassist.bot.slack.server import SlackEvents
    from docassist.bot.web import add_routes, new_application, run_forever

    app = new_application()
    add_routes(app, SlackEvents(sync_app(secret, api_url, store), secret).routes())
    run_forever(app, host, port, lambda _port: None)


def serve_http_server(secret: str, api_url: str, host: str, port: int) -> None:
    from slack_bolt.request import BoltRequest

    bolt = sync_app(secret, api_url)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as the load's clients expect

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def answer(self, status: int, body: bytes, headers: dict[str, str]) -> None:
            self.send_response(status)
            for name, value in headers.items():
                if name.lower() != "content-length":
                    self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            self.answer(200, b'{"ok": true}', {"Content-Type": "application/json"})

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            headers: dict[str, str | Sequence[str]] = {
                name.lower(): value for name, value in self.headers.items()}
            response = bolt.dispatch(BoltRequest(body=body.decode("utf-8"), headers=headers))
            self.answer(response.status, (response.body or "").encode("utf-8"),
                        {name: values[0] for name, values in response.headers.items() if values})

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    server.serve_forever()


def serve_aiohttp_async(secret: str, api_url: str, host: str, port: int) -> None:
    from aiohttp import web
    from slack_bolt.async_app import AsyncApp
    from slack_sdk.web.async_client import AsyncWebClient

    app = AsyncApp(signing_secret=secret,
                   client=AsyncWebClient(token="xoxb-floor", base_url=api_url),
                   process_before_response=True)

    @app.event("app_mention")
    async def mention(ack: Any) -> None:
        await ack()

    @app.event("message")
    async def message(ack: Any) -> None:
        await ack()

    async def healthz(_: web.Request) -> web.Response:
        return web.json_response({"ok": True})

    web_app = app.web_app(path=EVENTS_PATH)
    web_app.router.add_get(HEALTH_PATH, healthz)
    web.run_app(web_app, host=host, port=port, print=None)


SERVERS = {"aiohttp+threads": serve_aiohttp_threads, "aiohttp": serve_aiohttp_async,
           "http.server": serve_http_server}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--api-url", required=True)
    parser.add_argument("--server", choices=SERVER_KINDS, default=DEFAULT_SERVER)
    parser.add_argument("--store", type=Path, metavar="SQLITE_FILE",
                        help="store each event there before the ack (aiohttp+threads only)")
    args = parser.parse_args()
    secret = os.environ[SECRET_ENV]  # secrets from the environment only
    print(json.dumps({"floor": args.server, "port": args.port}), file=sys.stderr, flush=True)
    if args.store is not None:
        if args.server != DEFAULT_SERVER:
            parser.error(f"--store needs --server {DEFAULT_SERVER}")
        serve_aiohttp_threads(secret, args.api_url, args.host, args.port, args.store)
        return
    SERVERS[args.server](secret, args.api_url, args.host, args.port)


if __name__ == "__main__":
    main()
