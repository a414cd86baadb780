"""What a Slack Web API call costs the bot: slack_sdk's own client against ours on kept-alive
connections (bot/slack/web_api.py), over TLS (as to slack.com) and plain HTTP.

    python bench/slack_web_api.py [--calls 300] [--json]

Each client posts `--calls` messages one after another to the fake Web API on 127.0.0.1
(its server threads in this process). Reported per call: the calling thread's CPU
(`time.thread_time`: the client's work alone, the server's threads not counted) and the
wall time (on loopback, so without the round trips a handshake costs over the internet).
Figures, not tests.
"""

from __future__ import annotations

import argparse
import ssl
import time
from typing import Any

from figures import print_figures
from slack_sdk import WebClient

from docassist.bot.slack.web_api import KeptAliveWebClient
from docassist_testkit.fakes.slack_api import FakeSlackApi, TlsSlackApi


def per_call(client: WebClient, calls: int) -> dict[str, float]:
    client.chat_postMessage(channel="C1", text="warm-up")
    cpu, wall = time.thread_time(), time.perf_counter()
    for index in range(calls):
        client.chat_postMessage(channel="C1", thread_ts="1.5", text=f"answer {index}")
    return {"cpu_ms": round((time.thread_time() - cpu) * 1000 / calls, 3),
            "wall_ms": round((time.perf_counter() - wall) * 1000 / calls, 3)}


def measure(calls: int) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    with TlsSlackApi() as tls_api, FakeSlackApi() as plain_api:
        trusted = ssl.create_default_context()
        tls_api.ca.configure_trust(trusted)
        for transport, api, context in (("tls", tls_api, trusted), ("http", plain_api, None)):
            for name, kind in (("sdk", WebClient), ("kept_alive", KeptAliveWebClient)):
                before = api.connections
                figure = per_call(kind(token="xoxb-bench", base_url=api.url, ssl=context), calls)
                figure["connections"] = api.connections - before
                figures[f"{transport}_{name}"] = figure
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures = measure(args.calls)
    print_figures(figures, args.json)


if __name__ == "__main__":
    main()
