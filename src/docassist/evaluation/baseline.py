"""Plain `bm25s` over the same chunks: the baseline every retrieval figure is reported beside.

Its defaults on purpose (its tokenizer, English stop words, no stemming): it stands for what
a new user gets from an off-the-shelf BM25 library. `bm25s` comes with the `dev` extra; where
it is missing, evaluations leave the baseline out and say so.
"""

from __future__ import annotations

import threading
from typing import Any

from docassist.core.documents import Chunk, DocumentInfo
from docassist.core.ports import SearchHit
from docassist.core.scopes import Scope
from docassist.storage.roles import VersionedCatalog


def bm25s_available() -> bool:
    try:
        import bm25s  # noqa: F401
    except ImportError:
        return False
    return True


class Bm25sRetriever:
    name = "bm25s"
    default_threshold = 0.0  # raw BM25; only ranking is evaluated

    def __init__(self, store: VersionedCatalog) -> None:
        self.store = store
        self._lock = threading.Lock()
        self._built: tuple[int, Any, list[Chunk], dict[str, DocumentInfo]] | None = None

    def _index(self) -> tuple[Any, list[Chunk], dict[str, DocumentInfo]]:
        import bm25s

        with self._lock:
            version = self.store.index_version()
            if self._built is None or self._built[0] != version:
                chunks = self.store.current_chunks()
                model = bm25s.BM25()
                if chunks:
                    model.index(bm25s.tokenize([chunk.text for chunk in chunks],
                                               show_progress=False), show_progress=False)
                documents = {d.document_id: d for d in self.store.documents()}
                self._built = (version, model, chunks, documents)
            return self._built[1:]

    def search(self, query: str, top_k: int) -> list[SearchHit]:
        import bm25s

        model, chunks, documents = self._index()
        if not chunks or top_k <= 0:
            return []
        tokens = bm25s.tokenize([query], show_progress=False)
        if not tokens.vocab:  # nothing but stop words
            return []
        results, scores = model.retrieve(tokens, k=min(top_k, len(chunks)), show_progress=False)
        hits = []
        # Plain: all k results as bm25s ranks them, zero scores included (bench/run.py did so).
        for position, score in zip(results[0], scores[0], strict=True):
            chunk = chunks[int(position)]
            document = documents.get(chunk.document_id)
            if document is not None:
                hits.append(SearchHit(chunk=chunk, document=document, score=float(score)))
        return hits

    def search_in(self, query: str, top_k: int, scope: Scope) -> list[SearchHit]:
        """The baseline ranks every chunk (it is only measured, never serves a conversation):
        a scoped search is refused rather than filtered after ranking."""
        if not scope.everything:
            raise NotImplementedError("the bm25s baseline does not take a scope")
        return self.search(query, top_k)
