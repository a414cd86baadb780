"""BM25 search over the chunk index (SQLite FTS5).

Scores: FTS5 ranks by BM25; the score we report and apply the similarity threshold to is the
*coverage*, the share of the query's distinct word stems (first five letters, diacritics
folded) that the chunk contains, in [0, 1]. It is comparable across queries, unlike raw BM25.
"""

from __future__ import annotations

from typing import Final

from docassist.core.limits import BM25_SIMILARITY_THRESHOLD
from docassist.core.ports import SearchHit
from docassist.core.text import stem, terms
from docassist.storage.database import Store

CANDIDATES: Final = 50


def fts_query(query: str, prefix: bool = True) -> str | None:
    """An FTS5 expression: any of the query's words — with `prefix`, their stems as prefixes —
    hyphenated names as phrases. Every part is quoted, so no query is FTS syntax."""
    parts: list[str] = []
    for term in dict.fromkeys(terms(query)):
        if "-" in term:
            parts.append('"' + " ".join(term.split("-")) + '"')
        elif prefix:
            parts.append(f'"{stem(term)}"*')
        else:
            parts.append(f'"{term}"')
    return " OR ".join(parts) if parts else None


class Bm25Retriever:
    name = "bm25"
    default_threshold = BM25_SIMILARITY_THRESHOLD

    def __init__(self, store: Store, *, prefix: bool = True) -> None:
        self.store = store
        self.prefix = prefix  # False only to measure what stem prefixes buy (bench/)

    def search(self, query: str, top_k: int) -> list[SearchHit]:
        match = fts_query(query, self.prefix)
        if match is None:
            return []
        wanted = {stem(term) for term in terms(query)}
        hits: list[SearchHit] = []
        for chunk, document, _rank in self.store.search_fts(match, max(CANDIDATES, top_k)):
            present = wanted & _stems_of(f"{document.title} {chunk.section} {chunk.text}")
            coverage = len(present) / len(wanted) if wanted else 0.0
            hits.append(SearchHit(chunk=chunk, document=document, score=coverage))
            if len(hits) >= top_k:
                break
        return hits


def _stems_of(text: str) -> set[str]:
    """Stems of every word, plus whole hyphenated names and their parts."""
    found: set[str] = set()
    for word in terms(text):
        found.add(stem(word))
        if "-" in word:
            found.update(stem(part) for part in word.split("-"))
    return found
