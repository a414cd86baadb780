"""The durable inbox as adapters and workers see it: stored events, their claims, and the
rate limits counted in the same write."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Protocol

from pydantic import BaseModel

from docassist.core.messages import ChatMessage
from docassist.core.results import TurnResult
from docassist.core.statuses import InboxStatus


class InboxEvent(BaseModel):
    id: int
    platform: str
    event_id: str
    conversation_id: str
    message: ChatMessage
    status: InboxStatus
    result: TurnResult | None = None
    attempts: int = 0


@dataclass
class RateCheck:
    """An arrival to count against the rate limits in the same transaction that stores its
    event (one write on the ack path). `limited` gives the message to store instead when
    the arrival is over a limit (given the epoch second a retry would be); `retry_at` is
    the verdict once counted (0.0 = admitted)."""

    user_key: str
    arrival_id: str
    per_user: int
    global_limit: int
    window: float
    limited: Callable[[float], ChatMessage]
    retry_at: float = 0.0


@dataclass(frozen=True)
class Hold:
    """A claim taken in the write that stores an event, for a process that must run the turn
    itself (a caller waits for the replies in its own request): `holder` claims the event
    for `lease_seconds` when it is its conversation's oldest unfinished event; otherwise
    it is left to the claimers, in order."""

    holder: str
    lease_seconds: float


class Inbox(Protocol):
    def enqueue(self, message: ChatMessage, dedupe_key: str | None = None,
                rate: RateCheck | None = None, hold: Hold | None = None) -> int | None:
        """Store an event; its inbox id, or None when the event (or dedupe key) was seen.
        With `rate`, the arrival is counted first, in the same transaction, and a limited
        arrival is stored as `rate.limited(retry_at)`. With `hold`, the event is claimed
        in that transaction too, when it can be (see Hold; `holds` tells)."""
        ...

    def enqueue_soon(self, message: ChatMessage, dedupe_key: str | None = None,
                     rate: RateCheck | None = None,
                     hold: Hold | None = None) -> Future[int | None]:
        """`enqueue` without waiting (for an event loop): the Future completes with what
        `enqueue` returns once the row is committed, or with its error."""
        ...

    def unfinished(self) -> list[InboxEvent]:
        """`pending` and `answered` events, oldest first."""
        ...

    def record_answer(self, inbox_id: int, result: TurnResult | None) -> None:
        """Mark a pending event answered with `result`. One already answered keeps its
        answer: a turn's commit records it in its own transaction (commit_turn), so for a
        committed turn this writes nothing."""
        ...

    def finish(self, inbox_id: int, status: InboxStatus, error: str | None = None) -> None: ...

    def delivery_failed(self, inbox_id: int, error: str) -> int:
        """Count a failed delivery; returns the attempts so far."""
        ...

    def claim(self, platform: str, holder: str, lease_seconds: float,
              limit: int) -> list[InboxEvent]:
        """Claim up to `limit` unfinished events of `platform` for `holder` until now +
        `lease_seconds`, oldest first: only the oldest unfinished event of a conversation,
        and none of a conversation with a live claim (so turns stay in order across
        processes). `finish` releases the claim."""
        ...

    def renew_claims(self, holder: str, ids: list[int], lease_seconds: float) -> set[int]:
        """Extend `holder`'s claims on `ids`; the ids it still holds."""
        ...

    def holds(self, holder: str, inbox_id: int, seconds: float) -> bool:
        """A read: the event is unfinished and `holder`'s claim on it lasts at least
        `seconds` more (no other holder can take it before then)."""
        ...

    def stored_event(self, inbox_id: int) -> InboxEvent | None:
        """One event as stored now (its status and answer)."""
        ...

    def release_claims(self, holder: str, ids: list[int]) -> None:
        """Give up `holder`'s claims on `ids` (unfinished events it will not run now)."""
        ...


class RateCounter(Protocol):
    """Rate limits counted where every process sees them."""

    def count_arrival(self, user_key: str, arrival_id: str, per_user: int,
                      global_limit: int, window: float) -> float:
        """Count an arrival in one atomic step: 0.0 when admitted (counted), else the epoch
        second when a retry would be; an arrival id seen before gets its first verdict."""
        ...


@dataclass(frozen=True)
class InboxBacklog:
    pending: int
    """Events stored and not finished (`pending` or `answered`)."""
    oldest_received_at: str | None
    """ISO time the oldest of them arrived; None when there is none."""


class InboxGauge(Protocol):
    """Read at each metrics scrape (so several processes' work is counted once, from the
    store they share)."""

    def inbox_backlog(self) -> InboxBacklog: ...
