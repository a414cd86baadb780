"""Admission: what happens to an arriving message before the core sees it, in one place for
every adapter — dedupe → rate limit → external user / attachments → store the event.

Every reply decided here (a refusal or a note) is stored with the event and delivered by the
inbox worker like an answer, so a platform's retries never repeat it: one reply per user
message. A message is counted against the rate limit once, by its id (see ratelimit.py).
The store step has a deadline: an event not stored in time raises AckDeadlineError, so the
platform is answered quickly (503) and retries, while the write goes on.
"""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Final

from docassist.core.errors import AckDeadlineError, StorageError
from docassist.core.i18n import Language
from docassist.core.limits import ACK_DEADLINE_SECONDS
from docassist.core.messages import ChatMessage, Notice
from docassist.core.ports import RateCheck, SeenEvents
from docassist.core.statuses import Verdict
from docassist.core.trace import sha256_text
from docassist.serving.ack_writes import LateFailure, stored_within
from docassist.serving.inbox import InboxWorker
from docassist.serving.ratelimit import Limiter, seconds_until

logger = logging.getLogger(__name__)

"""`duplicate`: seen before, say nothing; `refused`: stored with a notice that replaces the
turn; `admitted`: stored, a turn will run (after a note, if any)."""


@dataclass(frozen=True)
class Arrival:
    """A platform message as the adapter translated it, with what only the platform knows."""

    message: ChatMessage
    language: Language
    dedupe_key: str | None = None
    """The platform's id of the message itself, when one message can come as several events."""
    external_user: bool = False
    attachments: bool = False
    """The message carries files DocAssist does not read."""
    redelivered: bool = False
    """The platform says it sends this event again (Slack's X-Slack-Retry-Num)."""

    @property
    def arrival_id(self) -> str:
        return self.dedupe_key or str(self.message.event_id)


REPLAYED: Final = -1
"""The check's answer for an arrival already taken (never a number of seconds)."""


@dataclass(frozen=True)
class Refusal:
    """A command or button over the rate limit: `notice` to show, or None when the user was
    already told within the same wait."""

    notice: Notice | None


class Admission:
    def __init__(self, seen: SeenEvents, limiter: Limiter, worker: InboxWorker,
                 deadline: float = ACK_DEADLINE_SECONDS) -> None:
        self.seen = seen
        self.limiter = limiter
        self.worker = worker
        self._told_until: dict[str, float] = {}
        """User → until when (monotonic) they know they were refused (commands, buttons)."""
        self._told_lock = threading.Lock()
        self.deadline = deadline

    def store(self, arrival: Arrival, hold: bool = False) -> Future[Verdict]:
        """Decide and store: the one way every platform's message reaches the inbox. Nothing
        here blocks, so an event loop may call it: the decisions are made on this thread,
        the write on the store's group commit; the Future gives the verdict once the event is
        committed, or the error (StorageUnavailableError: not stored). The caller bounds its
        wait (`admit`, or its own); a late write goes on and is answered.

        Nothing is read before the write: a platform's redelivery, like the same message
        sent as another event, is found a duplicate by its own insert. A limiter that counts
        in the store counts the arrival in that insert too (one write); either limiter keeps
        an arrival's first verdict, so a duplicate counts nothing again, and only the stored
        refusal is reported. `hold`: the caller waits for the turn on this process
        (InboxWorker.store)."""
        stored, rate, notice = self._decide(arrival)
        verdict: Future[Verdict] = Future()
        verdict.set_running_or_notify_cancel()  # a write once queued is not called off

        def decided(write: Future[bool]) -> None:
            error = write.exception()
            if error is not None:
                verdict.set_exception(error)
            else:
                verdict.set_result(self._verdict(arrival, write.result(), rate, notice))

        self.worker.store(stored, arrival.dedupe_key, rate, hold).add_done_callback(decided)
        return verdict

    def admit(self, arrival: Arrival, on_late_failure: LateFailure | None = None,
              hold: bool = False) -> Verdict:
        """`store`, waited for at most the deadline: raises StorageUnavailableError when
        the event was not stored, AckDeadlineError when not yet (answer 503, the platform
        retries; a failure after that goes to `on_late_failure`)."""
        return stored_within(self.store(arrival, hold), self.deadline,
                             f"event {arrival.message.event_id}", on_late_failure)

    def _decide(self, arrival: Arrival) -> tuple[ChatMessage, RateCheck | None, Notice | None]:
        """The message to store, the rate check its insert counts, and the notice decided
        before storing; no store access (a limiter that counts in the store counts in the
        insert)."""
        message = arrival.message

        def limited(retry_at: float) -> ChatMessage:
            return self._with_notice(message, self._limit_notice(arrival.language,
                                                                 seconds_until(retry_at)))

        rate = self.limiter.in_store(message.user, arrival.arrival_id, limited)
        notice = self._notice(arrival, counted=rate is not None)
        return self._with_notice(message, notice), rate, notice

    def _verdict(self, arrival: Arrival, new: bool, rate: RateCheck | None,
                 notice: Notice | None) -> Verdict:
        if not new:
            return "duplicate"  # stored before: a retry, or the same message as another event
        if (rate is not None and rate.retry_at) or (
                notice is not None and notice.kind == "rate_limited"):
            self._report_limited(arrival.message.user, arrival.arrival_id)
            return "refused"
        return "refused" if notice is not None and notice.replaces_turn else "admitted"

    @staticmethod
    def _with_notice(message: ChatMessage, notice: Notice | None) -> ChatMessage:
        if notice is not None and notice.replaces_turn:
            # Nothing will read the text of a refused message: it is not stored.
            return message.model_copy(update={
                "text": "", "command": None, "command_argument": None, "direct": None,
                "notice": notice})
        if notice is not None:
            return message.model_copy(update={"notice": notice})
        return message

    def limit(self, user: str, arrival_id: str, language: Language,
              once_on: str | None = None) -> Refusal | None:
        """For requests answered at once (commands, buttons): a refusal over the rate
        limit, with the notice to show the first time only — a user pressing a button
        again and again is told once when to retry, not once per press (in this process).
        With `once_on` (a platform), a request that is not a turn is taken once: a replay of
        the same arrival is refused silently (the same write as the rate check).
        A check the store cannot answer within the ack deadline (busy, read-only) admits the
        request: the ack must not wait, and the request's own work meets the same store."""
        def check() -> int:
            if once_on is not None and not self.seen.claim_arrival(once_on, arrival_id):
                return REPLAYED
            return self.limiter.check(user, arrival_id)

        try:
            wait = self.worker.within_deadline(check, self.deadline)
        except (AckDeadlineError, StorageError) as error:
            logger.warning("rate limit not checked for %s: %s", arrival_id, error)
            return None
        if wait == REPLAYED:
            logger.warning("%s was delivered again: not run again", arrival_id)
            return Refusal(None)
        notice = self._limit_notice(language, wait)
        if notice is None:
            return None
        self._report_limited(user, arrival_id)
        now = time.monotonic()
        with self._told_lock:
            told = self._told_until.get(user, 0.0) > now
            self._told_until[user] = max(self._told_until.get(user, 0.0), now + wait)
        return Refusal(None if told else notice)

    @staticmethod
    def _limit_notice(language: Language, wait: int) -> Notice | None:
        return Notice(kind="rate_limited", language=language, seconds=wait) if wait else None

    def _report_limited(self, user: str, arrival_id: str) -> None:
        logger.warning("rate limit: %s from %s answered with a retry hint", arrival_id,
                       sha256_text(user))
        self.worker.engine.observer.rate_limited()

    def _notice(self, arrival: Arrival, counted: bool) -> Notice | None:
        """The notice decided before storing (`counted`: the rate limit is counted with the
        insert instead)."""
        message = arrival.message
        if not counted:
            limited = self._limit_notice(arrival.language,
                                         self.limiter.check(message.user, arrival.arrival_id))
            if limited is not None:
                return limited
        if arrival.external_user:
            return Notice(kind="external_user", language=arrival.language)
        if arrival.attachments:
            text = message.text if isinstance(message.text, str) else ""
            only = not text.strip() and message.command is None and message.direct is None
            return Notice(kind="attachments_only" if only else "attachments_ignored",
                          language=arrival.language)
        return None
