"""The SQLite store: catalog, conversations, traces and event dedupe in one file (WAL).

`Store` opens the file (migrated on open), holds its connections and locks, and runs each
write in a BEGIN IMMEDIATE transaction: its own, or for the writes a turn makes (claim,
write probe, commit, finish, gap questions) one shared with the process's other writers
queued meanwhile (shared_writes.py). Its rows are kept by kind in mixins. Those both stores
share, written once over dialect.py: inbox_rows (the durable inbox), claims,
conversation_rows (commits, purge), trace_rows, source_rows, stale_rows, feedback_rows,
teams_rows, scope_rows, gap_rows, and catalog_rows (documents, chunks, search rows, vectors;
full text through `_full_text()`: FTS5 on this file, full_text.py).
"""

from __future__ import annotations

import logging
import shutil
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from sqlite_utils import Database

from docassist.core.documents import DocumentInfo
from docassist.core.errors import StorageBusyError, StorageError, StorageFullError
from docassist.storage.catalog_rows import CatalogRows, CatalogStore
from docassist.storage.chunk_cache import ChunkCache
from docassist.storage.claims import ClaimRows
from docassist.storage.connection import ReadConnections, connect, is_busy, storage_error
from docassist.storage.conversation_rows import ConversationRows, ConversationRowsStore
from docassist.storage.dialect import SQLITE, Dialect, Query, SqlStore, Stream, rows_of
from docassist.storage.feedback_rows import FeedbackRows
from docassist.storage.full_text import FTS_COLUMN_WEIGHTS, Fts5Queries, FullText
from docassist.storage.gap_rows import GapRows
from docassist.storage.group_commit import GroupCommit
from docassist.storage.inbox_rows import InboxRows
from docassist.storage.limits import (
    STORAGE_BUSY_TIMEOUT_MS,
    STORAGE_MIN_FREE_BYTES,
    STORAGE_MIN_FREE_PAGES,
    STORAGE_READ_CONNECTIONS,
    STORAGE_RETRY_BACKOFF_SECONDS,
    STORAGE_WRITE_ATTEMPTS,
)
from docassist.storage.migrations import migrations
from docassist.storage.scope_rows import ScopeRows
from docassist.storage.shared_writes import SharedWrites
from docassist.storage.source_rows import SourceRows
from docassist.storage.stale_rows import StaleRows
from docassist.storage.teams_rows import TeamsRows
from docassist.storage.trace_rows import TraceRows
from docassist.storage.writer_turns import WriterTurns

T = TypeVar("T")

__all__ = ["BUSY_TIMEOUT_MS", "FTS_COLUMN_WEIGHTS", "Store"]
"""FTS_COLUMN_WEIGHTS lives in full_text.py; re-exported for the callers that import it here."""

logger = logging.getLogger(__name__)

BUSY_TIMEOUT_MS = STORAGE_BUSY_TIMEOUT_MS


class Store(CatalogRows, ConversationRows, TraceRows, InboxRows, SourceRows, StaleRows,
            FeedbackRows, TeamsRows, ScopeRows, ClaimRows, GapRows):
    """One database file; thread-safe through one lock around its connection.

    The durable inbox's ack path is what a platform waits for: `enqueue` is group-committed
    (see group_commit.py: a burst of events shares a few transactions instead of queueing
    one lock hold and one fsync each), and `inbox_seen` reads on a connection of its own, so
    it never waits for the turn workers on the shared one (WAL readers don't wait for
    writers). Measured on a 500-event burst: ack p99 ~0.9 s before, see docs/scaling-out.md.
    """

    dialect: Dialect = SQLITE

    def __init__(self, path: str | Path, *, save_raw: bool = False) -> None:
        self.path = str(path)
        self.save_raw = save_raw
        """With it off, a finished inbox event keeps ids and hashes only (see privacy.py)."""
        try:
            self.db = Database(self._connect())
            if self.path != ":memory:":
                self.db.enable_wal()
            self.db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            # Deleted and overwritten rows are zeroed, not left in free pages: erased text
            # must not stay readable in the file (privacy.py).
            self.db.execute("PRAGMA secure_delete = ON")
            migrations.apply(self.db)
            # An in-memory database exists once per connection: there the ack path shares it.
            separate = self.path != ":memory:"
            self._seen_connection = self._connect() if separate else self.db.conn
        except sqlite3.Error as error:
            folder = Path(self.path).parent
            if not self.path.startswith(("file:", ":memory:")) and not folder.is_dir():
                raise StorageError(f"cannot open database {self.path}: the folder {folder} "
                                   "does not exist; create it, or point DOCASSIST_DB at a "
                                   "file in a folder that does") from error
            raise StorageError(f"cannot open database {self.path}: {error}") from error
        self._lock = threading.RLock()
        # The catalog cache shares the connection's lock: documents() reads under that lock
        # when the database is in memory, and one lock cannot be taken in two orders.
        self._catalog_lock: threading.Lock | threading.RLock = self._lock
        self._writer_turns = WriterTurns(self.path)
        self._seen_lock = threading.Lock() if separate else self._lock
        self._readers = ReadConnections(self._connect, STORAGE_READ_CONNECTIONS if separate else 0)
        self._acks: GroupCommit[list[Any], int | None] = GroupCommit(self._insert_inbox_rows)
        self._arrivals = GroupCommit(self._count_arrivals)
        self._writes = SharedWrites(self._transaction)
        self._catalog_cache: tuple[int, dict[str, DocumentInfo]] | None = None
        self._chunks = ChunkCache()
        self._fts = Fts5Queries(self._reading)

    def _connect(self) -> sqlite3.Connection:
        return connect(self.path, BUSY_TIMEOUT_MS / 1000)

    def close(self) -> None:
        """Close both connections, each under its lock: a background thread still using the
        store (an inbox poller) then gets an error, never a connection closed under it
        (that crashes the interpreter). Events queued without waiting are committed first."""
        self._acks.close()
        self._readers.close()
        with self._seen_lock:
            if self._seen_connection is not self.db.conn:
                self._seen_connection.close()
        with self._lock:
            self.db.close()
            self._writer_turns.close()

    @contextmanager
    def _reading(self) -> Iterator[sqlite3.Connection]:
        """A connection for one read outside any transaction: one of ReadConnections (the
        shared connection, under its lock, for an in-memory database)."""
        if not self._readers.size:
            with self._lock:
                yield self.db.conn
            return
        with self._readers.lend() as connection:
            yield connection

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """BEGIN IMMEDIATE … COMMIT: takes the write lock first, so version checks hold.

        The writer turn (writer_turns.py), then the lock; either held by another connection is
        waited for (busy timeout) and retried a bounded number of times; every SQLite error,
        in the body or at COMMIT, leaves the transaction rolled back and surfaces as a
        StorageError (busy, read-only, full: see `connection.storage_error`).
        """
        with self._lock:
            connection = self.db.conn
            _begin_immediate(connection, self._writer_turns)
            try:
                yield connection
                connection.execute("COMMIT")
            except BaseException as error:
                _roll_back(connection)
                if isinstance(error, sqlite3.Error):
                    raise storage_error(error) from error
                raise
            finally:
                self._writer_turns.give_back()

    # The seam the shared row mixins use (dialect.SqlStore), on this store's own paths.

    def _write(self) -> AbstractContextManager[sqlite3.Connection]:
        return self._transaction()

    def _write_retried(self, body: Callable[[sqlite3.Connection], T]) -> T:
        with self._transaction() as connection:
            return body(connection)

    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """A read on the shared connection, under the store's lock."""
        with self._lock:
            return list(self.db.query(sql, params))

    def _read_apart(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        with self._reading() as connection:
            return rows_of(connection.execute(sql, params))

    def _read_ack_path(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        with self._seen_lock:
            return rows_of(self._seen_connection.execute(sql, params))

    @contextmanager
    def _reads(self) -> Iterator[Query]:
        with self._lock:
            yield self.db.query

    def _full_text(self) -> FullText:
        return self._fts

    @contextmanager
    def _snapshot(self) -> Iterator[Stream]:
        with self._lock:
            connection = self.db.conn
            connection.execute("BEGIN")  # one read transaction: one snapshot for every read
            try:
                yield connection.execute
            finally:
                connection.execute("COMMIT")

    def _drop_erased_pages(self) -> None:
        """The WAL checkpointed and truncated: no older page version keeps erased text."""
        with self._lock:
            self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def ensure_writable(self) -> None:
        """Raise a StorageUnavailableError when a write would fail now (busy past the bounded
        wait, read-only, no room left), before a turn acts. The probe is a no-op write in a
        rolled-back transaction: nothing is stored. SQLite itself finds a full disk only when
        it needs a new page, at commit, so the room is checked here too."""
        with suppress(_ProbeDone):
            self._shared_write(_probe_write)
        self._ensure_room()

    def _shared_write(self, body: Callable[[sqlite3.Connection], T]) -> T:
        """`body` in a write transaction it may share with this process's other writers
        queued meanwhile (shared_writes.py); its result once committed."""
        return self._writes.write(body)

    def _ensure_room(self) -> None:
        with self._lock:
            pages = self.db.execute("PRAGMA page_count").fetchone()[0]
            limit = self.db.execute("PRAGMA max_page_count").fetchone()[0]
        if limit - pages < STORAGE_MIN_FREE_PAGES:
            raise StorageFullError("database or disk is full: the database is at its page "
                                   f"limit ({pages} of {limit} pages)")
        folder = Path(self.path).parent
        if not self.path.startswith("file:") and self.path != ":memory:" and folder.is_dir():
            free = shutil.disk_usage(folder).free
            if free < STORAGE_MIN_FREE_BYTES:
                raise StorageFullError(f"database or disk is full: {free} bytes free")


class _ProbeDone(Exception):
    """Ends the write probe of `ensure_writable` with a rollback."""


def _probe_write(connection: sqlite3.Connection) -> None:
    connection.execute("UPDATE meta SET value = value WHERE key = 'index_version'")
    raise _ProbeDone


def _took_turn(turns: WriterTurns, connection: sqlite3.Connection) -> bool:
    """The writer turn at once, or within the connection's own busy timeout (tests shorten
    it; read only when the turn is taken)."""
    if turns.take(0.0):
        return True
    return turns.take(float(connection.execute("PRAGMA busy_timeout").fetchone()[0]) / 1000)


def _begin_immediate(connection: sqlite3.Connection, turns: WriterTurns) -> None:
    """Take the writer turn, then the write lock; each is waited for up to the busy timeout
    per attempt, then we pause (doubling) and try again, STORAGE_WRITE_ATTEMPTS times in all.
    On return the caller holds both and gives the turn back after COMMIT or ROLLBACK."""
    pause = STORAGE_RETRY_BACKOFF_SECONDS
    for attempt in range(1, STORAGE_WRITE_ATTEMPTS + 1):
        last = attempt == STORAGE_WRITE_ATTEMPTS
        if _took_turn(turns, connection):
            try:
                connection.execute("BEGIN IMMEDIATE")
                return
            except sqlite3.Error as error:
                turns.give_back()
                if not is_busy(error) or last:
                    raise storage_error(error) from error
        elif last:
            raise StorageBusyError("database busy: another DocAssist connection kept writing "
                                   "past the bounded wait")
        logger.info("database busy (attempt %d of %d), retrying in %.2f s",
                    attempt, STORAGE_WRITE_ATTEMPTS, pause)
        time.sleep(pause)
        pause *= 2


def _roll_back(connection: sqlite3.Connection) -> None:
    """Roll back what is still open: SQLITE_FULL and some I/O errors already rolled back."""
    if not connection.in_transaction:
        return
    try:
        connection.execute("ROLLBACK")
    except sqlite3.Error as error:  # the original error is what the caller must see
        logger.warning("rollback failed: %s", error)


if TYPE_CHECKING:  # mypy proves the store gives the shared row mixins what they ask of it
    _SEAM: type[SqlStore] = Store
    _CONVERSATIONS: type[ConversationRowsStore] = Store
    _CATALOG: type[CatalogStore] = Store
