"""The weekly gaps digest posted to an admin channel per platform
(DOCASSIST_GAPS_DIGEST_CHANNEL: `digest_channels`).

Platform-neutral: it is given a `post(text)` (bot/slack/digest.py, bot/teams/digest.py).
Processes sharing one database post it once per period between them: a run takes the
platform's lease in the store for the period (DIGEST_EVERY_SECONDS, GAP_DAYS days), so
another process (or this one after a restart) finds it held and posts nothing; a failed post
gives the lease back so the next tick retries. The first look is right at start.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Final, Protocol

from docassist.core import i18n
from docassist.core.gaps import Gap, digest_text, group_gaps
from docassist.core.limits import GAP_DAYS
from docassist.core.ports import Catalog, GapLog

logger = logging.getLogger(__name__)

LEASE: Final = "gaps-digest"
"""The Slack digest's lease (its name since it shipped); other platforms: `lease_for`."""
DIGEST_EVERY_SECONDS: Final = GAP_DAYS * 86_400.0
"""How often the digest is posted (the lease's length): the period it covers."""
TICK_SECONDS: Final = 3600.0
"""How often a process looks whether the digest is due (and retries a failed post)."""
DIGEST_PLATFORMS: Final = ("slack", "teams")


def lease_for(platform: str) -> str:
    return LEASE if platform == "slack" else f"{LEASE}:{platform}"


def digest_channels(value: str) -> dict[str, str]:
    """DOCASSIST_GAPS_DIGEST_CHANNEL per platform: a bare id is a Slack channel (`C0123`, as
    before Teams had a digest); otherwise comma-separated `slack:CHANNEL_ID` and
    `teams:CONVERSATION_ID` (the spelling of scope subjects), e.g.
    `slack:C0123,teams:19:abc@thread.tacv2`."""
    channels: dict[str, str] = {}
    for item in (part.strip() for part in value.split(",")):
        platform, _, channel = item.partition(":")
        if platform in DIGEST_PLATFORMS and channel:
            channels[platform] = channel
        elif item:
            channels["slack"] = item
    return channels


class DigestStore(Catalog, GapLog, Protocol):
    def claim_lease(self, name: str, holder: str, seconds: float) -> bool: ...

    def release_lease(self, name: str, holder: str) -> None: ...


class GapsDigest:
    def __init__(self, store: DigestStore, post: Callable[[str], None],
                 language: i18n.Language, *, lease: str = LEASE,
                 every: float = DIGEST_EVERY_SECONDS, tick: float = TICK_SECONDS) -> None:
        self.store = store
        self.post = post
        self.language = language
        self.lease = lease
        self.every = every
        self.tick = tick
        self._timer: threading.Timer | None = None
        self._stopped = threading.Event()

    def run_if_due(self) -> bool:
        """Post the digest when no process has in the last period; whether it did. Each run
        claims under a name of its own: a lease's holder may take it again (that is how a
        sync renews), so one name per process would post again at its next tick."""
        holder = uuid.uuid4().hex
        if not self.store.claim_lease(self.lease, holder, self.every):
            return False
        since = (datetime.now(UTC) - timedelta(days=GAP_DAYS)).isoformat(
            timespec="milliseconds")
        try:
            groups = group_gaps(map(Gap.from_row, self.store.gap_rows(since)), self.store)
            self.post(digest_text(groups, self.language, GAP_DAYS))
        except Exception:
            self.store.release_lease(self.lease, holder)
            raise
        return True

    def start(self) -> None:
        """The first look now, on the digest's own thread (never the caller's: a post may
        wait for the serving loop), then one every tick."""
        self._schedule(0.0)

    def _schedule(self, delay: float) -> None:
        if self._stopped.is_set():
            return
        self._timer = threading.Timer(delay, self._tick)
        self._timer.daemon = True
        self._timer.start()

    def _tick(self) -> None:
        try:
            self.run_if_due()
        except Exception:  # a failed post must not end the schedule
            logger.exception("gaps digest (%s) not posted; retried at the next tick",
                             self.lease)
        self._schedule(self.tick)

    def stop(self) -> None:
        self._stopped.set()
        if self._timer is not None:
            self._timer.cancel()
