"""The PostgreSQL store: every role of core/ports/ and storage/roles.py on one PostgreSQL
database, shared by any number of replicas. Selected by `DOCASSIST_DB=postgresql://…`
(storage/backends.py). Its rows are the row mixins of storage/ that both stores share
(dialect.py); what is its own is plumbing: connections and transactions (connection.py),
migrations (schema.py), the in-memory copy of the searchable rows (fts_mirror.py).

Opening it applies the pending migrations (schema.py, under an advisory lock). Reads and
writes take a pooled connection each (psycopg_pool); the catalog's searchable rows are
mirrored in memory for the search index (fts_mirror.py), and vectors are read into the
dense index of each process, both refreshed when the shared index version moves.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

import psycopg

from docassist.core.documents import DocumentInfo
from docassist.core.errors import StorageError
from docassist.storage.catalog_rows import CatalogRows, CatalogStore
from docassist.storage.chunk_cache import ChunkCache
from docassist.storage.claims import ClaimRows
from docassist.storage.conversation_rows import ConversationRows, ConversationRowsStore
from docassist.storage.dialect import SqlStore
from docassist.storage.feedback_rows import FeedbackRows
from docassist.storage.full_text import FullText
from docassist.storage.gap_rows import GapRows
from docassist.storage.group_commit import GroupCommit
from docassist.storage.inbox_rows import InboxRows
from docassist.storage.postgres.connection import PgBase, storage_error
from docassist.storage.postgres.fts_mirror import FtsMirror
from docassist.storage.postgres.schema import migrate, pending
from docassist.storage.scope_rows import ScopeRows
from docassist.storage.source_rows import SourceRows
from docassist.storage.stale_rows import StaleRows
from docassist.storage.teams_rows import TeamsRows
from docassist.storage.trace_rows import TraceRows


class PostgresStore(CatalogRows, ConversationRows, TraceRows, InboxRows, ClaimRows, SourceRows,
                    StaleRows, FeedbackRows, TeamsRows, ScopeRows, GapRows,
                    PgBase):
    backend = "postgresql"

    def __init__(self, url: str, *, save_raw: bool = False, migrate_now: bool = True) -> None:
        super().__init__(url)
        self.save_raw = save_raw
        """With it off, a finished inbox event keeps ids and hashes only (see privacy.py)."""
        self._catalog_lock: threading.Lock | threading.RLock = threading.Lock()
        self._catalog_cache: tuple[int, dict[str, DocumentInfo]] | None = None
        self._chunks = ChunkCache()
        self._fts = FtsMirror(self._fetch)
        self._acks: GroupCommit[list[Any], int | None] = GroupCommit(self._insert_inbox_rows)
        self._arrivals = GroupCommit(self._count_arrivals)
        if migrate_now:
            try:
                self.migrate()
            except StorageError:
                self.close()
                raise

    def migrate(self) -> list[str]:
        """Apply pending migrations (waiting for another process that is applying them);
        returns the names applied here."""
        try:
            with self.pool.connection() as connection:
                connection.autocommit = True
                try:
                    return migrate(connection)
                finally:
                    connection.autocommit = False
        except psycopg.Error as error:
            raise StorageError(f"cannot migrate database {self.path}: {error}") from error

    def pending_migrations(self) -> list[str]:
        try:
            with self.pool.connection() as connection:
                return pending(connection)
        except psycopg.Error as error:
            raise storage_error(error) from error

    def close(self) -> None:
        self._acks.close()  # events queued without waiting are committed first
        self._fts.close()
        super().close()

    def _full_text(self) -> FullText:
        """The in-memory copy of the searchable rows, brought to the shared index version."""
        self._fts.sync(self.index_version())
        return self._fts

    def _drop_erased_pages(self) -> None:
        """Nothing to do at once: deleted rows stay in their pages until VACUUM reclaims
        them, as autovacuum does (docs/traces-and-privacy.md)."""

    def _fetch(self, sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
        try:
            with self.pool.connection() as connection:
                return list(connection.execute(sql, params).fetchall())
        except psycopg.Error as error:
            raise storage_error(error) from error


if TYPE_CHECKING:  # mypy proves the store gives the shared row mixins what they ask of it
    _SEAM: type[SqlStore] = PostgresStore
    _CONVERSATIONS: type[ConversationRowsStore] = PostgresStore
    _CATALOG: type[CatalogStore] = PostgresStore
