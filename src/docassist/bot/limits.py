"""What every platform adapter is configured with, defined once."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from docassist.core import i18n
from docassist.core.holder import PROCESS_HOLDER
from docassist.core.limits import INBOX_LEASE_SECONDS, MODEL_CONCURRENCY
from docassist.serving.ratelimit import DEFAULT_GLOBAL, DEFAULT_PER_USER

MAX_BODY_BYTES: Final = 1_000_000
"""The largest request body the HTTP server reads (413 beyond): Slack's and Teams' payloads
are a few kB; a large Block Kit interaction stays well under 100 kB."""

@dataclass(frozen=True, kw_only=True)
class AdapterConfig:
    """The shared part of `SlackConfig` and `TeamsConfig` (keyword-only, so each platform's
    own required fields keep their positions)."""

    default_language: i18n.Language = "en"
    admin_users: frozenset[str] = frozenset()
    """Platform user ids of those who may run the admin commands (`stats`, traces)."""
    per_user_per_minute: int = DEFAULT_PER_USER
    global_per_minute: int = DEFAULT_GLOBAL
    inbox_workers: int = MODEL_CONCURRENCY
    """Turns this process runs at once (Settings.turns_in_flight)."""
    inbox_lease: float = INBOX_LEASE_SECONDS
    """Seconds a claim on an inbox event lasts unless renewed (DOCASSIST_INBOX_LEASE)."""
    replica: str = PROCESS_HOLDER
    """The name its inbox claims begin with: this process's, or for a turn process its
    serving process's (so a claim names the replica that holds it)."""

STALE_NOTE_CLAIM_SECONDS: Final = 120
"""How long a serving process holds the notes it claimed before another may take them."""

STALE_NOTE_POLL_SECONDS: Final = 10.0
"""How often a serving process looks for notes to deliver."""

STALE_NOTE_BATCH: Final = 20
"""Notes one process claims at a time."""
