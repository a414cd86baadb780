"""Searching a question together with its translations (given by a model selector).

A Polish question over English or Russian pages shares few words with them, and a
multilingual embedder only partly bridges that (docs/retrieval.md: cross-language figures). When the
selector is a model, it may add the question in the documents' languages; each phrasing is
searched with the configured retriever and the rankings are fused by reciprocal rank, so a
page that any phrasing finds near the top comes up, and one every phrasing finds comes first.
"""

from __future__ import annotations

import time

from docassist.core.limits import HYBRID_CANDIDATES, RRF_K
from docassist.core.ports import Observer, Retriever, SearchHit
from docassist.core.scopes import EVERYTHING, Scope


class TranslatedSearch:
    """A retriever that searches the question and each translation, fused (RRF)."""

    def __init__(self, retriever: Retriever, translations: list[str]) -> None:
        self.retriever = retriever
        self.translations = translations
        self.name = f"{retriever.name}+translations"  # what the trace records as retriever
        self.default_threshold = retriever.default_threshold

    def search(self, query: str, top_k: int) -> list[SearchHit]:
        return self.search_in(query, top_k, EVERYTHING)

    def search_in(self, query: str, top_k: int, scope: Scope) -> list[SearchHit]:
        phrasings = list(dict.fromkeys([query, *self.translations]))
        fused: dict[str, float] = {}
        best: dict[str, SearchHit] = {}
        for phrasing in phrasings:
            for rank, hit in enumerate(self._search(phrasing, scope), 1):
                chunk_id = hit.chunk.chunk_id
                fused[chunk_id] = fused.get(chunk_id, 0.0) + 1.0 / (RRF_K + rank)
                # The score the threshold sees: the best of any phrasing, on the same scale.
                if chunk_id not in best or hit.score > best[chunk_id].score:
                    best[chunk_id] = hit
        ranked = sorted(fused, key=lambda chunk_id: -fused[chunk_id])[:top_k]
        return [best[chunk_id] for chunk_id in ranked]

    def _search(self, phrasing: str, scope: Scope) -> list[SearchHit]:
        if scope.everything:
            return self.retriever.search(phrasing, HYBRID_CANDIDATES)
        return self.retriever.search_in(phrasing, HYBRID_CANDIDATES, scope)


class TimedRetriever:
    """The engine's retriever, timed for the observer (metrics); same name, same scale."""

    def __init__(self, retriever: Retriever, observer: Observer) -> None:
        self.retriever = retriever
        self.observer = observer
        self.name = retriever.name
        self.default_threshold = retriever.default_threshold

    def search(self, query: str, top_k: int) -> list[SearchHit]:
        started = time.perf_counter()
        try:
            return self.retriever.search(query, top_k)
        finally:
            self.observer.retrieval_finished(self.name, time.perf_counter() - started)

    def search_in(self, query: str, top_k: int, scope: Scope) -> list[SearchHit]:
        started = time.perf_counter()
        try:
            return self.retriever.search_in(query, top_k, scope)
        finally:
            self.observer.retrieval_finished(self.name, time.perf_counter() - started)
