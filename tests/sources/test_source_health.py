"""Sources that stop working are visible: the report marks stale and failing ones; the
schedule syncs on its own and says when it runs next."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from docassist.cli.report import render_report
from docassist.core.sources import Source, SourceKind
from docassist.sources.schedule import SyncScheduler
from docassist.sources.sync import sync_all
from docassist.storage import Store


def folder_source(store: Store, name: str, path: Path) -> None:
    store.add_source(Source(name=name, kind=SourceKind.FOLDER, settings={"path": str(path)}))


def test_the_report_shows_failing_and_stale_sources(tmp_path: Path) -> None:
    store = Store(tmp_path / "r.db")
    (tmp_path / "ok").mkdir()
    (tmp_path / "ok" / "a.md").write_text("# A\n\ntext\n")
    folder_source(store, "healthy", tmp_path / "ok")
    folder_source(store, "broken", tmp_path / "missing")
    folder_source(store, "waiting", tmp_path / "ok")
    sync_all(store, "healthy")
    sync_all(store, "broken")
    page = render_report(store)
    assert '<tr class="ok" id="source-healthy">' in page
    assert '<tr class="failing" id="source-broken">' in page and "folder not found" in page
    assert '<tr class="stale" id="source-waiting">' in page  # never synced
    store.close()


def test_the_schedule_syncs_by_itself_and_records_the_next_run(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A\n\ntext\n")
    folder_source(store, "docs", tmp_path / "docs")
    scheduler = SyncScheduler(lambda: sync_all(store, every_seconds=3600), every_seconds=0.1)
    scheduler.start()
    try:
        deadline = time.monotonic() + 10
        while not store.source_statuses()[0].last_success and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        scheduler.stop()
    [status] = store.source_statuses()
    assert status.last_success and status.documents == 1
    assert status.next_run and datetime.fromisoformat(status.next_run) > datetime.now(UTC)
    store.close()


def test_a_sync_that_fails_unexpectedly_records_its_end_and_waits_its_interval(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Not only DocAssist's own errors: whatever stops a sync (here the progress display the
    caller passed) is recorded on the source, which then waits its interval instead of being
    due again at every tick."""
    store = Store(tmp_path / "u.db")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A\n\ntext\n")
    folder_source(store, "docs", tmp_path / "docs")

    def progress_gone(item: str) -> None:
        raise RuntimeError("the progress display went away")

    [outcome] = sync_all(store, every_seconds=3600, due_only=True, on_item=progress_gone)
    assert outcome.error is not None and "RuntimeError" in outcome.error
    assert "the sync failed unexpectedly" in caplog.text
    [status] = store.source_statuses()
    assert status.last_error is not None and "RuntimeError" in status.last_error
    assert status.next_run is not None
    assert sync_all(store, every_seconds=3600, due_only=True) == []  # not due again yet
    store.close()
