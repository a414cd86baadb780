"""What every platform adapter is configured with, defined once."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from docassist.core import i18n
from docassist.core.inbox import PROCESS_HOLDER
from docassist.core.limits import INBOX_LEASE_SECONDS, MODEL_CONCURRENCY
from docassist.core.ratelimit import DEFAULT_GLOBAL, DEFAULT_PER_USER

MAX_BODY_BYTES: Final = 1_000_000
"""The largest request body the HTTP server reads (413 beyond): Slack's and Teams' payloads
are a few kB; a large Block Kit interaction stays well under 100 kB."""
SLACK_DISPATCH_THREADS: Final = 64
"""Threads that run Bolt's (synchronous) listeners for the aiohttp server: an ack may wait up
to ACK_DEADLINE_SECONDS on the database, so a burst needs many at once (http.server used one
thread per connection, unbounded)."""
ANSWER_HISTORY_PAGE_SIZE: Final = 200
ANSWER_HISTORY_PAGES: Final = 5
"""How far back a restarted bot looks for an answer it may have posted before it died
(pages of a Slack thread's or DM's history, bot/slack/posted.py)."""
STREAM_APPEND_SECONDS: Final = 0.5
"""A streamed answer's sentences that arrive within this long of its last Slack call wait for
the next one (an append, or the stop): a model that sends several sentences at once costs one
call, not one per sentence (chat.appendStream is rate-limited; slack_sdk's own ChatStream
buffers by size instead). A model slower than this streams sentence by sentence."""


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
