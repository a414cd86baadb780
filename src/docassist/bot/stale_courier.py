"""Delivering stale-answer notes from a serving process: claim in the store, post through the
platform, mark delivered. Two processes never post the same note: a claim holds it (with an
expiry, so a note claimed by a process that died is posted by another later)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Protocol

from docassist.bot.limits import STALE_NOTE_BATCH, STALE_NOTE_CLAIM_SECONDS, STALE_NOTE_POLL_SECONDS
from docassist.core.stale import StaleNote
from docassist.sources.sync import HOLDER

logger = logging.getLogger(__name__)

Post = Callable[[StaleNote], None]


class NoteQueue(Protocol):
    """The store as the courier sees it: claim, then mark delivered or failed."""

    def claim_stale_notes(self, platform: str, holder: str, seconds: float,
                          limit: int) -> list[StaleNote]: ...

    def note_delivered(self, note_id: int) -> None: ...

    def note_failed(self, note_id: int, error: str) -> None: ...


class StaleNoteCourier:
    def __init__(self, store: NoteQueue, platform: str, post: Post, holder: str = HOLDER,
                 every: float = STALE_NOTE_POLL_SECONDS) -> None:
        self.store = store
        self.platform = platform
        self.post = post
        self.holder = holder
        self.every = every
        self._stop = threading.Event()

    def deliver_once(self) -> int:
        """Claim and post the pending notes of this platform; returns how many were posted."""
        posted = 0
        for note in self.store.claim_stale_notes(self.platform, self.holder,
                                                 STALE_NOTE_CLAIM_SECONDS, STALE_NOTE_BATCH):
            try:
                self.post(note)
            except Exception as error:  # the platform refused or is down: tried again later
                logger.warning("stale note %s not posted: %s", note.note_id, error)
                self.store.note_failed(note.note_id, f"{type(error).__name__}: {error}")
                continue
            self.store.note_delivered(note.note_id)
            posted += 1
        return posted

    def start(self) -> None:
        threading.Thread(target=self._run, name=f"stale-notes-{self.platform}",
                         daemon=True).start()

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            try:
                self.deliver_once()
            except Exception:  # a busy database must not end the loop
                logger.exception("stale-note delivery failed; trying again later")

    def stop(self) -> None:
        self._stop.set()
