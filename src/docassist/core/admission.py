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
from dataclasses import dataclass
from typing import Literal

from docassist.core.i18n import Language
from docassist.core.inbox import InboxWorker, LateFailure
from docassist.core.limits import ACK_DEADLINE_SECONDS
from docassist.core.messages import ChatMessage, Notice
from docassist.core.ports import SeenEvents
from docassist.core.ratelimit import RateLimiter
from docassist.core.trace import sha256_text

logger = logging.getLogger(__name__)

Verdict = Literal["duplicate", "refused", "admitted"]
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

    @property
    def arrival_id(self) -> str:
        return self.dedupe_key or str(self.message.event_id)


class Admission:
    def __init__(self, seen: SeenEvents, limiter: RateLimiter, worker: InboxWorker,
                 deadline: float = ACK_DEADLINE_SECONDS) -> None:
        self.seen = seen
        self.limiter = limiter
        self.worker = worker
        self.deadline = deadline

    def admit(self, arrival: Arrival, on_late_failure: LateFailure | None = None) -> Verdict:
        """Decide and store; raises StorageUnavailableError when the event was not stored
        (AckDeadlineError when not yet: answer 503, the platform retries)."""
        message = arrival.message
        if self.seen.inbox_seen(message.key.platform, str(message.event_id),
                                arrival.dedupe_key):
            return "duplicate"  # a retry or the same message as another event
        notice = self._notice(arrival)
        if notice is not None and notice.replaces_turn:
            # Nothing will read the text of a refused message: it is not stored.
            message = message.model_copy(update={
                "text": "", "command": None, "command_argument": None, "direct": None,
                "notice": notice})
        elif notice is not None:
            message = message.model_copy(update={"notice": notice})
        if not self.worker.submit(message, arrival.dedupe_key, deadline=self.deadline,
                                  on_late_failure=on_late_failure):
            return "duplicate"  # a concurrent delivery stored it first
        return "refused" if notice is not None and notice.replaces_turn else "admitted"

    def limit(self, user: str, arrival_id: str, language: Language) -> Notice | None:
        """For requests answered at once (commands, buttons): the rate-limit notice, if any."""
        wait = self.limiter.check(user, arrival_id)
        if not wait:
            return None
        logger.warning("rate limit: %s from %s answered with a retry hint", arrival_id,
                       sha256_text(user))
        return Notice(kind="rate_limited", language=language, seconds=wait)

    def _notice(self, arrival: Arrival) -> Notice | None:
        message = arrival.message
        limited = self.limit(message.user, arrival.arrival_id, arrival.language)
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
