"""The stores' catalog: documents, chunks (current and superseded), the searchable rows,
meta values and chunk vectors.

A mixin of both stores (written once over dialect.py). Full-text search is the store's
(`_full_text()`: FTS5 on SQLite's own file, an in-memory FTS5 copy on PostgreSQL; the
queries are one, full_text.py), and so is the one snapshot the vectors are read in
(`_snapshot()`).
"""

from __future__ import annotations

import json
import threading
from contextlib import AbstractContextManager
from typing import Any, Final, Protocol

import numpy as np

from docassist.core.documents import DEFAULT_COLLECTION, Chunk, DocumentInfo, ParsedDocument
from docassist.core.text import fold
from docassist.storage.chunk_cache import ChunkCache
from docassist.storage.connection import now_iso
from docassist.storage.dialect import SqlConnection, SqlStore, Stream, marks, wait_for_turn
from docassist.storage.full_text import FullText, SearchRow
from docassist.storage.vectors import decode_vector, encode_vector

CHUNK_COLUMNS: Final = "chunk_id, document_id, ordinal, section, header, text"
CATALOG_LOCK: Final = 0x646F6362
"""Dialect.take_turn's key for catalog writes: two replicas indexing at once take turns, as
SQLite's single writer does (concurrent supersede-and-insert of one document could leave its
searchable rows twice)."""

class CatalogStore(SqlStore, Protocol):
    """What the catalog rows need of a store besides SqlStore."""

    _catalog_lock: threading.Lock | threading.RLock
    _catalog_cache: tuple[int, dict[str, DocumentInfo]] | None
    _chunks: ChunkCache

    def _full_text(self) -> FullText:
        """The store's full text, up to date with the searchable rows."""
        ...

    def _snapshot(self) -> AbstractContextManager[Stream]:
        """Reads that all see one state of the database (SQLite: a read transaction on the
        shared connection; PostgreSQL: REPEATABLE READ, rows from a server-side cursor)."""
        ...

    def index_version(self) -> int: ...

    def documents(self) -> list[DocumentInfo]: ...

    def _documents_by_id(self) -> dict[str, DocumentInfo]: ...


class CatalogRows:
    """Documents, chunks, search rows, meta values and vectors (mixed into Store and
    PostgresStore)."""

    _catalog_cache: tuple[int, dict[str, DocumentInfo]] | None

    def documents(self: SqlStore) -> list[DocumentInfo]:
        """Read on the ack path: listing the catalog never waits for a writer (SQLite's WAL
        readers don't), so `/docassist-docs` or prompts answer under a lock."""
        return [_document(row) for row in self._read_ack_path(
            "SELECT * FROM documents ORDER BY document_id" + self.dialect.bytewise)]

    def document(self: SqlStore, document_id: str) -> DocumentInfo | None:
        rows = self._read_apart("SELECT * FROM documents WHERE document_id = ?", [document_id])
        return _document(rows[0]) if rows else None

    def chunk(self: CatalogStore, chunk_id: str) -> Chunk | None:
        """Any chunk ever indexed and not yet pruned, superseded ones included (kept in
        storage/chunk_cache.py's cache)."""
        cached = self._chunks.get(chunk_id)
        if cached is not None:
            return cached
        rows = self._read_apart(f"SELECT {CHUNK_COLUMNS} FROM chunks WHERE chunk_id = ?",
                                [chunk_id])
        if not rows:
            return None
        chunk = Chunk.model_validate(rows[0])
        self._chunks.keep(chunk)
        return chunk

    def _documents_by_id(self: CatalogStore) -> dict[str, DocumentInfo]:
        """The catalog as a map, re-read only when the index version moved (a search hot path)."""
        version = self.index_version()
        with self._catalog_lock:
            cached = self._catalog_cache
            if cached is None or cached[0] != version:
                cached = (version, {d.document_id: d for d in self.documents()})
                self._catalog_cache = cached
            return cached[1]

    def document_at(self: SqlStore, source_path: str) -> DocumentInfo | None:
        rows = self._read("SELECT * FROM documents WHERE source_path = ?", [source_path])
        return _document(rows[0]) if rows else None

    def meta_value(self: SqlStore, key: str) -> str | None:
        rows = self._read("SELECT value FROM meta WHERE key = ?", [key])
        return None if not rows else str(rows[0]["value"])

    def set_meta_value(self: SqlStore, key: str, value: str | None) -> None:
        with self._write() as connection:
            if value is None:
                connection.execute("DELETE FROM meta WHERE key = ?", [key])
            else:
                connection.execute(self.dialect.upsert("meta", ["key", "value"], ["key"]),
                                   [key, value])

    def index_version(self: CatalogStore) -> int:
        """Bumped by every change to the searchable chunks; caches compare against it (every
        replica's: one picks up another's indexing without a restart)."""
        rows = self._read_apart("SELECT value FROM meta WHERE key = 'index_version'")
        version = int(rows[0]["value"]) if rows else 0
        self._chunks.seen_version(version)
        return version

    def replace_document(self: SqlStore, parsed: ParsedDocument, source_path: str, *,
                         source: str | None = None,
                         collection: str = DEFAULT_COLLECTION) -> None:
        """Store a document's new version: its chunks become the searchable ones, the previous
        version's chunks are kept as superseded."""
        info = parsed.info.model_copy(update={"source_path": source_path, "source": source,
                                              "collection": collection})
        now, dialect = now_iso(), self.dialect
        row = info.model_dump()
        row.update(services=json.dumps(info.services), extra=json.dumps(info.extra),
                   indexed_at=now)
        chunk_rows = [dialect.upsert_row("chunks", {**chunk.model_dump(), "superseded_at": None},
                                         ["chunk_id"]) for chunk in parsed.chunks]
        with self._write() as connection:
            wait_for_turn(connection, dialect, CATALOG_LOCK)
            _supersede(connection, info.document_id, now)
            connection.execute(*dialect.upsert_row("documents", row, ["document_id"]))
            # The same version cut anew (CHUNKING_VERSION moved) keeps its chunk ids: a vector
            # of an id whose text changed is of the old text; one whose text is the same stays
            # (a new version's ids are new: nothing to delete).
            connection.executemany("DELETE FROM embeddings WHERE chunk_id = ?",
                                   [[chunk_id] for chunk_id in _recut(connection, parsed)])
            if chunk_rows:  # executemany: on PostgreSQL pipelined, one round trip per batch
                connection.executemany(chunk_rows[0][0], [values for _, values in chunk_rows])
                connection.executemany(
                    "INSERT INTO chunks_fts (chunk_id, title, section, body) VALUES (?, ?, ?, ?)",
                    [[chunk.chunk_id, fold(info.title), fold(chunk.section),
                      fold(chunk.text.split("\n", 1)[-1])] for chunk in parsed.chunks])
            _bump_index_version(connection)

    def tag_document(self: SqlStore, document_id: str, source: str | None,
                     collection: str) -> None:
        """Record which source and collection an unchanged document now belongs to."""
        with self._write() as connection:
            wait_for_turn(connection, self.dialect, CATALOG_LOCK)
            connection.execute("UPDATE documents SET source = ?, collection = ? "
                               "WHERE document_id = ?", [source, collection, document_id])
            _bump_index_version(connection)

    def remove_document(self: SqlStore, document_id: str) -> None:
        """Take a document out of the catalog; its chunks stay as superseded."""
        with self._write() as connection:
            wait_for_turn(connection, self.dialect, CATALOG_LOCK)
            _supersede(connection, document_id, now_iso())
            connection.execute("DELETE FROM documents WHERE document_id = ?", [document_id])
            _bump_index_version(connection)

    def prune_superseded(self: CatalogStore, before: str) -> int:
        """Delete chunks superseded before the ISO time `before`; returns how many."""
        self._chunks.clear()
        with self._write() as connection:
            connection.execute(
                "DELETE FROM embeddings WHERE chunk_id IN (SELECT chunk_id FROM chunks "
                "WHERE superseded_at IS NOT NULL AND superseded_at < ?)", [before])
            cursor = connection.execute(
                "DELETE FROM chunks WHERE superseded_at IS NOT NULL AND superseded_at < ?",
                [before])
            return int(cursor.rowcount)

    def current_chunks(self: SqlStore) -> list[Chunk]:
        return [Chunk.model_validate(row) for row in self._read(
            f"SELECT {CHUNK_COLUMNS} FROM chunks WHERE superseded_at IS NULL "
            f"ORDER BY chunk_id{self.dialect.bytewise}")]

    def is_superseded(self: SqlStore, chunk_id: str) -> bool:
        rows = self._read("SELECT superseded_at FROM chunks WHERE chunk_id = ?", [chunk_id])
        return bool(rows) and rows[0]["superseded_at"] is not None

    def chunk_collections(self: SqlStore) -> dict[str, str]:
        """The collection of every current chunk, by chunk id (search indexes keep it per
        row, so a scope restricts candidates before ranking)."""
        return {row["chunk_id"]: row["collection"] for row in self._read(
            "SELECT c.chunk_id, d.collection FROM chunks c JOIN documents d "
            "ON d.document_id = c.document_id WHERE c.superseded_at IS NULL")}

    # --- search rows (full_text.py, on the store's full text) --------------------------

    def search_fts(self: CatalogStore, match: str,
                   limit: int) -> list[tuple[Chunk, DocumentInfo, float]]:
        """Chunks matching an FTS5 expression, best BM25 first, with their raw bm25 value."""
        ranked = self._full_text().ranked(match, limit)
        if not ranked:
            return []
        ids = [chunk_id for chunk_id, _ in ranked]
        chunks = {row["chunk_id"]: Chunk.model_validate(row) for row in self._read(
            f"SELECT {CHUNK_COLUMNS} FROM chunks WHERE chunk_id IN "
            f"({marks(ids)})", ids)}
        documents = self._documents_by_id()
        return [(chunks[chunk_id], documents[chunks[chunk_id].document_id], value)
                for chunk_id, value in ranked
                if chunk_id in chunks and chunks[chunk_id].document_id in documents]

    def fts_rows(self: CatalogStore, after_rowid: int, limit: int) -> list[SearchRow]:
        """Searchable rows by rowid: rowid, chunk id, and the folded title, section and body.
        An in-memory index is built from these (storage/lexical_index.py)."""
        return self._full_text().rows(after_rowid, limit)

    def fts_scores(self: CatalogStore, match: str) -> list[tuple[int, float]]:
        """Every row matching an FTS5 expression, by rowid, with its raw bm25 value."""
        return self._full_text().scores(match)

    # --- embeddings -------------------------------------------------------------------

    def chunks_without_embedding(self: SqlStore, model: str) -> list[Chunk]:
        return [Chunk.model_validate(row) for row in self._read(
            "SELECT c.chunk_id, c.document_id, c.ordinal, c.section, c.header, c.text "
            "FROM chunks c LEFT JOIN embeddings e ON e.chunk_id = c.chunk_id AND e.model = ? "
            "WHERE c.superseded_at IS NULL AND e.chunk_id IS NULL "
            f"ORDER BY c.chunk_id{self.dialect.bytewise}", [model])]

    def save_embeddings(self: SqlStore, model: str, chunk_ids: list[str], vectors: Any) -> None:
        """Store rows for chunks as int8 codes and a scale (`storage.vectors`), one
        transaction: a batch is stored whole or not at all, so a killed indexer resumes
        after its last stored batch."""
        matrix = np.asarray(vectors, dtype=np.float32)
        with self._write() as connection:
            connection.executemany(
                self.dialect.upsert("embeddings", ["chunk_id", "model", "dimensions", "vector"],
                                    ["chunk_id", "model"]),
                [[chunk_id, model, int(row.shape[0]), encode_vector(row)]
                 for chunk_id, row in zip(chunk_ids, matrix, strict=True)])

    def embedding_matrix(self: CatalogStore, model: str) -> tuple[list[str], Any]:
        """Ids of the current chunks with a vector for `model`, and those vectors as one
        float32 matrix (row i is chunk i), without the chunks' text, read in one snapshot."""
        where = ("FROM chunks c JOIN embeddings e ON e.chunk_id = c.chunk_id AND e.model = ? "
                 "WHERE c.superseded_at IS NULL")
        with self._snapshot() as stream:
            [(count, dimensions)] = stream(f"SELECT count(*), max(e.dimensions) {where}",
                                           [model])
            # Filled row by row: holding every blob and the matrix would double the peak.
            matrix = np.empty((count, dimensions or 0), dtype=np.float32)
            chunk_ids: list[str] = []
            for index, (chunk_id, vector) in enumerate(stream(
                    f"SELECT c.chunk_id, e.vector {where} "
                    f"ORDER BY c.chunk_id{self.dialect.bytewise}", [model])):
                matrix[index] = decode_vector(bytes(vector), dimensions)
                chunk_ids.append(chunk_id)
        return chunk_ids, matrix


def _supersede(connection: SqlConnection, document_id: str, when: str) -> None:
    # On SQLite chunk_id is not indexed in chunks_fts, so this DELETE reads every FTS row
    # (0.1 s at 100k chunks): skipped for a new document, which made indexing quadratic (a
    # 1M-chunk corpus took most of an hour, bench/run.py --size 1000000).
    if connection.execute("SELECT 1 FROM chunks WHERE document_id = ? AND superseded_at IS NULL "
                          "LIMIT 1", [document_id]).fetchone() is None:
        return
    connection.execute(
        "DELETE FROM chunks_fts WHERE chunk_id IN (SELECT chunk_id FROM chunks "
        "WHERE document_id = ? AND superseded_at IS NULL)", [document_id])
    connection.execute(
        "UPDATE chunks SET superseded_at = ? WHERE document_id = ? AND superseded_at IS NULL",
        [when, document_id])


def _bump_index_version(connection: SqlConnection) -> None:
    # BIGINT: SQLite reads it as INTEGER; PostgreSQL's integer would stop at 2**31.
    connection.execute(
        "UPDATE meta SET value = CAST(CAST(value AS BIGINT) + 1 AS TEXT) "
        "WHERE key = 'index_version'")


def _document(row: dict[str, Any]) -> DocumentInfo:
    values = dict(row)
    values["services"] = json.loads(values.get("services") or "[]")
    values["extra"] = json.loads(values.get("extra") or "{}")
    return DocumentInfo.model_validate(values)


def _recut(connection: SqlConnection, parsed: ParsedDocument) -> list[str]:
    """The ids of `parsed`'s chunks stored before with another text."""
    ids = [chunk.chunk_id for chunk in parsed.chunks]
    if not ids:
        return []
    stored = {row[0]: row[1] for row in connection.execute(
        f"SELECT chunk_id, text FROM chunks WHERE chunk_id IN ({marks(ids)})", ids).fetchall()}
    return [chunk.chunk_id for chunk in parsed.chunks
            if chunk.chunk_id in stored and stored[chunk.chunk_id] != chunk.text]
