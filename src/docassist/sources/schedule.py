"""Scheduled syncs in a serving process (`DOCASSIST_SYNC_EVERY` seconds, off by default).

Every replica runs the schedule; the store decides (sync.py, `sync_if_due`): a source is
synced when no sync of it ended within the interval, by whichever replica looks first and
takes its lease; the others skip it. No coordinator is needed beside the store.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from docassist.core.sources import SyncOutcome

logger = logging.getLogger(__name__)


class SyncScheduler:
    def __init__(self, run: Callable[[], list[SyncOutcome]], every_seconds: float) -> None:
        self.run = run
        self.every = every_seconds
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="scheduled-sync", daemon=True)

    def run_once(self) -> list[SyncOutcome]:
        """One scheduled sync; a failure is logged (and recorded on the source), never fatal."""
        try:
            return self.run()
        except Exception:
            logger.exception("scheduled sync failed; trying again at the next run")
            return []

    def start(self) -> None:
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(self.every):
            self.run_once()

    def stop(self, timeout: float | None = None) -> None:
        """No run after this one; with `timeout`, wait that long for a run under way (its
        embedding, canary and metrics included) to end."""
        self._stop.set()
        if timeout is not None and self._thread.is_alive():
            self._thread.join(timeout)
