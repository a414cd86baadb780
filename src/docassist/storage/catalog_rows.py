"""The SQLite store's catalog: documents, chunks (current and superseded), the searchable
FTS5 rows, meta values and chunk vectors (mixed into Store; postgres/catalog.py is its twin)."""

from __future__ import annotations

import json
import sqlite3
import threading
from contextlib import AbstractContextManager
from typing import Any, Protocol

import numpy as np
from sqlite_utils import Database

from docassist.core.documents import DEFAULT_COLLECTION, Chunk, DocumentInfo, ParsedDocument
from docassist.core.errors import StorageError
from docassist.core.text import fold
from docassist.storage.chunk_cache import ChunkCache
from docassist.storage.connection import now_iso, upsert_row
from docassist.storage.vectors import decode_vector, encode_vector

FTS_COLUMN_WEIGHTS = (0.0, 2.0, 3.0, 1.0)
"""bm25() weights of chunks_fts's columns: chunk_id (not indexed), title, section, body."""
_BM25 = f"bm25(chunks_fts, {', '.join(map(str, FTS_COLUMN_WEIGHTS))})"


class _StoreParts(Protocol):
    db: Database
    _lock: threading.RLock

    def _reading(self) -> AbstractContextManager[sqlite3.Connection]: ...
    _seen_lock: threading.Lock | threading.RLock
    _seen_connection: sqlite3.Connection
    _catalog_cache: tuple[int, dict[str, DocumentInfo]] | None
    _chunks: ChunkCache

    def _transaction(self) -> AbstractContextManager[sqlite3.Connection]: ...

    def index_version(self) -> int: ...

    def documents(self) -> list[DocumentInfo]: ...

    def _documents_by_id(self) -> dict[str, DocumentInfo]: ...


class CatalogRows:
    """Documents, chunks, search rows, meta values and vectors (mixed into Store)."""

    _catalog_cache: tuple[int, dict[str, DocumentInfo]] | None

    def documents(self: _StoreParts) -> list[DocumentInfo]:
        """Read on the ack path's own connection: listing the catalog never waits for a
        writer (WAL readers don't), so `/docassist-docs` or prompts answer under a lock."""
        with self._seen_lock:
            cursor = self._seen_connection.execute(
                "SELECT * FROM documents ORDER BY document_id")
            names = [column[0] for column in cursor.description]
            rows = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
        return [_document(row) for row in rows]

    def document(self: _StoreParts, document_id: str) -> DocumentInfo | None:
        with self._reading() as connection:
            row = _one_row(connection, "SELECT * FROM documents WHERE document_id = ?",
                           [document_id])
        return _document(row) if row else None

    def chunk(self: _StoreParts, chunk_id: str) -> Chunk | None:
        """Any chunk ever indexed and not yet pruned, superseded ones included (kept in
        storage/chunk_cache.py's cache)."""
        cached = self._chunks.get(chunk_id)
        if cached is not None:
            return cached
        with self._reading() as connection:
            row = _one_row(connection, "SELECT chunk_id, document_id, ordinal, section, header, "
                                       "text FROM chunks WHERE chunk_id = ?", [chunk_id])
        if row is None:
            return None
        chunk = Chunk.model_validate(row)
        self._chunks.keep(chunk)
        return chunk

    def _documents_by_id(self: _StoreParts) -> dict[str, DocumentInfo]:
        """The catalog as a map, re-read only when the index version moved (a search hot path)."""
        version = self.index_version()
        with self._lock:
            cached = self._catalog_cache
            if cached is None or cached[0] != version:
                cached = (version, {d.document_id: d for d in self.documents()})
                self._catalog_cache = cached
            return cached[1]

    def document_at(self: _StoreParts, source_path: str) -> DocumentInfo | None:
        with self._lock:
            rows = list(self.db.query("SELECT * FROM documents WHERE source_path = ?",
                                      [source_path]))
        return _document(rows[0]) if rows else None

    def meta_value(self: _StoreParts, key: str) -> str | None:
        with self._lock:
            row = self.db.execute("SELECT value FROM meta WHERE key = ?", [key]).fetchone()
        return None if row is None else str(row[0])

    def set_meta_value(self: _StoreParts, key: str, value: str | None) -> None:
        with self._transaction() as connection:
            if value is None:
                connection.execute("DELETE FROM meta WHERE key = ?", [key])
            else:
                connection.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                                   [key, value])

    def index_version(self: _StoreParts) -> int:
        """Bumped by every change to the searchable chunks; caches compare against it."""
        with self._reading() as connection:
            row = connection.execute(
                "SELECT value FROM meta WHERE key = 'index_version'").fetchone()
        version = int(row[0]) if row else 0
        self._chunks.seen_version(version)
        return version

    def replace_document(self: _StoreParts, parsed: ParsedDocument, source_path: str, *,
                         source: str | None = None,
                         collection: str = DEFAULT_COLLECTION) -> None:
        """Store a document's new version: its chunks become the searchable ones, the previous
        version's chunks are kept as superseded."""
        info = parsed.info.model_copy(update={"source_path": source_path, "source": source,
                                              "collection": collection})
        now = now_iso()
        with self._transaction() as connection:
            _supersede(connection, info.document_id, now)
            row = info.model_dump()
            row.update(services=json.dumps(info.services), extra=json.dumps(info.extra),
                       indexed_at=now)
            upsert_row(connection, "documents", row)
            # The same version cut anew (CHUNKING_VERSION moved) keeps its chunk ids: their
            # vectors were of the old text (a new version's ids are new: nothing to delete).
            connection.executemany("DELETE FROM embeddings WHERE chunk_id = ?",
                                   [[chunk.chunk_id] for chunk in parsed.chunks])
            for chunk in parsed.chunks:
                upsert_row(connection, "chunks", {**chunk.model_dump(), "superseded_at": None})
                body = chunk.text.split("\n", 1)[-1]
                connection.execute(
                    "INSERT INTO chunks_fts (chunk_id, title, section, body) VALUES (?, ?, ?, ?)",
                    [chunk.chunk_id, fold(info.title), fold(chunk.section), fold(body)],
                )
            _bump_index_version(connection)

    def tag_document(self: _StoreParts, document_id: str, source: str | None,
                     collection: str) -> None:
        """Record which source and collection an unchanged document now belongs to."""
        with self._transaction() as connection:
            connection.execute("UPDATE documents SET source = ?, collection = ? "
                               "WHERE document_id = ?", [source, collection, document_id])
            _bump_index_version(connection)

    def remove_document(self: _StoreParts, document_id: str) -> None:
        """Take a document out of the catalog; its chunks stay as superseded."""
        with self._transaction() as connection:
            _supersede(connection, document_id, now_iso())
            connection.execute("DELETE FROM documents WHERE document_id = ?", [document_id])
            _bump_index_version(connection)

    def prune_superseded(self: _StoreParts, before: str) -> int:
        """Delete chunks superseded before the ISO time `before`; returns how many."""
        self._chunks.clear()
        with self._transaction() as connection:
            connection.execute(
                "DELETE FROM embeddings WHERE chunk_id IN (SELECT chunk_id FROM chunks "
                "WHERE superseded_at IS NOT NULL AND superseded_at < ?)", [before])
            cursor = connection.execute(
                "DELETE FROM chunks WHERE superseded_at IS NOT NULL AND superseded_at < ?",
                [before])
            return cursor.rowcount

    def current_chunks(self: _StoreParts) -> list[Chunk]:
        with self._lock:
            rows = list(self.db.query(
                "SELECT chunk_id, document_id, ordinal, section, header, text FROM chunks "
                "WHERE superseded_at IS NULL ORDER BY chunk_id"))
        return [Chunk.model_validate(row) for row in rows]

    def is_superseded(self: _StoreParts, chunk_id: str) -> bool:
        with self._lock:
            row = self.db.execute("SELECT superseded_at FROM chunks WHERE chunk_id = ?",
                                  [chunk_id]).fetchone()
        return row is not None and row[0] is not None

    def search_fts(self: _StoreParts, match: str,
                   limit: int) -> list[tuple[Chunk, DocumentInfo, float]]:
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

    def chunk_collections(self: _StoreParts) -> dict[str, str]:
        """The collection of every current chunk, by chunk id (search indexes keep it per
        row, so a scope restricts candidates before ranking)."""
        with self._lock:
            return dict(self.db.execute(
                "SELECT c.chunk_id, d.collection FROM chunks c JOIN documents d "
                "ON d.document_id = c.document_id WHERE c.superseded_at IS NULL").fetchall())

    def fts_rows(self: _StoreParts, after_rowid: int,
                 limit: int) -> list[tuple[int, str, str, str, str]]:
        """Searchable rows by rowid, as FTS5 indexed them: rowid, chunk id, and the folded
        title, section and body. An in-memory index is built from these (storage.search)."""
        with self._lock:
            return [tuple(row) for row in self.db.execute(
                "SELECT rowid, chunk_id, title, section, body FROM chunks_fts WHERE rowid > ? "
                "ORDER BY rowid LIMIT ?", [after_rowid, limit]).fetchall()]

    def fts_scores(self: _StoreParts, match: str) -> list[tuple[int, float]]:
        """Every row matching an FTS5 expression, by rowid, with its raw bm25 value."""
        with self._reading() as connection:
            try:
                return [(int(rowid), float(value)) for rowid, value in connection.execute(
                    f"SELECT rowid, {_BM25} FROM chunks_fts WHERE chunks_fts MATCH ?",
                    [match]).fetchall()]
            except sqlite3.OperationalError as error:
                raise StorageError(f"search failed: {error}") from error

    # --- embeddings -------------------------------------------------------------------

    def chunks_without_embedding(self: _StoreParts, model: str) -> list[Chunk]:
        with self._lock:
            rows = list(self.db.query(
                "SELECT c.chunk_id, c.document_id, c.ordinal, c.section, c.header, c.text "
                "FROM chunks c LEFT JOIN embeddings e ON e.chunk_id = c.chunk_id AND e.model = ? "
                "WHERE c.superseded_at IS NULL AND e.chunk_id IS NULL ORDER BY c.chunk_id",
                [model]))
        return [Chunk.model_validate(row) for row in rows]

    def save_embeddings(self: _StoreParts, model: str, chunk_ids: list[str], vectors: Any) -> None:
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

    def embedding_matrix(self: _StoreParts, model: str) -> tuple[list[str], Any]:
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


def _one_row(connection: sqlite3.Connection, sql: str, params: list[Any]) -> dict[str, Any] | None:
    """The first row of a read as a dict keyed by column name (a read connection has no
    sqlite-utils row factory)."""
    cursor = connection.execute(sql, params)
    row = cursor.fetchone()
    return None if row is None else dict(zip([c[0] for c in cursor.description], row,
                                             strict=True))


def _document(row: dict[str, Any]) -> DocumentInfo:
    values = dict(row)
    values["services"] = json.loads(values.get("services") or "[]")
    values["extra"] = json.loads(values.get("extra") or "{}")
    return DocumentInfo.model_validate(values)
