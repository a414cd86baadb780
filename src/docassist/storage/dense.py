"""Dense and hybrid retrieval over stored chunk vectors.

Dense: cosine similarity between the query vector and every current chunk's vector, held in
memory as one matrix and reloaded only when the index changes (another process may index).
Hybrid: BM25 and dense rankings fused by reciprocal rank (RRF), BM25 voting only with chunks
that match most of the question; its score — the one the similarity threshold applies to —
is the chunk's dense cosine, in [-1, 1].
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Final

import numpy as np

from docassist.core.documents import Chunk, DocumentInfo
from docassist.core.limits import (
    DENSE_SIMILARITY_THRESHOLD,
    EMBED_BATCH,
    HYBRID_BM25_WEIGHT,
    HYBRID_CANDIDATES,
    HYBRID_MIN_BM25_SCORE,
    RRF_K,
)
from docassist.core.ports import Embedder, SearchHit
from docassist.storage.database import Store
from docassist.storage.search import Bm25Retriever

_EMPTY: Final = np.zeros((0, 0), dtype=np.float32)


def embed_missing(
    store: Store,
    embedder: Embedder,
    on_start: Callable[[int], None] | None = None,
    on_batch: Callable[[int], None] | None = None,
) -> int:
    """Embed current chunks that have no vector for this embedder; returns how many."""
    chunks = store.chunks_without_embedding(embedder.name)
    if on_start is not None:
        on_start(len(chunks))
    for start in range(0, len(chunks), EMBED_BATCH):
        batch = chunks[start : start + EMBED_BATCH]
        vectors = embedder.embed_passages([chunk.text for chunk in batch])
        store.save_embeddings(embedder.name, [chunk.chunk_id for chunk in batch], vectors)
        if on_batch is not None:
            on_batch(len(batch))
    return len(chunks)


class DenseRetriever:
    name = "dense"
    default_threshold = DENSE_SIMILARITY_THRESHOLD

    def __init__(self, store: Store, embedder: Embedder) -> None:
        self.store = store
        self.embedder = embedder
        self._lock = threading.Lock()
        self._version = -1
        self._chunks: list[Chunk] = []
        self._matrix = _EMPTY
        self._documents: dict[str, DocumentInfo] = {}

    def _current(self) -> tuple[list[Chunk], np.ndarray, dict[str, DocumentInfo]]:
        """The cached matrix; reloaded (embedding what is missing) when the index changed."""
        with self._lock:
            version = self.store.index_version()
            if version != self._version:
                embed_missing(self.store, self.embedder)
                self._chunks, self._matrix = self.store.current_embeddings(self.embedder.name)
                self._documents = {d.document_id: d for d in self.store.documents()}
                self._version = version
            return self._chunks, self._matrix, self._documents

    def similarities(self, query: str) -> tuple[list[Chunk], np.ndarray, dict[str, DocumentInfo]]:
        """Every current chunk with its cosine similarity to the query."""
        chunks, matrix, documents = self._current()
        if not chunks:
            return [], np.zeros(0, dtype=np.float32), documents
        query_vector = self.embedder.embed_queries([query])[0]
        return chunks, matrix @ query_vector, documents

    def search(self, query: str, top_k: int) -> list[SearchHit]:
        chunks, scores, documents = self.similarities(query)
        order = np.argsort(-scores, kind="stable")[:top_k]
        return [SearchHit(chunk=chunks[i], document=documents[chunks[i].document_id],
                          score=float(scores[i])) for i in order]


class HybridRetriever:
    name = "hybrid"
    default_threshold = DENSE_SIMILARITY_THRESHOLD

    def __init__(
        self,
        bm25: Bm25Retriever,
        dense: DenseRetriever,
        *,
        bm25_weight: float = HYBRID_BM25_WEIGHT,
        rrf_k: int = RRF_K,
        min_lexical_score: float = HYBRID_MIN_BM25_SCORE,
    ) -> None:
        self.bm25 = bm25
        self.dense = dense
        self.bm25_weight = bm25_weight
        self.rrf_k = rrf_k
        self.min_lexical_score = min_lexical_score

    def search(self, query: str, top_k: int) -> list[SearchHit]:
        chunks, scores, documents = self.dense.similarities(query)
        cosine = {chunk.chunk_id: float(score) for chunk, score in zip(chunks, scores,
                                                                       strict=True)}
        by_id = {chunk.chunk_id: chunk for chunk in chunks}
        dense_order = [chunks[i].chunk_id for i in np.argsort(-scores, kind="stable")
                       [:HYBRID_CANDIDATES]]
        lexical = self.bm25.search(query, HYBRID_CANDIDATES)
        fused: dict[str, float] = {}
        for rank, chunk_id in enumerate(dense_order, start=1):
            fused[chunk_id] = 1.0 / (self.rrf_k + rank)
        for rank, hit in enumerate(lexical, start=1):
            # Only strong lexical matches vote: a question in another language than the
            # document shares a word or two (a service name) with the wrong chunks, and RRF
            # lets even a weak vote reorder close dense ranks (bench/retrieval.py).
            if hit.score >= self.min_lexical_score:
                fused[hit.chunk.chunk_id] = (fused.get(hit.chunk.chunk_id, 0.0)
                                             + self.bm25_weight / (self.rrf_k + rank))
        for hit in lexical:
            by_id.setdefault(hit.chunk.chunk_id, hit.chunk)
            documents.setdefault(hit.document.document_id, hit.document)
        best = sorted(fused, key=lambda chunk_id: -fused[chunk_id])[:top_k]
        return [SearchHit(chunk=by_id[chunk_id],
                          document=documents[by_id[chunk_id].document_id],
                          score=cosine.get(chunk_id, 0.0)) for chunk_id in best]
