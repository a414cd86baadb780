"""Bolt on aiohttp, two ways, measured on a burst of events (README, "One server"):

- `threads`: the synchronous `App` that DocAssist's listeners are written for, dispatched
  from the aiohttp handler on a thread pool (what `docassist serve` does);
- `async`: Bolt's `AsyncApp` with its aiohttp adapter (`app.web_app()`), which would need
  every listener, the inbox and the store rewritten as coroutines.

Both apps have one listener that does nothing but be acked, so the figures are the floor of
each way, not of DocAssist's admission. Usage: `python bench/ack_async_vs_threads.py [N]`.
"""

from __future__ import annotations

import json
import statistics
import sys
from typing import Any

from slack_bolt import App
from slack_bolt.async_app import AsyncApp
from slack_sdk import WebClient
from slack_sdk.web.async_client import AsyncWebClient

from docassist.bot.slack.server import make_server
from docassist.bot.web import AppServer
from docassist_testkit.fakes.slack_api import FakeSlackApi
from docassist_testkit.slack_load import EventSender, LoadRun, send_load

SECRET = "bench-secret"


def _threads_app(api_url: str) -> AppServer:
    bolt = App(signing_secret=SECRET, client=WebClient(token="xoxb-bench", base_url=api_url))

    @bolt.event("app_mention")
    def on_mention() -> None:
        pass

    @bolt.event("message")
    def on_message() -> None:
        pass

    return make_server(bolt, "127.0.0.1", 0, signing_secret=SECRET)


def _async_app(api_url: str) -> AppServer:
    bolt = AsyncApp(signing_secret=SECRET, client=AsyncWebClient(token="xoxb-bench",
                                                                 base_url=api_url))

    @bolt.event("app_mention")
    async def on_mention() -> None:
        pass

    @bolt.event("message")
    async def on_message() -> None:
        pass

    return AppServer(bolt.web_app(path="/slack/events"))


def burst(server: AppServer, events: int) -> dict[str, Any]:
    server.start()
    sender = EventSender(f"{server.url}/slack/events", SECRET)
    run = LoadRun(events, 1)
    send_load(sender, run)
    sender.close()
    server.stop()
    acks = sorted(run.ack_ms())
    return {"acked": len(acks), "ack_ms_p50": round(statistics.median(acks), 1),
            "ack_ms_p99": round(acks[int(0.99 * (len(acks) - 1))], 1)}


def main() -> None:
    events = int(sys.argv[1]) if len(sys.argv) > 1 else 500
    with FakeSlackApi() as api:
        figures = {"threads": burst(_threads_app(api.url), events),
                   "async": burst(_async_app(api.url), events)}
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
