"""The background work of a serving process (`serve`, `slack`, `teams`), started once per
process whatever platforms it serves: trace retention, scheduled source syncs
(`DOCASSIST_SYNC_EVERY`, reusing sources/schedule.py), the canary after a model change
(`DOCASSIST_CANARY_AFTER_MODEL_CHANGE`) and one stale-note courier per platform."""

from __future__ import annotations

import threading
from collections.abc import Mapping

from docassist.bot.stale_courier import Post, StaleNoteCourier
from docassist.runtime import Runtime, canary_after_model_change, sync_and_embed
from docassist.sources.schedule import SyncScheduler
from docassist.storage.exports import RetentionScheduler


def sync_scheduler(runtime: Runtime) -> SyncScheduler:
    """The schedule every replica runs: each DOCASSIST_SYNC_EVERY seconds, the sources no
    replica synced within that interval (sources/sync.py, `sync_if_due`)."""
    return SyncScheduler(lambda: sync_and_embed(runtime, scheduled=True),
                         runtime.settings.sync_every)


def start_background(runtime: Runtime, couriers: Mapping[str, Post]) -> None:
    """`couriers`: per platform served, how it posts a stale-answer note."""
    settings = runtime.settings
    if settings.trace_retention_days:
        RetentionScheduler(runtime.store, settings.trace_retention_days).start()
    if settings.sync_every:
        sync_scheduler(runtime).start()
    if settings.canary_after_model_change:  # off the start's path: the port opens first
        threading.Thread(target=canary_after_model_change, args=(runtime,), name="canary",
                         daemon=True).start()
    if settings.stale_notes:
        for platform, post in couriers.items():
            StaleNoteCourier(runtime.store, platform, post).start()
