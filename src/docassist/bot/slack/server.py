"""HTTP mode: `POST /slack/events` (events, commands, interactivity) as a route any server
of `bot/web.py` mounts (`docassist serve` beside Teams; `make_server` alone).

The handler translates HTTP to a BoltRequest and back; Bolt verifies the signature again and
runs the listeners. Bolt's App is synchronous (its listeners wait on the database for at
most the ack deadline), so each dispatch runs on a thread pool; the event loop only reads,
checks and answers — measured against Bolt's own AsyncApp in docs/serving.md. With
the events lane (lane.py), mentions and direct messages skip Bolt and the pool: they are
stored from the event loop and acked once committed.

Before Bolt, the request itself is checked, so that nothing Slack would never send reaches
Bolt as a traceback or a dropped connection: a Content-Length that is not a number (400,
said by aiohttp's parser) or too large (413); a body not sent within the read timeout
(408); with the signing secret, a body that is not UTF-8 (400: Slack signs nothing else),
then a bad or missing signature or timestamp (401) — before anything is parsed; a body that
is not the JSON or form it claims to be (400).
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Final
from urllib.parse import parse_qs

from slack_bolt import App
from slack_bolt.request import BoltRequest
from slack_bolt.response import BoltResponse
from slack_sdk.signature import SignatureVerifier

from docassist.bot.slack.lane import EventLane
from docassist.bot.slack.limits import SLACK_DISPATCH_THREADS
from docassist.bot.web import (
    AppServer,
    BodyRefused,
    RawRequest,
    RawResponse,
    Route,
    add_routes,
    new_application,
)
from docassist.core.batching import once_after_batch
from docassist.core.errors import StorageUnavailableError
from docassist.core.limits import ACK_DEADLINE_SECONDS, HTTP_READ_TIMEOUT_SECONDS
from docassist.core.statuses import Verdict

logger = logging.getLogger(__name__)

EVENTS_PATH: Final = "/slack/events"
BadRequest = BodyRefused  # its name here so far


TIMESTAMP_MAX_DIGITS: Final = 12
"""Slack's request timestamps are Unix seconds (10 digits); a longer one is refused with
401 before the SDK turns it into a float (an OverflowError, a 500, at 400 digits)."""


def _is_number(value: str) -> bool:
    value = value.strip()
    return value.isascii() and value.isdigit() and len(value.lstrip("0")) <= TIMESTAMP_MAX_DIGITS


def check_signature(verifier: SignatureVerifier | None, headers: Mapping[str, str],
                    body: str) -> None:
    if verifier is None:
        return
    timestamp = headers.get("X-Slack-Request-Timestamp")
    if timestamp is None or not _is_number(timestamp):
        raise BodyRefused(401, "invalid request")  # what Bolt says, without a 500 first
    if not verifier.is_valid(body, timestamp, headers.get("X-Slack-Signature")):
        raise BodyRefused(401, "invalid request")


def utf8(body: bytes) -> str:
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:  # Slack sends UTF-8 only (and signs nothing else)
        raise BodyRefused(400, "body is not UTF-8") from None


def check_content(text: str, content_type: str) -> dict[str, Any] | None:
    """Is the body what its Content-Type says (Bolt would raise while parsing it)? A JSON
    body is returned, parsed."""
    try:
        if "application/json" in content_type:
            body = json.loads(text)
            if not isinstance(body, dict):
                raise BodyRefused(400, "body is not a JSON object")
            return body
        payload = parse_qs(text).get("payload")
        if payload and not isinstance(json.loads(payload[0]), dict):
            raise BodyRefused(400, "payload is not a JSON object")
        return None
    except (ValueError, RecursionError):
        raise BodyRefused(400, "body is not valid JSON") from None


def _raw(response: BoltResponse) -> RawResponse:
    headers = {name: values[0] for name, values in response.headers.items()
               if values and name.lower() != "content-length"}
    return RawResponse(response.status, (response.body or "").encode("utf-8"), headers)


def _ok() -> RawResponse:
    return RawResponse(200, b"", {})


def _busy() -> RawResponse:
    return RawResponse(503, b"busy, please retry", {"Content-Type": "text/plain; charset=utf-8"})


def _retrieved(waiting: asyncio.Future[Verdict]) -> None:
    """A failure that came after the 503 was logged where it happened (the adapter)."""
    if not waiting.cancelled():
        waiting.exception()


class _Committed:
    """The lane's Futures, completed on the group commit's thread, handed to the event loop
    once per batch (one `call_soon_threadsafe`, batching.py) instead of once each as
    `asyncio.wrap_future` would."""

    def __init__(self) -> None:
        self._done: list[tuple[asyncio.Future[Verdict], Future[Verdict]]] = []
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None

    def watch(self, verdict: Future[Verdict]) -> asyncio.Future[Verdict]:
        """On the event loop: a Future of the loop's that completes as `verdict` does."""
        self._loop = asyncio.get_running_loop()
        waiting: asyncio.Future[Verdict] = self._loop.create_future()
        waiting.add_done_callback(_retrieved)
        verdict.add_done_callback(lambda done: self._completed(waiting, done))
        return waiting

    def _completed(self, waiting: asyncio.Future[Verdict], done: Future[Verdict]) -> None:
        with self._lock:
            self._done.append((waiting, done))
        once_after_batch(self._ring)

    def _ring(self) -> None:
        if self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._deliver)

    def _deliver(self) -> None:
        with self._lock:
            done, self._done = self._done, []
        for waiting, verdict in done:
            if waiting.done():
                continue
            error = verdict.exception()
            if error is not None:
                waiting.set_exception(error)
            else:
                waiting.set_result(verdict.result())


class SlackEvents:
    """The handler of POST /slack/events for one Bolt app.

    An Events API request is answered within `ack_deadline` here: 503 once it has passed
    (Slack retries), while its write goes on. With a `lane` (lane.py), the message events it
    takes are submitted from the event loop, without Bolt; any other event goes to Bolt,
    whose listener submits a message from its dispatch thread. Both submit through
    `SlackAdapter.submit_event`, and the store's group commit writes the event."""

    def __init__(self, bolt: App, signing_secret: str | None,
                 ack_deadline: float = ACK_DEADLINE_SECONDS,
                 lane: EventLane | None = None) -> None:
        if lane is not None and not signing_secret:
            raise ValueError("the events lane needs the signing secret: Bolt's own check "
                             "does not run for the events it takes")
        self.bolt = bolt
        self.ack_deadline = ack_deadline
        self.lane = lane
        self.committed = _Committed()
        self.verifier = SignatureVerifier(signing_secret) if signing_secret else None
        self.pool = ThreadPoolExecutor(max_workers=SLACK_DISPATCH_THREADS,
                                       thread_name_prefix="slack-dispatch")

    async def handle(self, request: RawRequest) -> RawResponse:
        try:
            body = utf8(request.body)
            check_signature(self.verifier, request.headers, body)
            parsed = check_content(body, request.headers.get("Content-Type") or "")
        except BodyRefused as problem:
            logger.warning("Slack request refused (%d): %s", problem.status, problem)
            raise
        if self.lane is not None and parsed is not None and self.lane.takes(parsed):
            return await self._through_lane(self.lane, body, parsed,
                                            request.headers.get("X-Slack-Retry-Num"))
        headers: dict[str, str | Sequence[str]] = {
            name.lower(): value for name, value in request.headers.items()}
        event = parsed is not None and parsed.get("type") == "event_callback"
        dispatch = asyncio.get_running_loop().run_in_executor(
            self.pool, self.bolt.dispatch, BoltRequest(body=body, headers=headers))
        if not event:
            return _raw(await dispatch)
        try:
            return _raw(await asyncio.wait_for(asyncio.shield(dispatch), self.ack_deadline))
        except TimeoutError:
            self._late((parsed or {}).get("event_id"))
            return _busy()

    async def _through_lane(self, lane: EventLane, text: str, body: dict[str, Any],
                            retry: str | None) -> RawResponse:
        """200 once the event is committed (or at once when it is not for us); 503 at the
        ack deadline, the write going on; 500 when it was not stored (Slack redelivers)."""
        try:
            verdict = lane.submit(text, body, retry)
        except Exception:
            logger.exception("event %s could not be submitted", body.get("event_id"))
            return RawResponse(500, b"", {})
        if verdict is None:
            return _ok()
        waiting = self.committed.watch(verdict)
        done, _ = await asyncio.wait({waiting}, timeout=self.ack_deadline)
        if not done:
            self._late(body.get("event_id"))
            return _busy()
        error = waiting.exception()
        if error is None:
            return _ok()
        if not isinstance(error, StorageUnavailableError):  # that one the adapter logged
            logger.error("event %s not stored: %r", body.get("event_id"), error)
        return RawResponse(500, b"", {})

    def _late(self, event_id: object) -> None:
        logger.warning("event %s not stored within %g s: Slack gets a 503 and retries; "
                       "the write goes on", event_id, self.ack_deadline)

    def routes(self) -> list[Route]:
        return [Route(EVENTS_PATH, self.handle, close=self.close)]

    def close(self) -> None:
        """No new dispatch; those running finish on their threads."""
        self.pool.shutdown(wait=False)


def make_server(bolt: App, host: str, port: int, *, signing_secret: str | None = None,
                read_timeout: float = HTTP_READ_TIMEOUT_SECONDS) -> AppServer:
    """POST /slack/events for a Bolt app alone (no events lane: `runner.make_slack_server`
    serves the adapter as production does) and GET /healthz, not started
    (`serve_in_thread`)."""
    app = new_application()
    add_routes(app, SlackEvents(bolt, signing_secret).routes(), read_timeout)
    return AppServer(app, host, port, read_timeout=read_timeout)


def serve_in_thread(server: AppServer) -> AppServer:
    server.start()
    return server
