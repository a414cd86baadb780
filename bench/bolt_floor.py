"""The ack floor: a bare Bolt app that only acks, as a process (bench/burst.py starts it).

    python bench/bolt_floor.py --port 3000 --api-url http://127.0.0.1:PORT \\
        [--server http.server|aiohttp]

Same Bolt version as the product (it is the installed `slack_bolt`), the same fake Web API
(`--api-url`), the same signing secret check, and the same server kind as `docassist slack
--http` (`--server`): `http.server` serves the app through the product's own
`bot/slack/server.make_server` (a ThreadingHTTPServer, what HTTP mode runs today);
`aiohttp` serves a Bolt `AsyncApp` through Bolt's aiohttp adapter (what HTTP mode runs once
it moves to aiohttp). Its listeners do nothing but ack: whatever the product adds on the
ack path (storing the event, admission, turns running beside it) is the difference.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

SERVER_KINDS = ("http.server", "aiohttp")
SECRET_ENV = "SLACK_SIGNING_SECRET"
HEALTH_PATH = "/healthz"


def serve_http_server(secret: str, api_url: str, host: str, port: int) -> None:
    from slack_bolt import App
    from slack_sdk import WebClient

    from docassist.bot.slack.server import make_server

    app = App(signing_secret=secret, client=WebClient(token="xoxb-floor", base_url=api_url),
              process_before_response=True)

    @app.event("app_mention")
    def mention(ack: Any) -> None:
        ack()

    @app.event("message")
    def message(ack: Any) -> None:
        ack()

    make_server(app, host, port, signing_secret=secret).serve_forever()


def serve_aiohttp(secret: str, api_url: str, host: str, port: int) -> None:
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

    web_app = app.web_app(path="/slack/events")
    web_app.router.add_get(HEALTH_PATH, healthz)
    web.run_app(web_app, host=host, port=port, print=None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--api-url", required=True)
    parser.add_argument("--server", choices=SERVER_KINDS, default="http.server")
    args = parser.parse_args()
    secret = os.environ[SECRET_ENV]  # secrets from the environment only
    print(json.dumps({"floor": args.server, "port": args.port}), file=sys.stderr, flush=True)
    serve = serve_http_server if args.server == "http.server" else serve_aiohttp
    serve(secret, args.api_url, args.host, args.port)


if __name__ == "__main__":
    main()
