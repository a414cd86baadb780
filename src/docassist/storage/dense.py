"""Dense and hybrid retrieval over stored chunk vectors.

Dense: cosine similarity between the query vector and every current chunk's vector, held in
memory as one matrix and reloaded only when the index changes (another process may index).
Hybrid: BM25 and dense rankings fused by score-normalised CombMNZ (storage.fusion), every hit
of both voting; its score — the one the similarity threshold applies to — is the chunk's dense
cosine, in [-1, 1], so the fusion can never let through a question dense would refuse.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt
from threadpoolctl import ThreadpoolController  # type: ignore[import-untyped]

from docassist.core.documents import DocumentInfo
from docassist.core.limits import (
    DENSE_PARALLEL_MIN_ROWS,
    DENSE_SIMILARITY_THRESHOLD,
    EMBED_BATCH,
    HYBRID_BM25_WEIGHT,
    HYBRID_CANDIDATES,
    RRF_K,
)
from docassist.core.ports import Embedder, SearchHit
from docassist.storage.database import Store
from docassist.storage.fusion import Fusion, Vote, comb_mnz, weighted_rrf
from docassist.storage.search import Bm25Retriever, best_positions

_EMPTY: Final = np.zeros((0, 0), dtype=np.float32)
_CORES: Final = os.cpu_count() or 1
_BLAS: Final = ThreadpoolController()  # finds the BLAS numpy loaded (once: it scans libraries)


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


@dataclass(frozen=True)
class DenseSnapshot:
    """The vectors of the current chunks as of one index version; no chunk text is held."""

    version: int
    chunk_ids: list[str]
    matrix: npt.NDArray[np.float32]
    positions: dict[str, int]
    documents: dict[str, DocumentInfo]


class DenseRetriever:
    name = "dense"
    default_threshold = DENSE_SIMILARITY_THRESHOLD

    def __init__(self, store: Store, embedder: Embedder) -> None:
        self.store = store
        self.embedder = embedder
        self._lock = threading.Lock()
        self._snapshot = DenseSnapshot(-1, [], _EMPTY, {}, {})

    @property
    def _matrix(self) -> npt.NDArray[np.float32]:
        return self._snapshot.matrix

    def _current(self) -> DenseSnapshot:
        """The cached matrix; reloaded (embedding what is missing) when the index changed."""
        with self._lock:
            version = self.store.index_version()
            if version != self._snapshot.version:
                embed_missing(self.store, self.embedder)
                self._snapshot = DenseSnapshot(-1, [], _EMPTY, {}, {})  # free the old matrix
                chunk_ids, matrix = self.store.embedding_matrix(self.embedder.name)
                self._snapshot = DenseSnapshot(
                    version, chunk_ids, matrix,
                    {chunk_id: row for row, chunk_id in enumerate(chunk_ids)},
                    {d.document_id: d for d in self.store.documents()})
            return self._snapshot

    def similarities(self, query: str) -> tuple[DenseSnapshot, npt.NDArray[np.float32]]:
        """The current vectors and every one's cosine similarity to the query."""
        snapshot = self._current()
        if not snapshot.chunk_ids:
            return snapshot, np.zeros(0, dtype=np.float32)
        query_vector = np.asarray(self.embedder.embed_queries([query])[0], dtype=np.float32)
        # Small matrices on one BLAS thread: between queries a second one falls asleep, and
        # waking it cost more than it saved (p50 9 → 1.1 ms at 10k chunks on a busy machine).
        # Large ones are bound by memory bandwidth, which every core adds to (100k chunks,
        # quiet machine: p50 18 → 10 ms with two). The limit is process-wide while it lasts;
        # other BLAS users set their own (USE does).
        threads = 1 if len(snapshot.chunk_ids) < DENSE_PARALLEL_MIN_ROWS else _CORES
        with _BLAS.limit(limits=threads, user_api="blas"):
            return snapshot, snapshot.matrix @ query_vector

    def search(self, query: str, top_k: int) -> list[SearchHit]:
        snapshot, scores = self.similarities(query)
        return _hits(self.store, snapshot, scores,
                     [snapshot.chunk_ids[i] for i in best_positions(scores, top_k)], {})


class HybridRetriever:
    name = "hybrid"
    default_threshold = DENSE_SIMILARITY_THRESHOLD

    def __init__(
        self,
        bm25: Bm25Retriever,
        dense: DenseRetriever,
        *,
        bm25_weight: float = HYBRID_BM25_WEIGHT,
        fusion: Fusion = "combmnz",
        rrf_k: int = RRF_K,
    ) -> None:
        self.bm25 = bm25
        self.dense = dense
        self.bm25_weight = bm25_weight
        self.fusion = fusion  # "rrf" only to measure against (bench/retrieval.py)
        self.rrf_k = rrf_k

    def search(self, query: str, top_k: int) -> list[SearchHit]:
        snapshot, scores = self.dense.similarities(query)
        dense = [(snapshot.chunk_ids[i], float(scores[i]))
                 for i in best_positions(scores, HYBRID_CANDIDATES)]
        ranked = self.bm25.ranked(query, HYBRID_CANDIDATES)
        # Every hit of both rankings votes: no gate drops one retriever's evidence, so a word
        # only one page holds (a library's name) keeps what BM25 makes of it. BM25's votes
        # weigh as much of the question as the corpus knows: a question in another language
        # than the pages, most of whose words no page holds, leans on dense (measured on the
        # tune split, README).
        weight = self.bm25_weight * self.bm25.vocabulary_share(query) if ranked else 0.0
        lexical = [(hit.chunk.chunk_id, raw) for hit, raw in ranked]
        votes = [Vote(1.0, dense), Vote(weight, lexical, depth=HYBRID_CANDIDATES)]
        fused = comb_mnz(votes) if self.fusion == "combmnz" else weighted_rrf(votes, self.rrf_k)
        return _hits(self.dense.store, snapshot, scores, fused[:top_k],
                     {hit.chunk.chunk_id: hit for hit, _ in ranked})


def _hits(store: Store, snapshot: DenseSnapshot, scores: npt.NDArray[np.float32],
          chunk_ids: list[str], known: dict[str, SearchHit]) -> list[SearchHit]:
    """Hits scored by their cosine (0 for a chunk without a vector); chunks are read only for
    the few returned."""
    hits: list[SearchHit] = []
    for chunk_id in chunk_ids:
        row = snapshot.positions.get(chunk_id)
        cosine = float(scores[row]) if row is not None else 0.0
        if chunk_id in known:
            hits.append(SearchHit(chunk=known[chunk_id].chunk, document=known[chunk_id].document,
                                  score=cosine))
            continue
        chunk = store.chunk(chunk_id)
        document = snapshot.documents.get(chunk.document_id) if chunk else None
        if chunk is not None and document is not None:  # else removed since the matrix was read
            hits.append(SearchHit(chunk=chunk, document=document, score=cosine))
    return hits
