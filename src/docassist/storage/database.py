"""The SQLite store: catalog, conversations, traces and event dedupe in one file (WAL)."""

from __future__ import annotations

import json
import logging
import shutil
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from sqlite_utils import Database

from docassist.core.documents import DEFAULT_COLLECTION, Chunk, DocumentInfo, ParsedDocument
from docassist.core.errors import (
    ConcurrentUpdateError,
    DuplicateEventError,
    StorageBusyError,
    StorageError,
    StorageFullError,
    StorageReadOnlyError,
    StorageUnavailableError,
)
from docassist.core.limits import (
    STORAGE_BUSY_TIMEOUT_MS,
    STORAGE_MIN_FREE_BYTES,
    STORAGE_MIN_FREE_PAGES,
    STORAGE_RETRY_BACKOFF_SECONDS,
    STORAGE_WRITE_ATTEMPTS,
)
from docassist.core.messages import ChatMessage, ConversationKey
from docassist.core.ports import InboxBacklog, InboxEvent, RateCheck, StoredConversation
from docassist.core.results import TurnResult
from docassist.core.state import ConversationState
from docassist.core.text import fold
from docassist.core.trace import ShadowRecord, ToolCallRecord, TurnRecord, sha256_text
from docassist.storage.claims import ClaimRows
from docassist.storage.connection import connect
from docassist.storage.feedback_rows import FeedbackRows
from docassist.storage.gap_rows import GapRows
from docassist.storage.group_commit import GroupCommit
from docassist.storage.migrations import migrations
from docassist.storage.privacy import Erasure, erase_before, redact_inbox_event
from docassist.storage.scope_rows import ScopeRows
from docassist.storage.source_rows import SourceRows
from docassist.storage.stale_rows import StaleRows
from docassist.storage.teams_rows import TeamsRows
from docassist.storage.vectors import decode_vector, encode_vector

logger = logging.getLogger(__name__)

BUSY_TIMEOUT_MS = STORAGE_BUSY_TIMEOUT_MS
FTS_COLUMN_WEIGHTS = (0.0, 2.0, 3.0, 1.0)
"""bm25() weights of chunks_fts's columns: chunk_id (not indexed), title, section, body."""
_BM25 = f"bm25(chunks_fts, {', '.join(map(str, FTS_COLUMN_WEIGHTS))})"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class Store(SourceRows, StaleRows, FeedbackRows, TeamsRows, ScopeRows, ClaimRows, GapRows):
    """One database file; thread-safe through one lock around its connection.

    The durable inbox's ack path is what a platform waits for: `enqueue` is group-committed
    (see group_commit.py: a burst of events shares a few transactions instead of queueing
    one lock hold and one fsync each), and `inbox_seen` reads on a connection of its own, so
    it never waits for the turn workers on the shared one (WAL readers don't wait for
    writers). Measured on a 500-event burst: ack p99 ~0.9 s before, see README.
    """

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
            raise StorageError(f"cannot open database {self.path}: {error}") from error
        self._lock = threading.RLock()
        self._seen_lock = threading.Lock() if separate else self._lock
        self._acks: GroupCommit[list[Any], int | None] = GroupCommit(self._insert_inbox_rows)
        self._arrivals = GroupCommit(self._count_arrivals)
        self._catalog_cache: tuple[int, dict[str, DocumentInfo]] | None = None

    def _connect(self) -> sqlite3.Connection:
        return connect(self.path, BUSY_TIMEOUT_MS / 1000)

    def close(self) -> None:
        """Close both connections, each under its lock: a background thread still using the
        store (an inbox poller) then gets an error, never a connection closed under it
        (that crashes the interpreter)."""
        with self._seen_lock:
            if self._seen_connection is not self.db.conn:
                self._seen_connection.close()
        with self._lock:
            self.db.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """BEGIN IMMEDIATE … COMMIT: takes the write lock first, so version checks hold.

        A lock held by another connection is waited for (busy timeout) and retried a bounded
        number of times; every SQLite error, in the body or at COMMIT, leaves the transaction
        rolled back and surfaces as a StorageError (busy, read-only, full: see `_storage_error`).
        """
        with self._lock:
            connection = self.db.conn
            _begin_immediate(connection)
            try:
                yield connection
                connection.execute("COMMIT")
            except BaseException as error:
                _roll_back(connection)
                if isinstance(error, sqlite3.Error):
                    raise _storage_error(error) from error
                raise

    def ensure_writable(self) -> None:
        """Raise a StorageUnavailableError when a write would fail now (busy past the bounded
        wait, read-only, no room left), before a turn acts. The probe is a no-op write in a
        rolled-back transaction: nothing is stored. SQLite itself finds a full disk only when
        it needs a new page, at commit, so the room is checked here too."""
        try:
            with self._transaction() as connection:
                connection.execute("UPDATE meta SET value = value WHERE key = 'index_version'")
                raise _ProbeDone
        except _ProbeDone:
            pass
        self._ensure_room()

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

    # --- catalog ----------------------------------------------------------------------

    def documents(self) -> list[DocumentInfo]:
        """Read on the ack path's own connection: listing the catalog never waits for a
        writer (WAL readers don't), so `/docassist-docs` or prompts answer under a lock."""
        with self._seen_lock:
            cursor = self._seen_connection.execute(
                "SELECT * FROM documents ORDER BY document_id")
            names = [column[0] for column in cursor.description]
            rows = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
        return [_document(row) for row in rows]

    def document(self, document_id: str) -> DocumentInfo | None:
        with self._lock:
            rows = list(self.db.query("SELECT * FROM documents WHERE document_id = ?",
                                      [document_id]))
        return _document(rows[0]) if rows else None

    def chunk(self, chunk_id: str) -> Chunk | None:
        """Any chunk ever indexed and not yet pruned, superseded ones included."""
        with self._lock:
            rows = list(self.db.query(
                "SELECT chunk_id, document_id, ordinal, section, header, text FROM chunks "
                "WHERE chunk_id = ?", [chunk_id]))
        return Chunk.model_validate(rows[0]) if rows else None

    def _documents_by_id(self) -> dict[str, DocumentInfo]:
        """The catalog as a map, re-read only when the index version moved (a search hot path)."""
        version = self.index_version()
        with self._lock:
            if self._catalog_cache is None or self._catalog_cache[0] != version:
                self._catalog_cache = (version, {d.document_id: d for d in self.documents()})
            return self._catalog_cache[1]

    def document_at(self, source_path: str) -> DocumentInfo | None:
        with self._lock:
            rows = list(self.db.query("SELECT * FROM documents WHERE source_path = ?",
                                      [source_path]))
        return _document(rows[0]) if rows else None

    def meta_value(self, key: str) -> str | None:
        with self._lock:
            row = self.db.execute("SELECT value FROM meta WHERE key = ?", [key]).fetchone()
        return None if row is None else str(row[0])

    def set_meta_value(self, key: str, value: str | None) -> None:
        with self._transaction() as connection:
            if value is None:
                connection.execute("DELETE FROM meta WHERE key = ?", [key])
            else:
                connection.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                                   [key, value])

    def index_version(self) -> int:
        """Bumped by every change to the searchable chunks; caches compare against it."""
        with self._lock:
            row = self.db.execute("SELECT value FROM meta WHERE key = 'index_version'").fetchone()
        return int(row[0]) if row else 0

    def replace_document(self, parsed: ParsedDocument, source_path: str, *,
                         source: str | None = None,
                         collection: str = DEFAULT_COLLECTION) -> None:
        """Store a document's new version: its chunks become the searchable ones, the previous
        version's chunks are kept as superseded."""
        info = parsed.info.model_copy(update={"source_path": source_path, "source": source,
                                              "collection": collection})
        now = _now()
        with self._transaction() as connection:
            _supersede(connection, info.document_id, now)
            row = info.model_dump()
            row.update(services=json.dumps(info.services), extra=json.dumps(info.extra),
                       indexed_at=now)
            _upsert(connection, "documents", row)
            for chunk in parsed.chunks:
                _upsert(connection, "chunks", {**chunk.model_dump(), "superseded_at": None})
                body = chunk.text.split("\n", 1)[-1]
                connection.execute(
                    "INSERT INTO chunks_fts (chunk_id, title, section, body) VALUES (?, ?, ?, ?)",
                    [chunk.chunk_id, fold(info.title), fold(chunk.section), fold(body)],
                )
            _bump_index_version(connection)

    def tag_document(self, document_id: str, source: str | None, collection: str) -> None:
        """Record which source and collection an unchanged document now belongs to."""
        with self._transaction() as connection:
            connection.execute("UPDATE documents SET source = ?, collection = ? "
                               "WHERE document_id = ?", [source, collection, document_id])
            _bump_index_version(connection)

    def remove_document(self, document_id: str) -> None:
        """Take a document out of the catalog; its chunks stay as superseded."""
        with self._transaction() as connection:
            _supersede(connection, document_id, _now())
            connection.execute("DELETE FROM documents WHERE document_id = ?", [document_id])
            _bump_index_version(connection)

    def prune_superseded(self, before: str) -> int:
        """Delete chunks superseded before the ISO time `before`; returns how many."""
        with self._transaction() as connection:
            connection.execute(
                "DELETE FROM embeddings WHERE chunk_id IN (SELECT chunk_id FROM chunks "
                "WHERE superseded_at IS NOT NULL AND superseded_at < ?)", [before])
            cursor = connection.execute(
                "DELETE FROM chunks WHERE superseded_at IS NOT NULL AND superseded_at < ?",
                [before])
            return cursor.rowcount

    def current_chunks(self) -> list[Chunk]:
        with self._lock:
            rows = list(self.db.query(
                "SELECT chunk_id, document_id, ordinal, section, header, text FROM chunks "
                "WHERE superseded_at IS NULL ORDER BY chunk_id"))
        return [Chunk.model_validate(row) for row in rows]

    def is_superseded(self, chunk_id: str) -> bool:
        with self._lock:
            row = self.db.execute("SELECT superseded_at FROM chunks WHERE chunk_id = ?",
                                  [chunk_id]).fetchone()
        return row is not None and row[0] is not None

    def search_fts(self, match: str, limit: int) -> list[tuple[Chunk, DocumentInfo, float]]:
        """Chunks matching an FTS5 expression, best BM25 first, with their raw bm25 value."""
        sql = (
            "SELECT c.chunk_id, c.document_id, c.ordinal, c.section, c.header, c.text, "
            f"{_BM25} AS rank_value "
            "FROM chunks_fts JOIN chunks c ON c.chunk_id = chunks_fts.chunk_id "
            "WHERE chunks_fts MATCH ? ORDER BY rank_value LIMIT ?"
        )
        with self._lock:
            try:
                rows = list(self.db.query(sql, [match, limit]))
            except sqlite3.OperationalError as error:
                raise StorageError(f"search failed: {error}") from error
        documents = self._documents_by_id()
        results = []
        for row in rows:
            rank_value = float(row.pop("rank_value"))
            chunk = Chunk.model_validate(row)
            results.append((chunk, documents[chunk.document_id], rank_value))
        return results

    def chunk_collections(self) -> dict[str, str]:
        """The collection of every current chunk, by chunk id (search indexes keep it per
        row, so a scope restricts candidates before ranking)."""
        with self._lock:
            return dict(self.db.execute(
                "SELECT c.chunk_id, d.collection FROM chunks c JOIN documents d "
                "ON d.document_id = c.document_id WHERE c.superseded_at IS NULL").fetchall())

    def fts_rows(self, after_rowid: int, limit: int) -> list[tuple[int, str, str, str, str]]:
        """Searchable rows by rowid, as FTS5 indexed them: rowid, chunk id, and the folded
        title, section and body. An in-memory index is built from these (storage.search)."""
        with self._lock:
            return [tuple(row) for row in self.db.execute(
                "SELECT rowid, chunk_id, title, section, body FROM chunks_fts WHERE rowid > ? "
                "ORDER BY rowid LIMIT ?", [after_rowid, limit]).fetchall()]

    def fts_scores(self, match: str) -> list[tuple[int, float]]:
        """Every row matching an FTS5 expression, by rowid, with its raw bm25 value."""
        with self._lock:
            try:
                return [(int(rowid), float(value)) for rowid, value in self.db.execute(
                    f"SELECT rowid, {_BM25} FROM chunks_fts WHERE chunks_fts MATCH ?",
                    [match]).fetchall()]
            except sqlite3.OperationalError as error:
                raise StorageError(f"search failed: {error}") from error

    # --- embeddings -------------------------------------------------------------------

    def chunks_without_embedding(self, model: str) -> list[Chunk]:
        with self._lock:
            rows = list(self.db.query(
                "SELECT c.chunk_id, c.document_id, c.ordinal, c.section, c.header, c.text "
                "FROM chunks c LEFT JOIN embeddings e ON e.chunk_id = c.chunk_id AND e.model = ? "
                "WHERE c.superseded_at IS NULL AND e.chunk_id IS NULL ORDER BY c.chunk_id",
                [model]))
        return [Chunk.model_validate(row) for row in rows]

    def save_embeddings(self, model: str, chunk_ids: list[str], vectors: Any) -> None:
        """Store rows for chunks as int8 codes and a scale (`storage.vectors`), one
        transaction: a batch is stored whole or not at all, so a killed indexer resumes
        after its last stored batch."""
        matrix = np.asarray(vectors, dtype=np.float32)
        with self._transaction() as connection:
            for chunk_id, row in zip(chunk_ids, matrix, strict=True):
                connection.execute(
                    "INSERT OR REPLACE INTO embeddings (chunk_id, model, dimensions, vector) "
                    "VALUES (?, ?, ?, ?)", [chunk_id, model, int(row.shape[0]),
                                            encode_vector(row)])

    def embedding_matrix(self, model: str) -> tuple[list[str], Any]:
        """Ids of the current chunks with a vector for `model`, and those vectors as one
        float32 matrix (row i is chunk i), without the chunks' text."""
        where = ("FROM chunks c JOIN embeddings e ON e.chunk_id = c.chunk_id AND e.model = ? "
                 "WHERE c.superseded_at IS NULL")
        with self._lock:
            connection = self.db.conn
            connection.execute("BEGIN")  # one snapshot for the count and the rows
            try:
                count, dimensions = connection.execute(
                    f"SELECT count(*), max(e.dimensions) {where}", [model]).fetchone()
                # Filled row by row: holding every blob and the matrix would double the peak.
                matrix = np.empty((count, dimensions or 0), dtype=np.float32)
                chunk_ids: list[str] = []
                for index, (chunk_id, vector) in enumerate(connection.execute(
                        f"SELECT c.chunk_id, e.vector {where} ORDER BY c.chunk_id", [model])):
                    matrix[index] = decode_vector(vector, dimensions)
                    chunk_ids.append(chunk_id)
            finally:
                connection.execute("COMMIT")
        return chunk_ids, matrix

    # --- conversations and traces -------------------------------------------------------

    def load(self, key: ConversationKey) -> StoredConversation:
        with self._lock:
            rows = list(self.db.query(
                "SELECT state, version FROM conversations WHERE conversation_id = ?",
                [key.conversation_id]))
        if not rows:
            return StoredConversation(ConversationState(), 0)
        state = ConversationState.model_validate_json(rows[0]["state"])
        return StoredConversation(state, int(rows[0]["version"]))

    def commit_turn(
        self,
        key: ConversationKey,
        state: ConversationState,
        expected_version: int,
        turn: TurnRecord,
        tool_calls: list[ToolCallRecord],
        result: TurnResult | None = None,
    ) -> int:
        with self._transaction() as connection:
            row = connection.execute(
                "SELECT version FROM conversations WHERE conversation_id = ?",
                [key.conversation_id]).fetchone()
            current = int(row[0]) if row else 0
            if current != expected_version:
                raise ConcurrentUpdateError(
                    f"conversation {key.conversation_id} is at version {current}, "
                    f"expected {expected_version}")
            new_version = current + 1
            _upsert(connection, "conversations", {
                "conversation_id": key.conversation_id,
                **key.model_dump(),
                "state": state.model_dump_json(),
                "version": new_version,
                "generation": state.generation,
                "updated_at": _now(),
            })
            if turn.event_id:
                try:
                    _insert(connection, "processed_events", {
                        "platform": turn.platform, "event_id": turn.event_id,
                        "conversation_id": key.conversation_id, "created_at": _now()})
                except sqlite3.IntegrityError as error:
                    raise DuplicateEventError(
                        f"event {turn.platform}/{turn.event_id} was already answered") from error
            _insert(connection, "turns", _json_columns(turn.model_dump()))
            for call in tool_calls:
                _insert(connection, "tool_calls", _json_columns(call.model_dump()))
            if result is not None and turn.event_id:  # see ConversationStore.commit_turn
                connection.execute(
                    "UPDATE inbox SET status = 'answered', result = ? WHERE platform = ? "
                    "AND event_id = ? AND status = 'pending'",
                    [result.model_dump_json(), turn.platform, turn.event_id])
        return new_version

    def record_shadow(self, record: ShadowRecord) -> None:
        with self._transaction() as connection:
            _insert(connection, "shadow_decisions", record.model_dump())

    def shadow_decisions(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self.db.query("SELECT * FROM shadow_decisions ORDER BY created_at"))

    def event_seen(self, platform: str, event_id: str) -> bool:
        with self._lock:
            row = self.db.execute(
                "SELECT 1 FROM processed_events WHERE platform = ? AND event_id = ?",
                [platform, event_id]).fetchone()
        return row is not None

    # --- the durable inbox ------------------------------------------------------------

    def enqueue(self, message: ChatMessage, dedupe_key: str | None = None,
                rate: RateCheck | None = None) -> int | None:
        """The ack path: returns once the row is committed, in a transaction shared with the
        events that arrived meanwhile (one fsync for a burst). With `rate`, the arrival is
        counted in that transaction too (see ClaimRows.count_in)."""
        return self._acks.submit([message, dedupe_key, rate])

    def _insert_inbox_rows(self, rows: list[list[Any]]) -> list[int | None]:
        ids: list[int | None] = []
        with self._transaction() as connection:
            for message, dedupe_key, rate in rows:
                if rate is not None:
                    message = self.count_in(connection, rate, message)
                key = message.key
                notice = message.notice
                refusal = notice.kind if notice is not None and notice.replaces_turn else None
                cursor = connection.execute(
                    "INSERT OR IGNORE INTO inbox (platform, event_id, dedupe_key, "
                    "conversation_id, message, status, attempts, received_at, refusal) "
                    "VALUES (?, ?, ?, ?, ?, 'pending', 0, ?, ?)",
                    [key.platform, message.event_id, dedupe_key, key.conversation_id,
                     message.model_dump_json(), _now(), refusal])
                ids.append(cursor.lastrowid if cursor.rowcount == 1 else None)
        return ids

    def inbox_seen(self, platform: str, event_id: str, dedupe_key: str | None) -> bool:
        """True when this event (or the same message as another event) is already stored."""
        with self._seen_lock:
            row = self._seen_connection.execute(
                "SELECT 1 FROM inbox WHERE platform = ? AND (event_id = ? OR dedupe_key = ?)",
                [platform, event_id, dedupe_key]).fetchone()
        return row is not None

    def conversation_known(self, conversation_id: str) -> bool:
        """True when the conversation has a committed turn or a stored event that runs one
        (a refusal does not make a thread the bot's): a thread the bot takes part in. Read on
        the ack path's connection, so it never waits for writers."""
        with self._seen_lock:
            row = self._seen_connection.execute(
                "SELECT 1 FROM conversations WHERE conversation_id = ? UNION ALL "
                "SELECT 1 FROM inbox WHERE conversation_id = ? AND refusal IS NULL LIMIT 1",
                [conversation_id, conversation_id]).fetchone()
        return row is not None

    def unfinished(self) -> list[InboxEvent]:
        with self._lock:
            rows = list(self.db.query(
                "SELECT * FROM inbox WHERE status IN ('pending', 'answered') ORDER BY id"))
        return [InboxEvent(
            id=row["id"], platform=row["platform"], event_id=row["event_id"],
            conversation_id=row["conversation_id"],
            message=ChatMessage.model_validate_json(row["message"]), status=row["status"],
            result=TurnResult.model_validate_json(row["result"]) if row["result"] else None,
            attempts=row["attempts"]) for row in rows]

    def inbox_backlog(self) -> InboxBacklog:
        """Events stored and not yet finished, and when the oldest of them arrived."""
        with self._lock:
            count, oldest = self.db.execute(
                "SELECT COUNT(*), MIN(received_at) FROM inbox "
                "WHERE status IN ('pending', 'answered')").fetchone()
        return InboxBacklog(pending=int(count), oldest_received_at=oldest)

    def record_answer(self, inbox_id: int, result: TurnResult | None) -> None:
        with self._transaction() as connection:
            connection.execute(
                "UPDATE inbox SET status = 'answered', result = ? WHERE id = ?",
                [result.model_dump_json() if result else None, inbox_id])

    def finish(self, inbox_id: int, status: str, error: str | None = None) -> None:
        """Mark an event done or failed, and release its claim (the conversation's next
        event becomes claimable); without `save_raw` it keeps ids and hashes only."""
        with self._transaction() as connection:
            connection.execute(
                "UPDATE inbox SET status = ?, error = COALESCE(?, error), finished_at = ?, "
                "claimed_by = NULL, claim_expires = NULL WHERE id = ?",
                [status, error, _now(), inbox_id])
            if not self.save_raw:
                redact_inbox_event(connection, inbox_id)

    def delivery_failed(self, inbox_id: int, error: str) -> int:
        with self._transaction() as connection:
            connection.execute(
                "UPDATE inbox SET attempts = attempts + 1, error = ? WHERE id = ?",
                [error, inbox_id])
            row = connection.execute("SELECT attempts FROM inbox WHERE id = ?",
                                     [inbox_id]).fetchone()
        return int(row[0])

    def inbox_rows(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self.db.query("SELECT * FROM inbox ORDER BY id"))

    def turns(self, conversation_id: str | None = None, since: str | None = None,
              until: str | None = None) -> list[dict[str, Any]]:
        """Assistant-trace rows, oldest first; optionally of one conversation, and created at
        or after `since` and before `until` (ISO UTC text, as stored)."""
        conditions: list[str] = []
        params: list[str] = []
        for condition, value in (("conversation_id = ?", conversation_id),
                                 ("created_at >= ?", since), ("created_at < ?", until)):
            if value is not None:
                conditions.append(condition)
                params.append(value)
        where = f"WHERE {' AND '.join(conditions)}" if conditions else ""
        with self._lock:
            return list(self.db.query(
                f"SELECT * FROM turns {where} ORDER BY created_at, rowid", params))

    def save_eval_run(self, kind: str, source: str, report: Any) -> str:
        """Store an evaluation report (a pydantic model); returns its run id."""
        run_id = f"{kind}-{datetime.now(UTC):%Y%m%d-%H%M%S}-{uuid.uuid4().hex[:6]}"
        with self._transaction() as connection:
            _insert(connection, "eval_runs", {
                "run_id": run_id, "kind": kind, "created_at": _now(), "source": source,
                "backend": report.backend, "model": report.model,
                "catalog_version": report.catalog_version, "total": report.total,
                "accuracy": report.accuracy, "report": report.model_dump_json()})
        return run_id

    def eval_run(self, run_id: str) -> dict[str, Any] | None:
        with self._lock:
            rows = list(self.db.query("SELECT * FROM eval_runs WHERE run_id = ?", [run_id]))
        return rows[0] if rows else None

    def latest_eval_run(self, kind: str) -> dict[str, Any] | None:
        with self._lock:
            rows = list(self.db.query("SELECT * FROM eval_runs WHERE kind = ? "
                                      "ORDER BY created_at DESC, rowid DESC LIMIT 1", [kind]))
        return rows[0] if rows else None

    def eval_runs(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self.db.query("SELECT run_id, kind, created_at, source, backend, model, "
                                      "catalog_version, total, accuracy FROM eval_runs "
                                      "ORDER BY created_at"))

    def record_feedback(self, result_id: str, user: str, positive: bool) -> None:
        """A 👍 or 👎 on one answer; the user is stored as a hash. One vote per user per
        answer: a later click replaces the earlier one."""
        with self._transaction() as connection:
            _require_turn(connection, result_id)
            connection.execute(
                "INSERT INTO feedback (result_id, user_sha256, value, created_at) "
                "VALUES (?, ?, ?, ?) ON CONFLICT (result_id, user_sha256) DO UPDATE SET "
                "value = excluded.value, created_at = excluded.created_at",
                [result_id, sha256_text(user), 1 if positive else -1, _now()])

    def record_escalation(self, result_id: str, user: str) -> bool:
        """An "Ask a human" request on one answer: True for the first, False when that
        answer was escalated already (by anyone)."""
        with self._transaction() as connection:
            _require_turn(connection, result_id)
            cursor = connection.execute(
                "INSERT OR IGNORE INTO escalations (result_id, user_sha256, created_at) "
                "VALUES (?, ?, ?)", [result_id, sha256_text(user), _now()])
            return cursor.rowcount == 1

    def withdraw_escalation(self, result_id: str) -> None:
        """The request could not be posted: the next click may try again."""
        with self._transaction() as connection:
            connection.execute("DELETE FROM escalations WHERE result_id = ?", [result_id])

    def conversation_of_result(self, result_id: str) -> list[dict[str, Any]]:
        """The conversation key columns of the turn with this result id (zero or one row)."""
        with self._lock:
            return list(self.db.query(
                "SELECT c.platform, c.workspace, c.channel, c.thread FROM turns t "
                "JOIN conversations c ON c.conversation_id = t.conversation_id "
                "WHERE t.result_id = ?", [result_id]))

    def feedback(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self.db.query("SELECT * FROM feedback ORDER BY id"))

    def erase_before(self, cutoff: str) -> Erasure:
        """Every stored copy of user text written before `cutoff` (see privacy.py); then the
        WAL is checkpointed and truncated, so no older page version keeps it either (a
        reader in another process may hold the checkpoint back until the next one)."""
        with self._transaction() as connection:
            erased = erase_before(connection, cutoff, _now())
        with self._lock:
            self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return erased

    def tool_calls(self, result_id: str | None = None) -> list[dict[str, Any]]:
        where, params = ("WHERE result_id = ?", [result_id]) if result_id else ("", [])
        with self._lock:
            return list(self.db.query(f"SELECT * FROM tool_calls {where} ORDER BY id", params))


class _ProbeDone(Exception):
    """Ends the write probe of `ensure_writable` with a rollback."""


_BUSY_CODES = frozenset({sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED})
_UNAVAILABLE_CODES = frozenset({sqlite3.SQLITE_IOERR, sqlite3.SQLITE_CANTOPEN,
                                sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB})


def _begin_immediate(connection: sqlite3.Connection) -> None:
    """Take the write lock; SQLite's busy handler waits up to the busy timeout per attempt,
    then we pause (doubling) and try again, STORAGE_WRITE_ATTEMPTS times in all."""
    pause = STORAGE_RETRY_BACKOFF_SECONDS
    for attempt in range(1, STORAGE_WRITE_ATTEMPTS + 1):
        try:
            connection.execute("BEGIN IMMEDIATE")
            return
        except sqlite3.Error as error:
            busy = _primary_code(error) in _BUSY_CODES
            if not busy or attempt == STORAGE_WRITE_ATTEMPTS:
                raise _storage_error(error) from error
            logger.info("database busy (attempt %d of %d), retrying in %.2f s",
                        attempt, STORAGE_WRITE_ATTEMPTS, pause)
            time.sleep(pause)
            pause *= 2


def _require_turn(connection: sqlite3.Connection, result_id: str) -> None:
    if connection.execute("SELECT 1 FROM turns WHERE result_id = ?",
                          [result_id]).fetchone() is None:
        raise StorageError(f"no turn with result id {result_id}")


def _roll_back(connection: sqlite3.Connection) -> None:
    """Roll back what is still open: SQLITE_FULL and some I/O errors already rolled back."""
    if not connection.in_transaction:
        return
    try:
        connection.execute("ROLLBACK")
    except sqlite3.Error as error:  # the original error is what the caller must see
        logger.warning("rollback failed: %s", error)


def _primary_code(error: sqlite3.Error) -> int | None:
    code = getattr(error, "sqlite_errorcode", None)
    return code & 0xFF if isinstance(code, int) else None


def _storage_error(error: sqlite3.Error) -> StorageError:
    """SQLite's error as ours, by its primary result code."""
    code = _primary_code(error)
    if code in _BUSY_CODES:
        return StorageBusyError(f"database busy: another connection held the write lock past "
                                f"the bounded wait ({error})")
    if code == sqlite3.SQLITE_READONLY:
        return StorageReadOnlyError(f"database is read-only: {error}")
    if code == sqlite3.SQLITE_FULL:
        return StorageFullError(f"database or disk is full: {error}")
    if code in _UNAVAILABLE_CODES:
        return StorageUnavailableError(f"database unavailable: {error}")
    return StorageError(f"cannot save: {error}")


def _supersede(connection: sqlite3.Connection, document_id: str, when: str) -> None:
    # chunk_id is not indexed in chunks_fts, so this DELETE reads every FTS row (0.1 s at
    # 100k chunks): skipped for a new document, which made indexing quadratic (a 1M-chunk
    # corpus took most of an hour, bench/run.py --size 1000000).
    if connection.execute("SELECT 1 FROM chunks WHERE document_id = ? AND superseded_at IS NULL "
                          "LIMIT 1", [document_id]).fetchone() is None:
        return
    connection.execute(
        "DELETE FROM chunks_fts WHERE chunk_id IN (SELECT chunk_id FROM chunks "
        "WHERE document_id = ? AND superseded_at IS NULL)", [document_id])
    connection.execute(
        "UPDATE chunks SET superseded_at = ? WHERE document_id = ? AND superseded_at IS NULL",
        [when, document_id])


def _bump_index_version(connection: sqlite3.Connection) -> None:
    connection.execute(
        "UPDATE meta SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT) "
        "WHERE key = 'index_version'")


def _document(row: dict[str, Any]) -> DocumentInfo:
    values = dict(row)
    values["services"] = json.loads(values.get("services") or "[]")
    values["extra"] = json.loads(values.get("extra") or "{}")
    return DocumentInfo.model_validate(values)


def _json_columns(row: dict[str, Any]) -> dict[str, Any]:
    return {k: json.dumps(v, ensure_ascii=False) if isinstance(v, dict | list) else v
            for k, v in row.items()}


def _insert(connection: sqlite3.Connection, table: str, row: dict[str, Any]) -> None:
    columns = ", ".join(f'"{name}"' for name in row)
    marks = ", ".join("?" for _ in row)
    connection.execute(f'INSERT INTO "{table}" ({columns}) VALUES ({marks})', list(row.values()))


def _upsert(connection: sqlite3.Connection, table: str, row: dict[str, Any]) -> None:
    columns = ", ".join(f'"{name}"' for name in row)
    marks = ", ".join("?" for _ in row)
    connection.execute(
        f'INSERT OR REPLACE INTO "{table}" ({columns}) VALUES ({marks})', list(row.values()))
