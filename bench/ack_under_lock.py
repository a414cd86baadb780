"""How long Slack waits for an ack while another connection holds the database's write lock.
Prints one JSON object; not a test.

    python bench/ack_under_lock.py [--hold 8]

A second connection takes `BEGIN IMMEDIATE` on the real SQLite file and keeps it `--hold`
seconds; meanwhile a mention, a thread reply and `/docassist-docs` are sent over signed HTTP
(Slack gives up after 3 s). Reported: each request's status and seconds, and whether every
event was answered once after the lock was released (Slack's retries included).
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import tempfile
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
from slack_sdk.signature import SignatureVerifier

REPO = Path(__file__).resolve().parents[1]
SECRET = "bench-secret"


def _send(url: str, body: str, content_type: str, retry: int | None = None) -> tuple[int, float]:
    stamp = str(int(time.time()))
    signature = SignatureVerifier(SECRET).generate_signature(timestamp=stamp, body=body)
    assert signature is not None  # a secret and a timestamp are given
    headers = {"Content-Type": content_type, "X-Slack-Request-Timestamp": stamp,
               "X-Slack-Signature": signature}
    if retry is not None:
        headers["X-Slack-Retry-Num"] = str(retry)
    started = time.perf_counter()
    try:
        status = httpx.post(url, content=body.encode(), headers=headers, timeout=30).status_code
    except httpx.HTTPError:
        status = 0
    return status, round(time.perf_counter() - started, 2)


def _event(event_id: str, text: str, ts: str, thread_ts: str | None = None,
           mention: bool = True) -> str:
    event: dict[str, Any] = {"type": "app_mention" if mention else "message", "user": "U1",
                             "text": f"<@UBOT> {text}" if mention else text, "ts": ts,
                             "channel": "C1", "channel_type": "channel", "team": "T1"}
    if thread_ts:
        event["thread_ts"] = thread_ts
    return json.dumps({"type": "event_callback", "team_id": "T1", "event_id": event_id,
                       "event": event})


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--hold", type=float, default=8.0)
    hold = parser.parse_args().hold
    from docassist.bot.slack.app import SlackAdapter, SlackConfig
    from docassist.bot.slack.runner import make_slack_server
    from docassist.bot.slack.server import serve_in_thread
    from docassist.core.extractive import ExtractiveAnswerer
    from docassist.core.tools import default_registry
    from docassist.core.turn import TurnEngine
    from docassist.models import ModelConfig, get_selector
    from docassist.storage import Bm25Retriever, Store, index_paths
    from docassist_testkit.fakes.slack_api import FakeSlackApi

    with tempfile.TemporaryDirectory() as folder, FakeSlackApi() as api:
        path = Path(folder) / "bench.db"
        store = Store(path)
        index_paths(store, [REPO / "samples" / "docs"])
        engine = TurnEngine(store=store, catalog=store, retriever=Bm25Retriever(store),
                            selector=get_selector("rules", ModelConfig()),
                            answerer=ExtractiveAnswerer(),
                            registry=default_registry())
        adapter = SlackAdapter(engine, store, SlackConfig(
            bot_token="xoxb", signing_secret=SECRET, api_url=api.url))
        server = make_slack_server(adapter, "127.0.0.1", 0)
        serve_in_thread(server)
        url = f"http://127.0.0.1:{server.server_address[1]}/slack/events"
        _send(url, _event("Ev0", "How do I renew the TLS certificate?", "1.1"),
              "application/json")
        adapter.worker.wait_idle()
        lock = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        lock.execute("BEGIN IMMEDIATE")
        threading.Timer(hold, lock.rollback).start()
        figures = {
            "hold_s": hold,
            "mention": _send(url, _event("Ev1", "Jak odtworzyć bazę danych?", "2.1"),
                             "application/json"),
            "thread_reply": _send(url, _event("Ev2", "and then?", "1.2", "1.1", False),
                                  "application/json"),
            "docs_command": _send(url, urlencode({
                "command": "/docassist-docs", "text": "", "team_id": "T1", "channel_id": "C1",
                "user_id": "U1", "trigger_id": "t"}), "application/x-www-form-urlencoded")}
        time.sleep(hold + 15)  # the lock is gone; writes that waited finish
        for retry, event in ((1, _event("Ev1", "Jak odtworzyć bazę danych?", "2.1")),
                             (1, _event("Ev2", "and then?", "1.2", "1.1", False))):
            _send(url, event, "application/json", retry)  # Slack's redeliveries
        adapter.worker.wait_idle()
        figures["answered_events"] = sorted(row["event_id"] for row in store.turns())
        figures["posts"] = len(api.posted())
        server.shutdown()
        adapter.close()
        lock.close()
        store.close()
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
