"""The one protocol every model backend speaks, and the HTTP plumbing they share.

`chat(messages, schema=None) -> text`, `chat_stream(messages) -> text deltas` and
`embed(texts) -> vectors`. Transport failures (refused, timeout, 5xx, 429) are retried a
bounded number of times with backoff, then raised as `ModelUnavailableError`; anything else
that is wrong with a response raises `ModelResponseError` at once.
"""

from __future__ import annotations

import json
import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

import httpx

from docassist.core.errors import ModelResponseError, ModelUnavailableError
from docassist.core.ports import ChatModel, Message

__all__ = ["ChatModel", "Message"]  # their home is core.ports; kept importable here

logger = logging.getLogger(__name__)

DEFAULT_TIMEOUT_SECONDS: Final = 60.0
CONNECT_TIMEOUT_SECONDS: Final = 5.0
RETRY_ATTEMPTS: Final = 3
RETRY_BACKOFF_SECONDS: Final = 0.5
RETRYABLE_STATUS: Final = frozenset({429, 500, 502, 503, 504})


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = RETRY_ATTEMPTS
    backoff_seconds: float = RETRY_BACKOFF_SECONDS
    on_retry: Callable[[str], None] | None = None
    """Told of each retry, with what is retried (metrics)."""

    def delay(self, attempt: int) -> float:
        """Exponential backoff with jitter before retry number `attempt` (1-based)."""
        return float(self.backoff_seconds * 2 ** (attempt - 1) * random.uniform(0.5, 1.5))


def new_client(timeout: float = DEFAULT_TIMEOUT_SECONDS) -> httpx.Client:
    return httpx.Client(timeout=httpx.Timeout(timeout, connect=CONNECT_TIMEOUT_SECONDS))


def send_with_retries(
    send: Callable[[], httpx.Response],
    policy: RetryPolicy,
    what: str,
    sleep: Callable[[float], None] = time.sleep,
) -> httpx.Response:
    """Run `send` until it gives a non-retryable response; map failures to our errors."""
    last_problem = ""
    for attempt in range(1, policy.attempts + 1):
        try:
            response = send()
        except httpx.TransportError as error:  # refused, reset, timeouts
            last_problem = f"{type(error).__name__}: {error}"
        else:
            if response.status_code not in RETRYABLE_STATUS:
                if response.status_code >= 400:
                    raise ModelResponseError(
                        f"{what}: HTTP {response.status_code}", _body_text(response))
                return response
            last_problem = f"HTTP {response.status_code}"
        if attempt < policy.attempts:
            logger.warning("%s failed (%s), retry %d of %d", what, last_problem, attempt,
                           policy.attempts - 1)
            if policy.on_retry is not None:
                policy.on_retry(what)
            sleep(policy.delay(attempt))
    raise ModelUnavailableError(f"{what} unavailable after {policy.attempts} attempts: "
                                f"{last_problem}")


def _body_text(response: httpx.Response) -> str:
    try:
        return response.text[:2000]
    except (httpx.ResponseNotRead, UnicodeDecodeError):
        return ""


def json_body(response: httpx.Response, what: str) -> dict[str, Any]:
    """The response as a JSON object, or `ModelResponseError` keeping the raw body."""
    text = response.text
    try:
        value = json.loads(text)
    except ValueError as error:
        raise ModelResponseError(f"{what}: body is not JSON ({error})", text) from error
    if not isinstance(value, dict):
        raise ModelResponseError(f"{what}: body is not a JSON object", text)
    return value


def dig(value: Any, *path: str | int) -> Any:
    """value[path0][path1]…, or None when any step is missing."""
    for step in path:
        if isinstance(step, int):
            if not isinstance(value, list) or len(value) <= step:
                return None
        elif not isinstance(value, dict) or step not in value:
            return None
        value = value[step]
    return value
