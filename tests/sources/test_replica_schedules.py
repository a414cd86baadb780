"""Scheduled work shared by replicas, on both stores: the sync schedule of several replicas
on one database syncs a source once per interval (failed or not), a replica that died
mid-sync leaves the source to another when its lease expires, and the weekly gaps digest is
posted once, whichever replica and however many ticks."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from itertools import pairwise
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from docassist.bot.gaps_digest import GapsDigest
from docassist.config import Settings
from docassist.core.sources import Source, SourceKind, SourceStatus
from docassist.runtime import Runtime, open_runtime
from docassist.serving.background import sync_scheduler
from docassist.serving.metrics import Metrics
from docassist.sources.schedule import SyncScheduler
from docassist.sources.sync import lease_name
from docassist.storage import Store
from docassist.storage.backends import open_store
from docassist.storage.postgres import PostgresStore
from docassist.storage.roles import Storage
from docassist_testkit.fakes.web_site import WebSite, page
from tests.cli_run import one_json, run
from tests.conftest import REPO, STORES

EVERY = 1
"""DOCASSIST_SYNC_EVERY in these tests: one second instead of minutes."""
LEASE = 2.0
"""DOCASSIST_SYNC_LEASE of the replica killed mid-sync: two seconds instead of fifteen
minutes."""
SITEMAP = "/sitemap.xml"
HELD_PAGE = "/ops/backup.html"
WAIT = 30.0


@pytest.fixture
def site() -> Iterator[WebSite]:
    web = WebSite()
    web.state.pages.update({
        "/ops/restart.html": page("Restart", ("Steps", "Run systemctl restart docassist-api.")),
        HELD_PAGE: page("Backup", ("Schedule", "Backups of the ledger run nightly at two.")),
        "/keys.html": page("Rotate keys", ("Rotation", "Rotate the signing keys quarterly."))})
    yield web
    for hold in web.state.held.values():
        hold.set()
    web.stop()


@pytest.fixture(params=STORES)
def db(request: pytest.FixtureRequest, tmp_path: Path, site: WebSite) -> str:
    """An empty database of each store with a web source configured (a DOCASSIST_DB value)."""
    url = (str(request.getfixturevalue("pg_url")) if request.param == "postgresql"
           else str(tmp_path / "replicas.db"))
    store = open_store(url)
    store.add_source(Source(name="wiki", kind=SourceKind.WEB,
                            settings={"url": f"{site.url}{SITEMAP}"}))
    store.close()
    return url


class Replica:
    """One serving process's runtime on the shared database: its own store connection, its
    own metrics and the schedule `serve` starts (serving.sync_scheduler)."""

    def __init__(self, db: str, canary: Path | None) -> None:
        self.metrics = Metrics()
        settings = Settings(db=db, embedder="none", retriever="bm25", sync_every=EVERY,
                            sync_lease=LEASE, stale_notes=False)
        if canary is not None:
            settings = settings.model_copy(update={"canary_after_sync": True,
                                                   "canary_sets": str(canary)})
        self.runtime: Runtime = open_runtime(settings, observer=self.metrics)
        self.metrics.watch_store(self.runtime.store)  # as `serve` does
        self.schedule: SyncScheduler = sync_scheduler(self.runtime)

    def samples(self, name: str) -> dict[str, float]:
        """One metric of this replica's /metrics, by its only (or `result`) label's value."""
        text = self.metrics.exposition().decode()
        return {sample.labels.get("result", sample.labels.get("source", "")): sample.value
                for family in text_string_to_metric_families(text)
                for sample in family.samples if sample.name == name}

    def sync_runs(self) -> dict[str, float]:
        """docassist_sync_runs_total{source="wiki"} of this replica, by result."""
        return self.samples("docassist_sync_runs_total")


@pytest.fixture
def replicas(db: str) -> Iterator[Callable[..., list[Replica]]]:
    started: list[Replica] = []

    def start(count: int, canary: Path | None = None) -> list[Replica]:
        """`count` replicas whose schedules tick out of step (1/count of an interval)."""
        for _ in range(count):
            if started:
                time.sleep(EVERY / count)
            replica = Replica(db, canary)
            replica.schedule.start()
            started.append(replica)
        return started

    yield start
    stop_all(started)
    for replica in started:
        replica.runtime.store.close()


def wait_for(condition: Callable[[], object], seconds: float = WAIT) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)




def sitemap_times(site: WebSite) -> list[float]:
    """When each sync began: every sync of a web source asks for the sitemap once."""
    with site.state.lock:
        return [at for at, path in site.state.arrivals if path == SITEMAP]


def status(store: Storage) -> SourceStatus:
    [wiki] = store.source_statuses()
    return wiki


def stop_all(running: list[Replica]) -> None:
    """Stop every schedule, then wait for the runs under way (their metrics and canary)."""
    for replica in running:
        replica.schedule.stop()
    for replica in running:
        replica.schedule.stop(timeout=WAIT)


def assert_once_per_interval(starts: list[float]) -> None:
    gaps = [later - earlier for earlier, later in pairwise(starts)]
    assert gaps and min(gaps) >= EVERY - 0.01, gaps  # three replicas: never a third apart


def test_three_replicas_sync_a_source_once_per_interval(
        replicas: Callable[..., list[Replica]], site: WebSite, tmp_path: Path) -> None:
    canary = tmp_path / "canary.jsonl"
    canary.write_text(json.dumps({"id": "backup", "question": "When do ledger backups run?",
                                  "expected_documents": ["DOC-OPS_BACKUP"]}) + "\n")
    running = replicas(3, canary)
    began = time.monotonic()
    wait_for(lambda: status(running[0].runtime.store).last_success is not None)
    site.state.pages[HELD_PAGE] = page("Backup", ("Schedule", "Backups run nightly at three."))
    wait_for(lambda: len(sitemap_times(site)) >= 4)
    stop_all(running)
    starts = sitemap_times(site)
    assert_once_per_interval(starts)
    assert len(starts) <= (time.monotonic() - began) / EVERY + 2
    runs = [replica.sync_runs() for replica in running]
    assert sum(r.get("ok", 0) for r in runs) == len(starts)  # each sync counted once...
    assert all("error" not in r for r in runs)  # ...and a replica that skipped counts nothing
    store = running[0].runtime.store
    wiki = status(store)
    assert wiki.last_error is None and wiki.documents == 3
    assert wiki.last_success == wiki.last_run and wiki.last_started and wiki.last_run
    assert wiki.last_started <= wiki.last_run and wiki.next_run
    due = datetime.fromisoformat(wiki.next_run) - datetime.fromisoformat(wiki.last_run)
    assert EVERY <= due.total_seconds() < EVERY + 1
    assert wiki.last_success is not None
    last_success = datetime.fromisoformat(wiki.last_success).timestamp()
    for replica in running:  # whichever replica ran the last sync, each one's /metrics says it
        assert replica.samples("docassist_sync_last_success_timestamp_seconds") == {
            "wiki": pytest.approx(last_success)}
    # The canary follows the two syncs that changed documents (the first, the edit), once.
    canaries = [run for run in store.eval_runs() if run["kind"] == "canary"]
    assert len(canaries) == 2


def test_a_failing_source_is_tried_once_per_interval_not_by_every_replica(
        replicas: Callable[..., list[Replica]], site: WebSite) -> None:
    site.state.sitemap = False  # the sitemap answers 404: every sync of the source fails
    running = replicas(3)
    wait_for(lambda: len(sitemap_times(site)) >= 3)
    stop_all(running)
    starts = sitemap_times(site)
    assert_once_per_interval(starts)
    runs = [replica.sync_runs() for replica in running]
    assert sum(r.get("error", 0) for r in runs) == len(starts)
    assert all("ok" not in r for r in runs)
    wiki = status(running[0].runtime.store)
    assert wiki.last_error and "sitemap" in wiki.last_error and wiki.last_success is None
    assert wiki.documents == 0


def test_a_replica_killed_mid_sync_leaves_the_source_to_another_after_its_lease(
        db: str, replicas: Callable[..., list[Replica]], site: WebSite) -> None:
    site.state.held[HELD_PAGE] = hold = threading.Event()
    dying = subprocess.Popen(  # a real process syncing by hand, stuck on the held page
        [sys.executable, "-m", "docassist", "sync", "--json"], cwd=REPO,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env={**os.environ, "DOCASSIST_DB": db, "DOCASSIST_EMBEDDER": "none",
             "DOCASSIST_RETRIEVER": "bm25", "DOCASSIST_SYNC_LEASE": str(LEASE)})
    try:
        wait_for(lambda: any(path == HELD_PAGE for _, path in site.state.arrivals))
    finally:
        dying.send_signal(signal.SIGKILL)
        dying.wait()
    hold.set()
    watcher = open_store(db)
    try:
        [lease] = [row for row in watcher.lease_rows() if row["name"] == lease_name("wiki")]
        assert lease["holder"]  # the dead process's lease, still held
        expires = datetime.fromisoformat(lease["expires_at"]).timestamp()
        died = status(watcher)
        assert died.last_started and died.last_run is None and died.last_success is None
        running = replicas(2)
        wait_for(lambda: status(watcher).last_success is not None)
        stop_all(running)
        wiki = status(watcher)
    finally:
        watcher.close()
    taken_over = sitemap_times(site)[1]  # the second sync: by a replica, after the lease
    assert taken_over + (time.time() - time.monotonic()) >= expires - 0.01
    assert wiki.documents == 3 and wiki.last_error is None
    assert wiki.last_started and wiki.last_run and wiki.last_started > died.last_started
    runs = [replica.sync_runs() for replica in running]
    assert sum(r.get("ok", 0) for r in runs) == len(sitemap_times(site)) - 1
    assert all("error" not in r for r in runs)
    shown = run("sources", "--json", db=db, DOCASSIST_EMBEDDER="none",
                DOCASSIST_RETRIEVER="bm25")
    assert shown.returncode == 0, shown.stderr
    [listed] = one_json(shown.stdout)["sources"]
    assert (listed["documents"], listed["last_error"]) == (3, None)
    assert listed["last_success"] == wiki.last_success and listed["next_run"] == wiki.next_run
    assert listed["last_started"] == wiki.last_started  # the takeover's start, after the dead one


def test_a_sync_longer_than_its_lease_keeps_it_while_its_replica_lives(
        replicas: Callable[..., list[Replica]], site: WebSite) -> None:
    site.state.held[HELD_PAGE] = hold = threading.Event()
    running = replicas(2)
    wait_for(lambda: any(path == HELD_PAGE for _, path in site.state.arrivals))
    store = running[0].runtime.store
    syncing = status(store)
    assert syncing.last_started and syncing.last_run is None  # running: began, not ended
    time.sleep(2 * LEASE)  # the other replica ticks twice per lease meanwhile
    [lease] = [row for row in store.lease_rows() if row["name"] == lease_name("wiki")]
    assert datetime.fromisoformat(lease["expires_at"]) > datetime.now(UTC)  # renewed
    assert len(sitemap_times(site)) == 1  # no second sync of the source began
    hold.set()
    wait_for(lambda: status(store).last_success is not None)
    stop_all(running)
    assert sum(replica.sync_runs().get("ok", 0) for replica in running) == len(
        sitemap_times(site))


@pytest.fixture(params=STORES)
def two_processes(request: pytest.FixtureRequest, tmp_path: Path
                  ) -> Iterator[tuple[Storage, Storage]]:
    """An empty database opened twice: two replicas, on each store."""
    if request.param == "postgresql":
        url = str(request.getfixturevalue("pg_url"))
        opened: list[Storage] = [PostgresStore(url), PostgresStore(url)]
    else:
        opened = [Store(tmp_path / "digest.db"), Store(tmp_path / "digest.db")]
    yield opened[0], opened[1]
    for store in opened:
        store.close()


def test_the_gaps_digest_is_posted_once_a_week_whatever_replica_and_tick(
        two_processes: tuple[Storage, Storage]) -> None:
    posted: list[str] = []  # the admin channel (Slack's or Teams' poster, external)
    digests = [GapsDigest(store, posted.append, "en") for store in two_processes]
    assert digests[0].run_if_due()
    for _tick in range(3):  # the hourly ticks of the week, on both replicas
        assert not any(digest.run_if_due() for digest in digests)
    assert posted == ["No gaps this week."]  # no question was asked
