"""Slack's Web API on kept-alive connections.

slack_sdk's sync `WebClient` sends every call with `urllib.request.urlopen`: a new TCP
connection and, to slack.com, a new TLS handshake per call. A turn makes at least two
calls (its stream's start and stop). `KeptAliveWebClient` is the same client — its
retry handlers, errors and responses are slack_sdk's — with one pooled httpx client
underneath: it replaces only the method that sends a prepared request, and reports what
urllib would (an `HTTPError` for a status outside 2xx, which the SDK turns into its
retries and `SlackApiError`; `URLError`, `RemoteDisconnected` or `TimeoutError` when the
exchange fails, so `ConnectionErrorRetryHandler` retries the same cases as before).
bench/slack_web_api.py measures the difference over TLS.
"""

from __future__ import annotations

import io
from http.client import HTTPMessage, RemoteDisconnected
from typing import Any
from urllib.error import HTTPError, URLError
from urllib.request import Request

import httpx
from slack_sdk import WebClient

from docassist.bot.slack.limits import SLACK_API_KEPT_CONNECTIONS


class KeptAliveWebClient(WebClient):
    """A `WebClient` whose calls share kept-alive connections (thread-safe, as httpx's
    client is: the turn threads of a process post through one)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        proxy = self.proxy if isinstance(self.proxy, str) and self.proxy else None
        self.http = httpx.Client(
            timeout=self.timeout, verify=self.ssl if self.ssl is not None else True,
            proxy=proxy, follow_redirects=False,
            limits=httpx.Limits(max_connections=None,
                                max_keepalive_connections=SLACK_API_KEPT_CONNECTIONS))

    def close(self) -> None:
        self.http.close()

    def _perform_urllib_http_request_internal(self, url: str, req: Request) -> dict[str, Any]:
        """Send `req` (built by the SDK) as urllib would: the same method, body and header
        names (urllib title-cases them on the wire)."""
        headers = {name.title(): str(value) for name, value in req.header_items()}
        data = req.data if isinstance(req.data, bytes) else None
        try:
            response = self.http.request(req.get_method(), url, content=data, headers=headers)
        except (httpx.ReadTimeout, httpx.WriteTimeout, httpx.PoolTimeout) as error:
            raise TimeoutError(str(error)) from error  # urllib: socket.timeout, not retried
        except httpx.RemoteProtocolError as error:  # e.g. a kept-alive connection closed
            raise RemoteDisconnected(str(error)) from error
        except httpx.HTTPError as error:  # refused, unresolved, connect timeout
            raise URLError(error) from error
        message = HTTPMessage()
        for name, value in response.headers.multi_items():
            message[name] = value
        if not 200 <= response.status_code < 300:
            raise HTTPError(url, response.status_code, response.reason_phrase, message,
                            io.BytesIO(response.content))
        if message.get_content_type() == "application/gzip":  # admin.analytics.getFile
            return {"status": response.status_code, "headers": message,
                    "body": response.content}
        body = response.content.decode(message.get_content_charset() or "utf-8")
        return {"status": response.status_code, "headers": message, "body": body}
