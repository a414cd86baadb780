"""PostgreSQL's own full-text search as a lexical retriever: the candidate we measured against
the in-process index (BM25 built from the same rows, fts_mirror.py) and did not choose
(docs/scaling-out.md: the figures; bench/pg_search.py: how).

Rows are the folded title, section and body of `chunks_fts`, as a tsvector with the 'simple'
configuration (the text is folded already; stems come from the query side, as prefixes)
weighted like FTS5's columns (section A, title B, body C); a query is the OR of its stems and
five-letter prefixes (`stem:*`) and of its hyphenated names as phrases (`a <-> b`), ranked by
ts_rank_cd with length normalisation. The vectors live in a table of their own with a GIN
index, made by `prepare()` for a measurement; the product does not create it.
"""

from __future__ import annotations

from typing import Final

from docassist.core.ports import SearchHit
from docassist.core.scopes import EVERYTHING, Scope
from docassist.core.text import terms
from docassist.storage.postgres.store import PostgresStore
from docassist.storage.search import Bm25Retriever, Phrase, _stems_of, query_phrases

VECTOR: Final = ("setweight(to_tsvector('simple', coalesce(section, '')), 'A') || "
                 "setweight(to_tsvector('simple', coalesce(title, '')), 'B') || "
                 "setweight(to_tsvector('simple', coalesce(body, '')), 'C')")
WEIGHTS: Final = "'{0.0, 0.3333, 0.6667, 1.0}'"
"""ts_rank's weights of D, C, B, A: body 1, title 2, section 3 (as FTS_COLUMN_WEIGHTS)."""


def prepare(store: PostgresStore) -> None:
    """The rows' tsvectors with a GIN index, (re)built from the current search rows."""
    with store._transaction() as connection:
        connection.execute("DROP TABLE IF EXISTS fulltext_vectors")
        connection.execute(f"CREATE TABLE fulltext_vectors AS SELECT rowid, chunk_id, {VECTOR} "
                           "AS vector FROM chunks_fts")
        connection.execute("CREATE INDEX ON fulltext_vectors USING gin (vector)")


def _lexeme(token: str) -> str:
    return "'" + token.replace("'", "''").replace("\\", "\\\\") + "'"


def _tsquery(phrase: Phrase) -> str:
    if len(phrase.tokens) > 1 or phrase.match == "exact":
        return "(" + " <-> ".join(_lexeme(token) for token in phrase.tokens) + ")"
    return _lexeme(phrase.tokens[0]) + ":*"


class PgFullTextRetriever(Bm25Retriever):
    """A drop-in for the BM25 retriever (also inside hybrid search), ranked by PostgreSQL."""

    name = "pg_fulltext"

    def __init__(self, store: PostgresStore) -> None:
        super().__init__(store)
        self.pg = store

    def ranked(self, query: str, top_k: int, *, coverage: bool = True,
               scope: Scope = EVERYTHING) -> list[tuple[SearchHit, float]]:
        phrases = query_phrases(query, self.match, self.stemmer)
        if not phrases or top_k <= 0:
            return []
        names = scope.names()
        rows = self.pg._rows(
            f"SELECT v.chunk_id, ts_rank_cd({WEIGHTS}, v.vector, q, 1) AS rank FROM "
            "fulltext_vectors v JOIN chunks c ON c.chunk_id = v.chunk_id JOIN documents d ON "
            "d.document_id = c.document_id, to_tsquery('simple', %s) q WHERE v.vector @@ q "
            "AND (%s::text[] IS NULL OR d.collection = ANY(%s::text[])) "
            "ORDER BY rank DESC, v.chunk_id LIMIT %s",
            [" | ".join(_tsquery(phrase) for phrase in phrases), names, names, top_k])
        documents = self.pg._documents_by_id()
        wanted = {self.stemmer(term) for term in terms(query)}
        hits: list[tuple[SearchHit, float]] = []
        for row in rows:
            chunk = self.pg.chunk(row["chunk_id"])
            document = documents.get(chunk.document_id) if chunk else None
            if chunk is None or document is None:
                continue
            present = wanted & _stems_of(f"{document.title} {chunk.section} {chunk.text}",
                                         self.stemmer) if coverage else set()
            hits.append((SearchHit(chunk=chunk, document=document,
                                   score=len(present) / max(1, len(wanted))), float(row["rank"])))
        return hits

    def vocabulary_share(self, query: str) -> float:
        phrases = query_phrases(query, "stem", self.stemmer)
        if not phrases:
            return 0.0
        known = sum(1 for phrase in phrases if self.pg._value(
            "SELECT 1 FROM fulltext_vectors WHERE vector @@ to_tsquery('simple', %s) LIMIT 1",
            [_tsquery(phrase)]) is not None)
        return known / len(phrases)
