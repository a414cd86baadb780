"""Dense and hybrid retrieval over stored chunk vectors.

Dense: cosine similarity between the query vector and every current chunk's vector, held in
memory as one matrix and reloaded only when the index changes (another process may index).
Hybrid: BM25 and dense rankings fused by score-normalised CombMNZ (storage.fusion), every hit
of both voting; its score — the one the similarity threshold applies to — is the chunk's dense
cosine, in [-1, 1], so the fusion can never let through a question dense would refuse.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt
from threadpoolctl import ThreadpoolController  # type: ignore[import-untyped]

from docassist.core.documents import Chunk, DocumentInfo
from docassist.core.limits import HYBRID_CANDIDATES, RRF_K
from docassist.core.ports import Catalog, Embedder, SearchHit
from docassist.core.scopes import EVERYTHING, Scope
from docassist.storage.fusion import Fusion, Vote, comb_mnz, weighted_rrf
from docassist.storage.limits import (
    ANN_MIN_ROWS,
    DENSE_SIMILARITY_THRESHOLD,
    EMBED_BATCH,
    EMBED_WORKERS,
    HYBRID_BM25_WEIGHT,
)
from docassist.storage.ranking import RowCollections, best_positions
from docassist.storage.roles import EmbeddingWrites, VectorRows
from docassist.storage.search import Bm25Retriever
from docassist.storage.vectors import ExactIndex, VectorIndex, build_index

_EMPTY: Final = np.zeros((0, 0), dtype=np.float32)
_BLAS: Final = ThreadpoolController()  # finds the BLAS numpy loaded (once: it scans libraries)


def embed_missing(
    store: EmbeddingWrites,
    embedder: Embedder,
    on_start: Callable[[int], None] | None = None,
    on_batch: Callable[[int], None] | None = None,
    workers: int = EMBED_WORKERS,
) -> int:
    """Embed current chunks that have no vector for this embedder; returns how many.

    Batches are embedded by `workers` threads (a model server answers several at once; USE
    runs its matrix products outside the GIL) while this thread stores finished batches in
    order, each in its own transaction: a process killed midway keeps every stored batch,
    and the next run embeds only the rest."""
    chunks = store.chunks_without_embedding(embedder.name)
    if on_start is not None:
        on_start(len(chunks))
    batches = [chunks[start:start + EMBED_BATCH] for start in range(0, len(chunks), EMBED_BATCH)]
    pending: deque[tuple[list[Chunk], Future[Any]]] = deque()
    with ThreadPoolExecutor(max_workers=max(1, workers),
                            thread_name_prefix="embed") as pool:
        for batch in batches:
            pending.append((batch, pool.submit(embedder.embed_passages,
                                               [chunk.text for chunk in batch])))
            if len(pending) > 2 * workers:  # bounded: a million chunks are not all in flight
                _store_batch(store, embedder, *pending.popleft(), on_batch)
        while pending:
            _store_batch(store, embedder, *pending.popleft(), on_batch)
    return len(chunks)


def _store_batch(store: EmbeddingWrites, embedder: Embedder, batch: list[Chunk],
                 vectors: Future[Any],
                 on_batch: Callable[[int], None] | None) -> None:
    store.save_embeddings(embedder.name, [chunk.chunk_id for chunk in batch], vectors.result())
    if on_batch is not None:
        on_batch(len(batch))


@dataclass(frozen=True)
class DenseSnapshot:
    """The vectors of the current chunks as of one index version, in a search index
    (`storage.vectors`: exact for small corpora, IVF from ANN_MIN_ROWS); no chunk text."""

    version: int
    chunk_ids: list[str]
    index: VectorIndex
    positions: dict[str, int]
    documents: dict[str, DocumentInfo]
    collections: RowCollections


_NO_SNAPSHOT: Final = DenseSnapshot(-1, [], ExactIndex(_EMPTY), {}, {},
                                    RowCollections.of([], {}))


@dataclass(frozen=True)
class DenseResult:
    """The nearest chunks to one question, and how to score any other chunk for it."""

    snapshot: DenseSnapshot
    query: npt.NDArray[np.float32]
    chunk_ids: list[str]
    scores: dict[str, float]

    def cosines(self, chunk_ids: list[str]) -> dict[str, float]:
        """Cosines of the given chunks (those among the nearest are known; 0 without a
        vector)."""
        others = [c for c in chunk_ids if c not in self.scores and c in self.snapshot.positions]
        found = dict(self.scores)
        if others:
            rows = np.asarray([self.snapshot.positions[c] for c in others], dtype=np.int64)
            found.update(zip(others, map(float, self.snapshot.index.scores(self.query, rows)),
                             strict=True))
        return {chunk_id: found.get(chunk_id, 0.0) for chunk_id in chunk_ids}


class DenseRetriever:
    name = "dense"
    default_threshold = DENSE_SIMILARITY_THRESHOLD

    def __init__(self, store: VectorRows, embedder: Embedder, *,
                 ann_min_rows: int = ANN_MIN_ROWS) -> None:
        self.store = store
        self.embedder = embedder
        self.ann_min_rows = ann_min_rows  # 0 = always approximate (tests, bench)
        self._lock = threading.Lock()
        self._snapshot = _NO_SNAPSHOT

    @property
    def _matrix(self) -> VectorIndex:
        return self._snapshot.index

    def warm(self) -> None:
        """Load (or reload after an index change) now, not in the next question."""
        self._current()

    def _current(self) -> DenseSnapshot:
        """The cached index; rebuilt (embedding what is missing) when the index changed."""
        with self._lock:
            version = self.store.index_version()
            if version != self._snapshot.version:
                embed_missing(self.store, self.embedder)
                self._snapshot = _NO_SNAPSHOT  # free the old index before building the new
                chunk_ids, matrix = self.store.embedding_matrix(self.embedder.name)
                self._snapshot = DenseSnapshot(
                    version, chunk_ids, build_index(matrix, self.ann_min_rows),
                    {chunk_id: row for row, chunk_id in enumerate(chunk_ids)},
                    {d.document_id: d for d in self.store.documents()},
                    RowCollections.of(chunk_ids, self.store.chunk_collections()))
            return self._snapshot

    def nearest(self, query: str, count: int, scope: Scope = EVERYTHING) -> DenseResult:
        """The `count` chunks nearest to the question, best first, with their cosines; with
        a narrower scope, among the chunks of its collections only."""
        snapshot = self._current()
        query_vector = np.asarray(self.embedder.embed_queries([query])[0], dtype=np.float32)
        if not snapshot.chunk_ids or count <= 0:
            return DenseResult(snapshot, query_vector, [], {})
        # One BLAS thread: between queries a second one falls asleep, and waking it cost
        # more than it saved (p50 9 → 1.1 ms at 10k chunks on a busy machine); large
        # corpora go through the IVF index, which scans a small share of the vectors.
        with _BLAS.limit(limits=1, user_api="blas"):
            if snapshot.collections.covers(scope):
                rows, scores = snapshot.index.nearest(query_vector, count)
            else:
                rows, scores = _nearest_in(snapshot, query_vector, count, scope)
        chunk_ids = [snapshot.chunk_ids[row] for row in rows]
        return DenseResult(snapshot, query_vector, chunk_ids,
                           dict(zip(chunk_ids, map(float, scores), strict=True)))

    def search(self, query: str, top_k: int) -> list[SearchHit]:
        return self.search_in(query, top_k, EVERYTHING)

    def search_in(self, query: str, top_k: int, scope: Scope) -> list[SearchHit]:
        result = self.nearest(query, top_k, scope)
        return _hits(self.store, result, result.chunk_ids, {})


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
        return self.search_in(query, top_k, EVERYTHING)

    def search_in(self, query: str, top_k: int, scope: Scope) -> list[SearchHit]:
        """Both rankings restricted to the scope, so the fused candidates are too."""
        # One side after the other: with BM25 at ~1 ms (100k chunks) a second thread saved
        # nothing on two loaded cores and added a hand-over (A/B in the same process: p95
        # 77 vs 81 ms at load average 15, within noise; docs/retrieval.md).
        lexical = self.bm25.ranked_ids(query, HYBRID_CANDIDATES, scope=scope)
        dense = self.dense.nearest(query, HYBRID_CANDIDATES, scope)
        # Every hit of both rankings votes: no gate drops one retriever's evidence, so a word
        # only one page holds (a library's name) keeps what BM25 makes of it. BM25's votes
        # weigh as much of the question as the corpus knows: a question in another language
        # than the pages, most of whose words no page holds, leans on dense (measured on the
        # tune split, docs/retrieval.md).
        weight = self.bm25_weight * self.bm25.vocabulary_share(query) if lexical else 0.0
        nearest = [(chunk_id, dense.scores[chunk_id]) for chunk_id in dense.chunk_ids]
        votes = [Vote(1.0, nearest), Vote(weight, lexical, depth=HYBRID_CANDIDATES)]
        fused = comb_mnz(votes) if self.fusion == "combmnz" else weighted_rrf(votes, self.rrf_k)
        return _hits(self.dense.store, dense, fused[:top_k], {})


def _nearest_in(snapshot: DenseSnapshot, query: npt.NDArray[np.float32], count: int,
                scope: Scope) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
    """The nearest rows among the scope's rows, each scored (exact ranking of the allowed
    rows: an approximate index's probe could miss a small collection altogether)."""
    allowed = np.flatnonzero(snapshot.collections.mask(scope)).astype(np.int64)
    scores = snapshot.index.scores(query, allowed)
    best = np.asarray(best_positions(scores, count), dtype=np.int64)
    return allowed[best], scores[best]


def _hits(store: Catalog, dense: DenseResult, chunk_ids: list[str],
          known: dict[str, SearchHit]) -> list[SearchHit]:
    """Hits scored by their cosine (0 for a chunk without a vector); chunks are read only for
    the few returned."""
    cosines = dense.cosines(chunk_ids)
    hits: list[SearchHit] = []
    for chunk_id in chunk_ids:
        cosine = cosines[chunk_id]
        if chunk_id in known:
            hits.append(SearchHit(chunk=known[chunk_id].chunk, document=known[chunk_id].document,
                                  score=cosine))
            continue
        chunk = store.chunk(chunk_id)
        document = dense.snapshot.documents.get(chunk.document_id) if chunk else None
        if chunk is not None and document is not None:  # else removed since the matrix was read
            hits.append(SearchHit(chunk=chunk, document=document, score=cosine))
    return hits
