"""Slack's Web API on kept-alive connections (bot/slack/web_api.py), against the fake Web API
over real HTTP and TLS on 127.0.0.1."""

from __future__ import annotations

import ssl
import threading
import time
from collections.abc import Iterator
from http.client import RemoteDisconnected
from urllib.error import URLError

import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_handlers import ConnectionErrorRetryHandler

from docassist.bot.slack.app import web_client
from docassist.bot.slack.config import SlackConfig
from docassist.bot.slack.web_api import KeptAliveWebClient
from docassist_testkit.fakes.loopback import QuietHandler, Request, free_port
from docassist_testkit.fakes.slack_api import FakeSlackApi, TlsSlackApi


def client_for(api: FakeSlackApi) -> WebClient:
    """The client the adapter builds (with its retry handlers)."""
    return web_client(SlackConfig(bot_token="xoxb-test", signing_secret="s", api_url=api.url))


def post_three(client: WebClient) -> None:
    client.chat_postMessage(channel="C1", thread_ts="1.5", text="first")
    client.chat_startStream(channel="C1", thread_ts="1.5", markdown_text="second")
    client.chat_postMessage(channel="C1", text="third", blocks=[{"type": "divider"}])


@pytest.fixture
def api() -> Iterator[FakeSlackApi]:
    with FakeSlackApi() as fake:
        yield fake


def test_calls_share_one_connection_and_arrive_as_sent(api: FakeSlackApi) -> None:
    post_three(client_for(api))
    assert api.connections == 1
    assert [(call.method, call.body.get("thread_ts"), call.body.get("text")
             or call.body.get("markdown_text")) for call in api.calls] == [
        ("chat.postMessage", "1.5", "first"), ("chat.startStream", "1.5", "second"),
        ("chat.postMessage", None, "third")]
    assert api.calls[-1].body["blocks"] == [{"type": "divider"}]
    # The SDK's own client opens one connection per call (what this replaces).
    post_three(WebClient(token="xoxb-test", base_url=api.url))
    assert api.connections == 4


def test_over_tls_one_handshake_serves_every_call() -> None:
    with TlsSlackApi() as api:
        trusted = ssl.create_default_context()
        api.ca.configure_trust(trusted)
        client = KeptAliveWebClient(token="xoxb-test", base_url=api.url, ssl=trusted)
        post_three(client)
        assert api.connections == 1 and len(api.calls) == 3
        client.close()


def test_rate_limits_and_server_errors_are_retried_as_the_sdk_does(api: FakeSlackApi) -> None:
    api.fail("chat.postMessage", 429, 500)  # Retry-After: 0, then a 5xx, then fine
    assert client_for(api).chat_postMessage(channel="C1", text="hi")["ok"] is True
    assert len(api.requests) == 3  # every attempt reached the fake; the third was answered
    api.fail("chat.postMessage", 503, 503, 503)  # beyond the two retries: the SDK's error
    with pytest.raises(SlackApiError) as raised:
        client_for(api).chat_postMessage(channel="C1", text="hi")
    assert raised.value.response.status_code == 503
    assert raised.value.response["error"] == "fake_failure"
    assert len(api.requests) == 6


def test_an_unreachable_api_raises_what_urllib_raised() -> None:
    client = web_client(SlackConfig(bot_token="xoxb-test", signing_secret="s",
                                    api_url=f"http://127.0.0.1:{free_port()}/api/"))
    with pytest.raises(URLError):  # an OSError, as every caller expects of the SDK
        client.chat_postMessage(channel="C1", text="hi")


class IdleClosingHandler(QuietHandler):
    timeout = 0.2
    """The server drops a connection idle this long (as Slack's load balancers do)."""


class IdleClosingSlackApi(FakeSlackApi):
    handler = IdleClosingHandler


def test_a_connection_the_server_closed_is_replaced() -> None:
    with IdleClosingSlackApi() as api:
        client = client_for(api)
        client.chat_postMessage(channel="C1", text="before")
        time.sleep(0.6)  # the server has closed the kept-alive connection
        client.chat_postMessage(channel="C1", text="after")
        assert [call.body["text"] for call in api.calls] == ["before", "after"]
        assert api.connections == 2


def test_a_reply_that_times_out_is_not_sent_again(api: FakeSlackApi) -> None:
    """As with urllib, a read timeout is not retried: Slack may have posted the message."""
    api.held = threading.Event()  # posts wait, then the fake drops them
    client = KeptAliveWebClient(token="xoxb-test", base_url=api.url, timeout=1)
    client.retry_handlers.append(ConnectionErrorRetryHandler(max_retry_count=1))
    try:
        with pytest.raises(TimeoutError):
            client.chat_postMessage(channel="C1", text="hi")
        assert len(api.requests) == 1
    finally:
        api.held.set()


class HangingUpSlackApi(FakeSlackApi):
    """Closes every connection without an answer."""

    def answer(self, exchange: QuietHandler, request: Request) -> None:
        exchange.close_connection = True


def test_a_connection_closed_without_an_answer_is_retried_once() -> None:
    with HangingUpSlackApi() as api:
        with pytest.raises(RemoteDisconnected):  # what http.client raised under urllib
            client_for(api).chat_postMessage(channel="C1", text="hi")
        assert len(api.requests) == 2  # the SDK's connection-error retry, once
