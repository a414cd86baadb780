"""The PostgreSQL store's catalog: documents, chunks (current and superseded), the searchable
rows, meta values and chunk vectors. Same semantics as the SQLite store's (catalog_rows.py)."""

from __future__ import annotations

import json
import threading
from typing import Any, Protocol

import numpy as np

from docassist.core.documents import DEFAULT_COLLECTION, Chunk, DocumentInfo, ParsedDocument
from docassist.core.text import fold
from docassist.storage.chunk_cache import ChunkCache
from docassist.storage.postgres.connection import Connection, now_iso, upsert_sql
from docassist.storage.postgres.fts_mirror import FtsMirror
from docassist.storage.vectors import decode_vector, encode_vector

CHUNK_COLUMNS = "chunk_id, document_id, ordinal, section, header, text"
CATALOG_LOCK = 0x646F6362
"""Advisory lock key of catalog writes: two replicas indexing at once take turns, as SQLite's
single writer does (concurrent supersede-and-insert of one document could leave its
searchable rows twice)."""


class _Base(Protocol):
    _catalog_lock: threading.Lock
    _catalog_cache: tuple[int, dict[str, DocumentInfo]] | None
    _chunks: ChunkCache
    _fts: FtsMirror

    def _transaction(self) -> Any: ...

    def _rows(self, sql: str, params: Any = ()) -> list[dict[str, Any]]: ...

    def _value(self, sql: str, params: Any = ()) -> Any: ...

    def index_version(self) -> int: ...

    def documents(self) -> list[DocumentInfo]: ...

    def _documents_by_id(self) -> dict[str, DocumentInfo]: ...


class CatalogRows:
    """Documents, chunks, search rows and vectors (mixed into PostgresStore)."""

    _catalog_cache: tuple[int, dict[str, DocumentInfo]] | None

    def documents(self: _Base) -> list[DocumentInfo]:
        return [_document(row) for row in self._rows(
            'SELECT * FROM documents ORDER BY document_id COLLATE "C"')]

    def document(self: _Base, document_id: str) -> DocumentInfo | None:
        rows = self._rows("SELECT * FROM documents WHERE document_id = %s", [document_id])
        return _document(rows[0]) if rows else None

    def chunk(self: _Base, chunk_id: str) -> Chunk | None:
        """Any chunk ever indexed and not yet pruned, superseded ones included (kept in
        storage/chunk_cache.py's cache)."""
        cached = self._chunks.get(chunk_id)
        if cached is not None:
            return cached
        rows = self._rows(f"SELECT {CHUNK_COLUMNS} FROM chunks WHERE chunk_id = %s", [chunk_id])
        if not rows:
            return None
        chunk = Chunk.model_validate(rows[0])
        self._chunks.keep(chunk)
        return chunk

    def _documents_by_id(self: _Base) -> dict[str, DocumentInfo]:
        version = self.index_version()
        with self._catalog_lock:
            cached = self._catalog_cache
            if cached is None or cached[0] != version:
                cached = (version, {d.document_id: d for d in self.documents()})
                self._catalog_cache = cached
            return cached[1]

    def document_at(self: _Base, source_path: str) -> DocumentInfo | None:
        rows = self._rows("SELECT * FROM documents WHERE source_path = %s", [source_path])
        return _document(rows[0]) if rows else None

    def meta_value(self: _Base, key: str) -> str | None:
        value = self._value("SELECT value FROM meta WHERE key = %s", [key])
        return None if value is None else str(value)

    def set_meta_value(self: _Base, key: str, value: str | None) -> None:
        with self._transaction() as connection:
            if value is None:
                connection.execute("DELETE FROM meta WHERE key = %s", [key])
            else:
                connection.execute(*upsert_sql("meta", {"key": key, "value": value}, ["key"]))

    def index_version(self: _Base) -> int:
        """Bumped by every change to the searchable chunks; every replica's caches compare
        against it, so a replica picks up another's indexing without a restart."""
        value = self._value("SELECT value FROM meta WHERE key = 'index_version'")
        version = int(value) if value is not None else 0
        self._chunks.seen_version(version)
        return version

    def replace_document(self: _Base, parsed: ParsedDocument, source_path: str, *,
                         source: str | None = None,
                         collection: str = DEFAULT_COLLECTION) -> None:
        info = parsed.info.model_copy(update={"source_path": source_path, "source": source,
                                              "collection": collection})
        now = now_iso()
        with self._transaction() as connection:
            _lock_catalog(connection)
            _supersede(connection, info.document_id, now)
            row = info.model_dump()
            row.update(services=json.dumps(info.services), extra=json.dumps(info.extra),
                       indexed_at=now)
            connection.execute(*upsert_sql("documents", row, ["document_id"]))
            # The same version cut anew keeps its chunk ids: their vectors were of the old text.
            connection.execute("DELETE FROM embeddings WHERE chunk_id = ANY(%s)",
                               [[chunk.chunk_id for chunk in parsed.chunks]])
            if parsed.chunks:  # executemany: pipelined, one round trip per batch
                rows = [upsert_sql("chunks", {**chunk.model_dump(), "superseded_at": None},
                                   ["chunk_id"]) for chunk in parsed.chunks]
                with connection.cursor() as cursor:
                    cursor.executemany(rows[0][0], [values for _, values in rows])
                    cursor.executemany(
                        "INSERT INTO chunks_fts (chunk_id, title, section, body) "
                        "VALUES (%s, %s, %s, %s)",
                        [[chunk.chunk_id, fold(info.title), fold(chunk.section),
                          fold(chunk.text.split("\n", 1)[-1])] for chunk in parsed.chunks])
            _bump_index_version(connection)

    def tag_document(self: _Base, document_id: str, source: str | None,
                     collection: str) -> None:
        with self._transaction() as connection:
            _lock_catalog(connection)
            connection.execute("UPDATE documents SET source = %s, collection = %s "
                               "WHERE document_id = %s", [source, collection, document_id])
            _bump_index_version(connection)

    def remove_document(self: _Base, document_id: str) -> None:
        with self._transaction() as connection:
            _lock_catalog(connection)
            _supersede(connection, document_id, now_iso())
            connection.execute("DELETE FROM documents WHERE document_id = %s", [document_id])
            _bump_index_version(connection)

    def prune_superseded(self: _Base, before: str) -> int:
        self._chunks.clear()
        with self._transaction() as connection:
            connection.execute(
                "DELETE FROM embeddings WHERE chunk_id IN (SELECT chunk_id FROM chunks "
                "WHERE superseded_at IS NOT NULL AND superseded_at < %s)", [before])
            cursor = connection.execute(
                "DELETE FROM chunks WHERE superseded_at IS NOT NULL AND superseded_at < %s",
                [before])
            return int(cursor.rowcount)

    def current_chunks(self: _Base) -> list[Chunk]:
        return [Chunk.model_validate(row) for row in self._rows(
            f"SELECT {CHUNK_COLUMNS} FROM chunks WHERE superseded_at IS NULL "
            'ORDER BY chunk_id COLLATE "C"')]

    def is_superseded(self: _Base, chunk_id: str) -> bool:
        rows = self._rows("SELECT superseded_at FROM chunks WHERE chunk_id = %s", [chunk_id])
        return bool(rows) and rows[0]["superseded_at"] is not None

    def chunk_collections(self: _Base) -> dict[str, str]:
        """The collection of every current chunk, by chunk id (search indexes keep it per
        row, so a scope restricts candidates before ranking)."""
        return {row["chunk_id"]: row["collection"] for row in self._rows(
            "SELECT c.chunk_id, d.collection FROM chunks c JOIN documents d "
            "ON d.document_id = c.document_id WHERE c.superseded_at IS NULL")}

    # --- search rows (served by the in-memory mirror, fts_mirror.py) --------------------

    def search_fts(self: _Base, match: str, limit: int
                   ) -> list[tuple[Chunk, DocumentInfo, float]]:
        """Chunks matching an FTS5 expression, best BM25 first, as the SQLite store ranks."""
        self._fts.sync(self.index_version())
        ranked = self._fts.ranked(match, limit)
        if not ranked:
            return []
        chunks = {row["chunk_id"]: Chunk.model_validate(row) for row in self._rows(
            f"SELECT {CHUNK_COLUMNS} FROM chunks WHERE chunk_id = ANY(%s)",
            [[chunk_id for chunk_id, _ in ranked]])}
        documents = self._documents_by_id()
        return [(chunks[chunk_id], documents[chunks[chunk_id].document_id], value)
                for chunk_id, value in ranked
                if chunk_id in chunks and chunks[chunk_id].document_id in documents]

    def fts_rows(self: _Base, after_rowid: int, limit: int
                 ) -> list[tuple[int, str, str, str, str]]:
        self._fts.sync(self.index_version())
        return self._fts.rows(after_rowid, limit)

    def fts_scores(self: _Base, match: str) -> list[tuple[int, float]]:
        self._fts.sync(self.index_version())
        return self._fts.scores(match)

    # --- embeddings ---------------------------------------------------------------------

    def chunks_without_embedding(self: _Base, model: str) -> list[Chunk]:
        return [Chunk.model_validate(row) for row in self._rows(
            "SELECT c.chunk_id, c.document_id, c.ordinal, c.section, c.header, c.text "
            "FROM chunks c LEFT JOIN embeddings e ON e.chunk_id = c.chunk_id AND e.model = %s "
            'WHERE c.superseded_at IS NULL AND e.chunk_id IS NULL ORDER BY c.chunk_id COLLATE "C"',
            [model])]

    def save_embeddings(self: _Base, model: str, chunk_ids: list[str], vectors: Any) -> None:
        """int8 rows (storage.vectors), one transaction per batch, as the SQLite store."""
        matrix = np.asarray(vectors, dtype=np.float32)
        with self._transaction() as connection, connection.cursor() as cursor:
            cursor.executemany(
                "INSERT INTO embeddings (chunk_id, model, dimensions, vector) "
                "VALUES (%s, %s, %s, %s) ON CONFLICT (chunk_id, model) DO UPDATE SET "
                "dimensions = EXCLUDED.dimensions, vector = EXCLUDED.vector",
                [[chunk_id, model, int(row.shape[0]), encode_vector(row)]
                 for chunk_id, row in zip(chunk_ids, matrix, strict=True)])

    def embedding_matrix(self: _Base, model: str) -> tuple[list[str], Any]:
        """Ids of the current chunks with a vector for `model` and the vectors as one float32
        matrix, read in one snapshot (REPEATABLE READ) and filled row by row."""
        where = ("FROM chunks c JOIN embeddings e ON e.chunk_id = c.chunk_id AND e.model = %s "
                 "WHERE c.superseded_at IS NULL")
        with self._transaction() as connection:
            connection.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            count, dimensions = connection.execute(
                f"SELECT count(*), max(e.dimensions) {where}", [model]).fetchone()
            matrix = np.empty((count, dimensions or 0), dtype=np.float32)
            chunk_ids: list[str] = []
            with connection.cursor(name="vectors") as cursor:  # server-side: streamed
                cursor.itersize = 2000
                cursor.execute(f'SELECT c.chunk_id, e.vector {where} ORDER BY c.chunk_id '
                               'COLLATE "C"', [model])
                for index, (chunk_id, vector) in enumerate(cursor):
                    matrix[index] = decode_vector(bytes(vector), dimensions)
                    chunk_ids.append(chunk_id)
        return chunk_ids, matrix


def _lock_catalog(connection: Connection) -> None:
    """Held until the transaction ends."""
    connection.execute("SELECT pg_advisory_xact_lock(%s)", [CATALOG_LOCK])


def _supersede(connection: Connection, document_id: str, when: str) -> None:
    connection.execute(
        "DELETE FROM chunks_fts WHERE chunk_id IN (SELECT chunk_id FROM chunks "
        "WHERE document_id = %s AND superseded_at IS NULL)", [document_id])
    connection.execute(
        "UPDATE chunks SET superseded_at = %s WHERE document_id = %s AND superseded_at IS NULL",
        [when, document_id])


def _bump_index_version(connection: Connection) -> None:
    connection.execute("UPDATE meta SET value = (value::bigint + 1)::text "
                       "WHERE key = 'index_version'")


def _document(row: dict[str, Any]) -> DocumentInfo:
    values = dict(row)
    values["services"] = json.loads(values.get("services") or "[]")
    values["extra"] = json.loads(values.get("extra") or "{}")
    return DocumentInfo.model_validate(values)

