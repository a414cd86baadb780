"""Syncing configured sources: one at a time per source across processes (a lease row in the
store), each kind incremental, every outcome recorded on the source (never silent)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from docassist.core.errors import ConfigurationError, DocAssistError
from docassist.core.inbox import PROCESS_HOLDER
from docassist.core.limits import SYNC_LEASE_SECONDS
from docassist.core.sources import Source, SourceKind, SyncOutcome
from docassist.core.stale import DocumentChange
from docassist.sources.confluence import ConfluenceApi
from docassist.sources.confluence_sync import ConfluenceSync
from docassist.sources.sharepoint import SharePointSync, graph_client
from docassist.sources.web import WebFetcher
from docassist.sources.web_sync import OnItem, WebSync
from docassist.storage.backends import AnyStore
from docassist.storage.indexer import index_paths

logger = logging.getLogger(__name__)

HOLDER = PROCESS_HOLDER
"""This process's name on the leases it takes."""

AfterSync = Callable[[AnyStore], None]


def lease_name(source: str) -> str:
    return f"sync:{source}"


def sync_folder(store: AnyStore, source: Source, on_item: OnItem | None = None) -> SyncOutcome:
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


def _sync_one(store: AnyStore, source: Source, on_item: OnItem | None) -> SyncOutcome:
    if source.kind is SourceKind.FOLDER:
        return sync_folder(store, source, on_item)
    if source.kind is SourceKind.CONFLUENCE:
        return sync_confluence(store, source, on_item)
    if source.kind is SourceKind.SHAREPOINT:
        return sync_sharepoint(store, source, on_item)
    fetcher = WebFetcher(source.web())
    try:
        return WebSync(store, source, fetcher, on_item).run()
    finally:
        fetcher.close()


def sync_confluence(store: AnyStore, source: Source, on_item: OnItem | None) -> SyncOutcome:
    api = ConfluenceApi(source.confluence())
    try:
        return ConfluenceSync(store, source, api, on_item).run()
    finally:
        api.close()


def sync_sharepoint(store: AnyStore, source: Source, on_item: OnItem | None) -> SyncOutcome:
    graph = graph_client()
    try:
        return SharePointSync(store, source, graph, on_item).run()
    finally:
        graph.close()


def selected_sources(store: AnyStore, name: str | None) -> list[Source]:
    sources = store.sources()
    if name is None:
        return sources
    chosen = [source for source in sources if source.name == name]
    if not chosen:
        raise ConfigurationError(f"no source named {name!r}; see `docassist sources`")
    return chosen


def note_stale_threads(store: AnyStore, outcome: SyncOutcome, active_days: int,
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


def sync_source(store: AnyStore, source: Source, *, every_seconds: float | None = None,
                on_item: OnItem | None = None, stale_days: int | None = None) -> SyncOutcome:
    """Sync one source under its lease; the outcome (errors included) is recorded on it."""
    lease = lease_name(source.name)
    if not store.claim_lease(lease, HOLDER, SYNC_LEASE_SECONDS):
        outcome = SyncOutcome(source.name, source.kind)
        outcome.errors.append("a sync of this source is running in another process")
        return outcome
    try:
        try:
            outcome = _sync_one(store, source, on_item)
        except DocAssistError as error:
            outcome = SyncOutcome(source.name, source.kind, errors=[str(error)])
        if stale_days is not None:
            note_stale_threads(store, outcome, stale_days, source.collection)
        next_run = None
        if every_seconds:
            when = datetime.now(UTC) + timedelta(seconds=every_seconds)
            next_run = when.isoformat(timespec="milliseconds")
        store.record_sync(outcome, next_run)
    finally:
        store.release_lease(lease, HOLDER)
    if outcome.error:
        logger.warning("source %s: %s", source.name, outcome.error)
    return outcome


def sync_all(store: AnyStore, name: str | None = None, *, every_seconds: float | None = None,
             on_item: OnItem | None = None, after: AfterSync | None = None,
             stale_days: int | None = None) -> list[SyncOutcome]:
    """Sync the named source or every source; `after` runs once (e.g. embedding new chunks);
    with `stale_days`, threads active that recently get notes about changed citations."""
    outcomes = [sync_source(store, source, every_seconds=every_seconds, on_item=on_item,
                            stale_days=stale_days)
                for source in selected_sources(store, name)]
    if after is not None and any(o.added or o.updated for o in outcomes):
        after(store)
    return outcomes
