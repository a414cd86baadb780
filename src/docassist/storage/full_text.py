"""Full-text queries of the searchable rows (`chunks_fts`: a chunk's id and its folded title,
section and body) in SQLite FTS5: chunk ids ranked by bm25, rows by rowid, every match's
bm25 value.

Both stores answer them with this one class: the SQLite store on its own file, the
PostgreSQL store on its in-memory FTS5 copy of the rows (postgres/fts_mirror.py), so a
search ranks alike on both. The catalog (catalog_rows.py) reaches it through its store's
`_full_text()`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Protocol

from docassist.core.errors import StorageError

FTS_COLUMN_WEIGHTS = (0.0, 2.0, 3.0, 1.0)
"""bm25() weights of chunks_fts's columns: chunk_id (not indexed), title, section, body."""
_BM25 = f"bm25(chunks_fts, {', '.join(map(str, FTS_COLUMN_WEIGHTS))})"

SearchRow = tuple[int, str, str, str, str]
"""A searchable row: rowid, chunk id, and the folded title, section and body."""


class FullText(Protocol):
    """What the catalog asks of a store's full text."""

    def ranked(self, match: str, limit: int) -> list[tuple[str, float]]: ...

    def rows(self, after_rowid: int, limit: int) -> list[SearchRow]: ...

    def scores(self, match: str) -> list[tuple[int, float]]: ...


class Fts5Queries:
    """The queries, each on a connection lent by `reading` (SQLite errors in an FTS5
    expression surface as StorageErrors)."""

    def __init__(self, reading: Callable[[], AbstractContextManager[sqlite3.Connection]]
                 ) -> None:
        self._reading = reading

    def ranked(self, match: str, limit: int) -> list[tuple[str, float]]:
        """Chunk ids matching an FTS5 expression, best bm25 first, with the raw value."""
        with self._reading() as connection:
            try:
                return [(str(chunk_id), float(value)) for chunk_id, value in connection.execute(
                    f"SELECT chunk_id, {_BM25} AS rank_value FROM chunks_fts "
                    "WHERE chunks_fts MATCH ? ORDER BY rank_value LIMIT ?",
                    [match, limit]).fetchall()]
            except sqlite3.OperationalError as error:
                raise StorageError(f"search failed: {error}") from error

    def rows(self, after_rowid: int, limit: int) -> list[SearchRow]:
        """Searchable rows by rowid, as FTS5 indexed them. An in-memory index is built from
        these (storage/lexical_index.py)."""
        with self._reading() as connection:
            return [tuple(row) for row in connection.execute(
                "SELECT rowid, chunk_id, title, section, body FROM chunks_fts WHERE rowid > ? "
                "ORDER BY rowid LIMIT ?", [after_rowid, limit]).fetchall()]

    def scores(self, match: str) -> list[tuple[int, float]]:
        """Every row matching an FTS5 expression, by rowid, with its raw bm25 value."""
        with self._reading() as connection:
            try:
                return [(int(rowid), float(value)) for rowid, value in connection.execute(
                    f"SELECT rowid, {_BM25} FROM chunks_fts WHERE chunks_fts MATCH ?",
                    [match]).fetchall()]
            except sqlite3.OperationalError as error:
                raise StorageError(f"search failed: {error}") from error
