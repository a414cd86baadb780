"""Prometheus metrics (`GET /metrics` of `docassist serve`): the one module that imports
prometheus-client. The core and the adapters report through the `Observer` protocol
(core/ports/observer.py); `Metrics` is its implementation.

Every turn of the process is counted whichever inbox worker or thread ran it: they all share
the engine's observer, and the server runs in one process (no multiprocess mode needed). The
inbox gauges and the sources' last successes are read from the store at scrape time, so they
count what every process sharing the database has left to do, and show a sync whichever
replica ran it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import datetime
from typing import Final, Protocol

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from docassist.core.ports import InboxGauge
from docassist.core.sources import SourceStatus, SyncOutcome

CONTENT_TYPE: Final = "text/plain; version=0.0.4; charset=utf-8"
TURN_BUCKETS: Final = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)
"""Seconds: rules answer in tens of ms, a local 7B model in tens of seconds."""
RETRIEVAL_BUCKETS: Final = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)


class SharedState(InboxGauge, Protocol):
    """What every process sharing the store sees alike, read at each scrape."""

    def source_statuses(self) -> list[SourceStatus]: ...


class _InboxCollector(Collector):
    """The durable inbox's depth and the age of its oldest unfinished event, at scrape time."""

    def __init__(self, store: InboxGauge) -> None:
        self.store = store

    def collect(self) -> Iterator[GaugeMetricFamily]:
        backlog = self.store.inbox_backlog()
        age = 0.0
        if backlog.oldest_received_at is not None:
            oldest = datetime.fromisoformat(backlog.oldest_received_at).timestamp()
            age = max(0.0, time.time() - oldest)
        yield GaugeMetricFamily("docassist_inbox_pending",
                                "Events stored and not yet finished (pending or answered).",
                                value=backlog.pending)
        yield GaugeMetricFamily("docassist_inbox_oldest_pending_age_seconds",
                                "Age of the oldest unfinished event (0 when none).", value=age)


class _SourcesCollector(Collector):
    """When each source last synced cleanly, whichever process ran that sync (at scrape time:
    with replicas, the one that synced is not the one scraped)."""

    def __init__(self, store: SharedState) -> None:
        self.store = store

    def collect(self) -> Iterator[GaugeMetricFamily]:
        family = GaugeMetricFamily("docassist_sync_last_success_timestamp_seconds",
                                   "When the source last synced without error (any process).",
                                   labels=["source"])
        for status in self.store.source_statuses():
            if status.last_success is not None:
                family.add_metric([status.name],
                                  datetime.fromisoformat(status.last_success).timestamp())
        yield family


class Metrics:
    """The Observer that feeds Prometheus; one registry per instance (tests make several)."""

    def __init__(self, store: SharedState | None = None) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.turns = Counter("docassist_turns", "Turns, by status and decision.",
                             ["status", "decision"], registry=r)
        self.turn_seconds = Histogram("docassist_turn_duration_seconds", "Turn duration.",
                                      ["status"], buckets=TURN_BUCKETS, registry=r)
        self.model_seconds = Histogram("docassist_model_request_duration_seconds",
                                       "Model call latency (retries included).", ["backend"],
                                       buckets=TURN_BUCKETS, registry=r)
        self.model_errors = Counter("docassist_model_errors", "Model calls that failed "
                                    "after their retries.", ["backend"], registry=r)
        self.model_retries = Counter("docassist_model_retries", "Model requests retried.",
                                     ["request"], registry=r)
        self.retrieval_seconds = Histogram("docassist_retrieval_duration_seconds",
                                           "Search latency.", ["retriever"],
                                           buckets=RETRIEVAL_BUCKETS, registry=r)
        self.rate_limited_total = Counter("docassist_rate_limited",
                                          "Messages, commands and buttons refused by the "
                                          "rate limit.", registry=r)
        self._sync_metrics()
        if store is not None:
            self.watch_store(store)

    def watch_store(self, store: SharedState) -> None:
        """Read the inbox's depth and oldest age, and each source's last success, from
        `store` at each scrape."""
        self.registry.register(_InboxCollector(store))
        self.registry.register(_SourcesCollector(store))

    def _sync_metrics(self) -> None:
        r = self.registry
        self.sync_runs = Counter("docassist_sync_runs", "Source syncs, by source and result.",
                                 ["source", "result"], registry=r)
        self.sync_items = Counter("docassist_sync_items", "Items synced, by source and what "
                                  "happened to them (added, updated, deleted, failed).",
                                  ["source", "change"], registry=r)

    # --- the Observer protocol ----------------------------------------------------------

    def turn_finished(self, status: str, decision: str, seconds: float) -> None:
        self.turns.labels(status=status, decision=decision).inc()
        self.turn_seconds.labels(status=status).observe(seconds)

    def model_called(self, backend: str, seconds: float, failed: bool) -> None:
        self.model_seconds.labels(backend=backend).observe(seconds)
        if failed:
            self.model_errors.labels(backend=backend).inc()

    def model_retried(self, what: str) -> None:
        self.model_retries.labels(request=what).inc()

    def retrieval_finished(self, retriever: str, seconds: float) -> None:
        self.retrieval_seconds.labels(retriever=retriever).observe(seconds)

    def rate_limited(self) -> None:
        self.rate_limited_total.inc()

    def sync_finished(self, outcome: SyncOutcome) -> None:
        self.sync_runs.labels(source=outcome.name,
                              result="error" if outcome.error else "ok").inc()
        for change, items in (("added", outcome.added), ("updated", outcome.updated),
                              ("deleted", outcome.deleted), ("failed", outcome.failed)):
            self.sync_items.labels(source=outcome.name, change=change).inc(len(items))

    # --- the endpoint -------------------------------------------------------------------

    def exposition(self) -> bytes:
        """The Prometheus text format of every metric."""
        return generate_latest(self.registry)
