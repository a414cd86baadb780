"""A source's sync lease kept while its sync runs: renewed every third of its length, so a
sync longer than the lease (a first SharePoint enumeration) keeps its source, while the lease
of a process that died still expires after at most one length."""

from __future__ import annotations

import logging
import threading
from types import TracebackType
from typing import Protocol

from docassist.core.errors import StorageError

logger = logging.getLogger(__name__)

RENEWALS_PER_LEASE = 3
"""Renewing this often per lease length leaves two chances before it would lapse."""


class LeaseRows(Protocol):
    def claim_lease(self, name: str, holder: str, seconds: float) -> bool: ...


class LeaseKeeper:
    """`with LeaseKeeper(store, name, holder, seconds):` renews a lease the holder has
    already claimed until the block ends (taking it again as the same holder extends it)."""

    def __init__(self, store: LeaseRows, name: str, holder: str, seconds: float) -> None:
        self.store = store
        self.name = name
        self.holder = holder
        self.seconds = seconds
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._renew, name=f"lease {name}", daemon=True)

    def __enter__(self) -> LeaseKeeper:
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self._done.set()
        self._thread.join()

    def _renew(self) -> None:
        while not self._done.wait(self.seconds / RENEWALS_PER_LEASE):
            try:
                if not self.store.claim_lease(self.name, self.holder, self.seconds):
                    # Only after a stall longer than the lease: another process has the
                    # source now, and this sync's outcome is still recorded (one overlap).
                    logger.warning("lease %s lapsed and was taken by another process",
                                   self.name)
                    return
            except StorageError as error:  # the database away for a moment: try again
                logger.warning("lease %s not renewed: %s", self.name, error)
