"""The weekly gaps digest posted to an admin channel (DOCASSIST_GAPS_DIGEST_CHANNEL).

Platform-neutral: it is given a `post(text)`. Processes sharing one database post it once a
week between them: a run takes the store's `gaps-digest` lease for GAP_DAYS days, so another
process (or this one after a restart) finds it held and posts nothing; a failed post gives
the lease back so the next tick retries.
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
TICK_SECONDS: Final = 3600.0
"""How often a process looks whether the digest is due (it is once per GAP_DAYS)."""


class DigestStore(Catalog, GapLog, Protocol):
    def claim_lease(self, name: str, holder: str, seconds: float) -> bool: ...

    def release_lease(self, name: str, holder: str) -> None: ...


class GapsDigest:
    def __init__(self, store: DigestStore, post: Callable[[str], None],
                 language: i18n.Language) -> None:
        self.store = store
        self.post = post
        self.language = language
        self._timer: threading.Timer | None = None

    def run_if_due(self) -> bool:
        """Post the digest when no process has in the last GAP_DAYS days; whether it did.
        Each run claims as a holder of its own: the store lets a holder take its lease
        again, so one holder per process would post again at each hourly tick."""
        holder = uuid.uuid4().hex
        if not self.store.claim_lease(LEASE, holder, GAP_DAYS * 86_400.0):
            return False
        since = (datetime.now(UTC) - timedelta(days=GAP_DAYS)).isoformat(
            timespec="milliseconds")
        try:
            groups = group_gaps(map(Gap.from_row, self.store.gap_rows(since)), self.store)
            self.post(digest_text(groups, self.language, GAP_DAYS))
        except Exception:
            self.store.release_lease(LEASE, holder)
            raise
        return True

    def start(self) -> None:
        self._tick()

    def _tick(self) -> None:
        try:
            self.run_if_due()
        except Exception:  # a failed post must not end the schedule
            logger.exception("gaps digest not posted; retried at the next tick")
        self._timer = threading.Timer(TICK_SECONDS, self._tick)
        self._timer.daemon = True
        self._timer.start()

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
