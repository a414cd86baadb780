"""Syncing configured sources: one at a time per source across processes (a lease row in the
store), each kind incremental, every outcome recorded on the source (never silent). The
schedule (`sync_if_due`) syncs a source at most once per interval across all replicas."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from pydantic import ValidationError

from docassist.core.errors import ConfigurationError, DocAssistError
from docassist.core.holder import PROCESS_HOLDER
from docassist.core.sources import Source, SourceKind, SyncOutcome, sync_is_due
from docassist.core.stale import DocumentChange
from docassist.sources.confluence import ConfluenceApi
from docassist.sources.confluence_sync import ConfluenceSync
from docassist.sources.lease import LeaseKeeper
from docassist.sources.limits import SYNC_LEASE_SECONDS
from docassist.sources.sharepoint import SharePointSync, graph_client
from docassist.sources.web import WebFetcher
from docassist.sources.web_sync import OnItem, WebSync
from docassist.storage.indexer import index_paths
from docassist.storage.roles import SyncRows

logger = logging.getLogger(__name__)

HOLDER = PROCESS_HOLDER
"""This process's name on the leases it takes."""

AfterSync = Callable[[SyncRows], None]


def lease_name(source: str) -> str:
    return f"sync:{source}"


def sync_folder(store: SyncRows, source: Source, on_item: OnItem | None = None) -> SyncOutcome:
    """Today's `index PATH` as a source: the same incremental indexer, its documents tagged."""
    outcome = SyncOutcome(source.name, source.kind)
    folder = Path(source.folder().path)
    if not folder.is_dir():  # nothing is taken as deleted when the folder itself is missing
        outcome.errors.append(f"{folder}: folder not found")
        return outcome
    before = set(store.source_document_ids(source.name).values())
    report = index_paths(store, [folder], source=source.name, collection=source.collection,
                         on_file=(lambda path: on_item(str(path))) if on_item else None)
    outcome.added = [d for d in report.indexed if d not in before]
    outcome.updated = [d for d in report.indexed if d in before]
    outcome.deleted = report.removed
    outcome.unchanged = report.unchanged
    outcome.failed = [note.split(": skipped", 1)[0] for note in report.notes
                      if ": skipped" in note]
    outcome.errors = [note for note in report.notes if ": skipped" in note]
    return outcome


def _sync_one(store: SyncRows, source: Source, on_item: OnItem | None) -> SyncOutcome:
    if source.kind is SourceKind.FOLDER:
        return sync_folder(store, source, on_item)
    if source.kind is SourceKind.CONFLUENCE:
        return sync_confluence(store, source, on_item)
    if source.kind is SourceKind.SHAREPOINT:
        return sync_sharepoint(store, source, on_item)
    try:
        settings = source.web()
    except ValidationError as error:  # a URL stored before the checks (user:password@)
        raise ConfigurationError(f"invalid settings: {error.errors()[0]['msg']}") from None
    fetcher = WebFetcher(settings)
    try:
        return WebSync(store, source, fetcher, on_item).run()
    finally:
        fetcher.close()


def sync_confluence(store: SyncRows, source: Source, on_item: OnItem | None) -> SyncOutcome:
    api = ConfluenceApi(source.confluence())
    try:
        return ConfluenceSync(store, source, api, on_item).run()
    finally:
        api.close()


def sync_sharepoint(store: SyncRows, source: Source, on_item: OnItem | None) -> SyncOutcome:
    graph = graph_client()
    try:
        return SharePointSync(store, source, graph, on_item).run()
    finally:
        graph.close()


def selected_sources(store: SyncRows, name: str | None) -> list[Source]:
    sources = store.sources()
    if name is None:
        return sources
    chosen = [source for source in sources if source.name == name]
    if not chosen:
        raise ConfigurationError(f"no source named {name!r}; see `docassist sources`")
    return chosen


def note_stale_threads(store: SyncRows, outcome: SyncOutcome, active_days: int,
                       collection: str | None = None) -> int:
    """Pending notes for threads whose latest answer cited a version this sync replaced or
    removed (delivered later by the serving processes). `collection` is the source's: where
    its removed documents were (a note keeps the cited version's own when the answer
    recorded it)."""
    changes = dict.fromkeys(outcome.updated, DocumentChange.UPDATED)
    changes.update(dict.fromkeys(outcome.deleted, DocumentChange.DELETED))
    current = {document_id: document for document_id in outcome.updated
               if (document := store.document(document_id)) is not None}
    titles = {document_id: document.title for document_id, document in current.items()}
    collections = {document_id: document.collection for document_id, document in current.items()}
    if collection is not None:
        collections.update(dict.fromkeys(outcome.deleted, collection))
    return store.record_stale_notes(changes, titles, active_days, collections)


def _holder() -> str:
    """A holder per sync: two syncs of one source never overlap, not even in one process
    (several schedulers, a scheduler and an admin's sync), since the store lets a holder
    take its own lease again."""
    return f"{HOLDER}:{uuid.uuid4().hex[:8]}"


def sync_source(store: SyncRows, source: Source, *, every_seconds: float | None = None,
                on_item: OnItem | None = None, stale_days: int | None = None,
                lease_seconds: float = SYNC_LEASE_SECONDS) -> SyncOutcome:
    """Sync one source under its lease (renewed while the sync runs); the outcome (errors
    included) is recorded on it."""
    lease, holder = lease_name(source.name), _holder()
    if not store.claim_lease(lease, holder, lease_seconds):
        outcome = SyncOutcome(source.name, source.kind)
        outcome.errors.append("a sync of this source is running in another process")
        return outcome
    try:
        with LeaseKeeper(store, lease, holder, lease_seconds):
            return _sync_leased(store, source, every_seconds, on_item, stale_days)
    finally:
        store.release_lease(lease, holder)


def sync_if_due(store: SyncRows, source: Source, *, every_seconds: float,
                on_item: OnItem | None = None, stale_days: int | None = None,
                lease_seconds: float = SYNC_LEASE_SECONDS) -> SyncOutcome | None:
    """The scheduled sync every replica runs: None (nothing done, nothing counted) when a
    sync of the source ended within the interval, by any replica, or one is running now.
    Looking costs a read; the lease is claimed only when the source is due, and the store is
    read again under it (another replica may have finished between the look and the claim)."""
    if not sync_is_due(store.sync_times(source.name), every_seconds, datetime.now(UTC)):
        return None
    lease, holder = lease_name(source.name), _holder()
    if not store.claim_lease(lease, holder, lease_seconds):
        return None
    try:
        if not sync_is_due(store.sync_times(source.name), every_seconds, datetime.now(UTC)):
            return None
        with LeaseKeeper(store, lease, holder, lease_seconds):
            return _sync_leased(store, source, every_seconds, on_item, stale_days)
    finally:
        store.release_lease(lease, holder)


def _sync_leased(store: SyncRows, source: Source, every_seconds: float | None,
                 on_item: OnItem | None, stale_days: int | None) -> SyncOutcome:
    store.record_sync_started(source.name)
    try:
        outcome = _sync_one(store, source, on_item)
    except DocAssistError as error:
        outcome = SyncOutcome(source.name, source.kind, errors=[str(error)])
    except Exception as error:  # a bug or a library's surprise: recorded like any failure,
        # so the source waits its interval instead of being due again at every tick
        logger.exception("source %s: the sync failed unexpectedly", source.name)
        outcome = SyncOutcome(source.name, source.kind, errors=[
            f"unexpected {type(error).__name__} (the log has the details)"])
    if stale_days is not None:
        note_stale_threads(store, outcome, stale_days, source.collection)
    store.record_sync(outcome, every_seconds)
    if outcome.error:
        logger.warning("source %s: %s", source.name, outcome.error)
    return outcome


def sync_all(store: SyncRows, name: str | None = None, *, every_seconds: float | None = None,
             on_item: OnItem | None = None, after: AfterSync | None = None,
             stale_days: int | None = None, lease_seconds: float = SYNC_LEASE_SECONDS,
             due_only: bool = False) -> list[SyncOutcome]:
    """Sync the named source or every source; `after` runs once (e.g. embedding new chunks);
    with `stale_days`, threads active that recently get notes about changed citations.
    `due_only` (the schedule, with `every_seconds`): only sources no one synced within the
    interval, and only the syncs that ran are returned."""
    outcomes: list[SyncOutcome] = []
    for source in selected_sources(store, name):
        if due_only and every_seconds:
            outcome = sync_if_due(store, source, every_seconds=every_seconds, on_item=on_item,
                                  stale_days=stale_days, lease_seconds=lease_seconds)
        else:
            outcome = sync_source(store, source, every_seconds=every_seconds, on_item=on_item,
                                  stale_days=stale_days, lease_seconds=lease_seconds)
        if outcome is not None:
            outcomes.append(outcome)
    if after is not None and any(o.added or o.updated for o in outcomes):
        after(store)
    return outcomes
