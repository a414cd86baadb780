"""Socket Mode: a local websocket server plays Slack and delivers an event envelope."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

from slack_bolt.adapter.socket_mode import SocketModeHandler
from websockets.sync.server import ServerConnection, serve

from docassist.bot.slack.app import SlackAdapter, SlackConfig
from docassist.core.turn import TurnEngine
from docassist.storage import Store
from docassist_testkit.fakes.slack_api import FakeSlackApi
from tests.helpers import slack_seen

ENVELOPE_ID = "env-1"


def event_envelope() -> str:
    payload = {"token": "t", "team_id": "T1", "api_app_id": "A1", "type": "event_callback",
               "event_id": "EvSocket", "event_time": 1,
               "event": {"type": "app_mention", "user": "U1", "ts": "321.1", "channel": "C1",
                         "team": "T1", "text": "<@UBOT> How do I renew the TLS certificate?"}}
    return json.dumps({"envelope_id": ENVELOPE_ID, "type": "events_api", "payload": payload,
                       "accepts_response_payload": False})


def test_an_event_over_socket_mode_is_answered_and_acked(engine: TurnEngine,
                                                         store: Store) -> None:
    received: list[dict[str, Any]] = []
    acked = threading.Event()

    def slack(connection: ServerConnection) -> None:
        connection.send(json.dumps({"type": "hello", "num_connections": 1}))
        connection.send(event_envelope())
        for raw in connection:
            message = json.loads(raw)
            received.append(message)
            if message.get("envelope_id") == ENVELOPE_ID:
                acked.set()

    with serve(slack, "127.0.0.1", 0) as websocket_server, FakeSlackApi() as api:
        threading.Thread(target=websocket_server.serve_forever, daemon=True).start()
        port = websocket_server.socket.getsockname()[1]
        api.socket_url = f"ws://127.0.0.1:{port}/link"
        adapter = SlackAdapter(engine, store, SlackConfig(
            bot_token="xoxb-test", signing_secret="unused-in-socket-mode", api_url=api.url))
        handler = SocketModeHandler(adapter.app, app_token="xapp-test")
        handler.client.wss_uri = api.socket_url
        handler.connect()  # type: ignore[no-untyped-call]
        try:
            assert acked.wait(15), received
            deadline = time.monotonic() + 15
            while not api.posted() and time.monotonic() < deadline:
                time.sleep(0.05)
            assert adapter.worker.wait_idle()
        finally:
            handler.close()  # type: ignore[no-untyped-call]
            adapter.worker.close()
            websocket_server.shutdown()
    [post] = api.posted()
    assert post["thread_ts"] == "321.1" and "DOC-TLS-" in slack_seen(post)
    assert store.turns()[0]["event_id"] == "EvSocket"
