"""BM25 search over the chunk index.

Ranking is SQLite FTS5's `bm25()` over `chunks_fts` (title, section and body weighted as in
`FTS_COLUMN_WEIGHTS`), computed with numpy from an in-memory copy of the FTS index: FTS5 has no
top-k shortcut, so a query whose words occur in most chunks made it score every one of them
(~250 ms at 100k chunks). The copy is rebuilt when the index version moves, like the dense
matrix. Single words are scored from the copy with FTS5's formula term by term, so the ranking is
FTS5's; phrases (hyphenated names), which need word positions, are scored by FTS5 itself and
added (bm25 is a sum over the query's phrases, each with its own idf).

Words match by stem (Snowball for English, Polish and Russian, `core.text.stem`) and, in Latin
letters, also by their first five letters (see `Match`): the index's vocabulary is stemmed once
per build, and a query word's postings are those of every indexed word with its stem (or
prefix).

Scores: the score we report and apply the similarity threshold to is the *coverage*, the share
of the query's distinct word stems (diacritics folded) that the chunk contains, in [0, 1]. It
is comparable across queries, unlike raw BM25.

Here: the retriever (ranking, scope, coverage). The in-memory copy and its bm25 arithmetic are
lexical_index.py; the query's words as phrases (`Match`) are phrases.py.
"""

from __future__ import annotations

import threading

import numpy as np

from docassist.core.ports import SearchHit
from docassist.core.scopes import EVERYTHING, Scope
from docassist.core.text import Stemmer, prefix_stem, stem, terms
from docassist.storage.lexical_index import LexicalIndex
from docassist.storage.limits import BM25_SIMILARITY_THRESHOLD
from docassist.storage.phrases import Match, Phrase, fts_query, query_phrases
from docassist.storage.ranking import best_positions, best_positive_positions
from docassist.storage.roles import LexicalRows

__all__ = ["Bm25Retriever", "LexicalIndex", "Match", "Phrase", "fts_query", "query_phrases"]
"""The index (lexical_index.py) and the query's phrases (phrases.py) are re-exported for the
callers that import them from here."""


class Bm25Retriever:
    name = "bm25"
    default_threshold = BM25_SIMILARITY_THRESHOLD

    def __init__(self, store: LexicalRows, *, match: Match = "stem+prefix",
                 stemmer: Stemmer = stem) -> None:
        self.store = store
        self.match = match  # others only to measure what stems buy (bench/)
        self.stemmer = {"stem+prefix": stemmer, "stem": stemmer,
                        "prefix": prefix_stem}.get(match, _exact)
        self._lock = threading.Lock()
        self._index: LexicalIndex | None = None

    def index(self) -> LexicalIndex:
        """The in-memory index, rebuilt when the store's index version moved."""
        with self._lock:
            if self._index is None or self._index.version != self.store.index_version():
                self._index = None  # let the old copy go before building the new one
                self._index = LexicalIndex.build(self.store, self.stemmer)
            return self._index

    def vocabulary_share(self, query: str) -> float:
        """Share of the query's words (stems; hyphenated names whole) that the corpus holds
        at all: low for a question in another language than the documents."""
        # By stems alone: a prefix of a foreign word often starts some word of the corpus.
        known_as = "stem" if self.match == "stem+prefix" else self.match
        phrases = query_phrases(query, known_as, self.stemmer)
        if not phrases:
            return 0.0
        index = self.index()
        return sum(1 for phrase in phrases if index.knows(phrase)) / len(phrases)

    def search(self, query: str, top_k: int, *, coverage: bool = True) -> list[SearchHit]:
        """The best hits, best first. Without `coverage` their score is left 0 (skips
        reading every hit's words: ~40% of BM25's time for 20 hits; hybrid search needs
        neither, see `ranked_ids`)."""
        return [hit for hit, _ in self.ranked(query, top_k, coverage=coverage)]

    def search_in(self, query: str, top_k: int, scope: Scope) -> list[SearchHit]:
        return [hit for hit, _ in self.ranked(query, top_k, scope=scope)]

    def ranked(self, query: str, top_k: int, *, coverage: bool = True,
               scope: Scope = EVERYTHING) -> list[tuple[SearchHit, float]]:
        """The best hits (scored by coverage) with their raw BM25 scores, best first; only
        rows of the scope's collections are candidates (before ranking and `top_k`)."""
        index = self.index()
        stemmer = self.stemmer
        wanted = {stemmer(term) for term in terms(query)}
        hits: list[tuple[SearchHit, float]] = []
        for chunk_id, raw in self.ranked_ids(query, top_k, index, scope=scope):
            chunk = self.store.chunk(chunk_id)
            document = index.documents.get(chunk.document_id) if chunk else None
            if chunk is None or document is None:  # pruned or removed since the index was read
                continue
            present = wanted & _stems_of(f"{document.title} {chunk.section} {chunk.text}",
                                         stemmer) if coverage else set()
            hits.append((SearchHit(chunk=chunk, document=document,
                                   score=len(present) / len(wanted)), raw))
        return hits

    def ranked_ids(self, query: str, top_k: int, index: LexicalIndex | None = None, *,
                   scope: Scope = EVERYTHING) -> list[tuple[str, float]]:
        """The best chunks' ids and raw BM25 scores, best first, without reading a chunk
        (hybrid search reads only the few it returns: 20 reads were ~1 ms a question)."""
        phrases = query_phrases(query, self.match, self.stemmer)
        if not phrases or top_k <= 0:
            return []
        index = index or self.index()
        scores = index.scores(phrases, self.store)
        if index.collections.covers(scope):
            best = best_positive_positions(scores, top_k)
        else:  # only the scope's rows are candidates, before ranking and top_k
            allowed = np.flatnonzero((scores > 0) & index.collections.mask(scope))
            best = best_positions(scores, top_k, among=allowed)
        return [(index.chunk_ids[position], float(scores[position])) for position in best]


def _stems_of(text: str, stemmer: Stemmer) -> set[str]:
    """Stems of every word, plus whole hyphenated names and their parts."""
    found: set[str] = set()
    for word in terms(text):
        found.add(stemmer(word))
        if "-" in word:
            found.update(stemmer(part) for part in word.split("-"))
    return found


def _exact(term: str) -> str:
    return term
