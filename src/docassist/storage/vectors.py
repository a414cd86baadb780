"""Chunk vectors: how they are stored in rows, and the in-memory index that searches them.

Rows: a vector is stored as int8 codes plus one float32 scale (d + 4 bytes: 516 for USE's
512 dimensions, against 2,048 for float32, which SQLite kept one to a 4 KB page). Rows
written before this format (4·d bytes of float32) are still read. Both stores can hold such
a blob, so the index below is built from rows any store returns and lives in the process.

Index: below ANN_MIN_ROWS an exact search (one float32 matrix product) is the fastest and
exact. From there on an inverted-file index from faiss (IVF: vectors grouped around
k-means centroids; a question scans the ANN_PROBE_SHARE of groups nearest to it) holding
4-bit product-quantizer codes scanned by SIMD (`_codes`), whose best candidates are ranked
again by the stored int8 rows: it is built in seconds to a minute (a graph index took
minutes for 20k vectors on two cores, bench/ann_candidates.py), takes about the stored
size in memory and agrees with exact search on ≥ 0.98 of the top 10 on real embeddings
(docs/retrieval.md).
"""

from __future__ import annotations

import os
from typing import Any, Final, Protocol

import numpy as np
import numpy.typing as npt

from docassist.storage.limits import (
    ANN_FAST_SCAN_MIN_TRAIN,
    ANN_LISTS_PER_SQRT,
    ANN_MIN_ROWS,
    ANN_PROBE_SHARE,
    ANN_RERANK_CANDIDATES,
)
from docassist.storage.ranking import best_positions

TRAIN_PER_LIST: Final = 39
"""faiss warns below 39 training points per k-means centroid."""
TRAIN_MAX: Final = 64_000
"""Training points at most: k-means time grows with points × groups (1M vectors: 2,000)."""

CODE_BLOCK_ROWS: Final = 4096
"""Rows turned into int8 codes at a time when an index is built (8 MB of float32 temporaries
for 512 dimensions)."""

Matrix = npt.NDArray[np.float32]
Rows = npt.NDArray[np.int64]


def encode_vector(vector: npt.NDArray[np.floating]) -> bytes:
    """int8 codes of the vector scaled to its largest component, then the scale."""
    values = np.asarray(vector, dtype=np.float32)
    largest = float(np.abs(values).max()) if values.size else 0.0
    scale = np.float32(largest / 127.0 if largest > 0 else 1.0)
    codes = np.clip(np.rint(values / scale), -127, 127).astype(np.int8)
    return bytes(codes.tobytes() + scale.tobytes())


def decode_vector(blob: bytes, dimensions: int) -> Matrix:
    """A stored vector as float32, in either row format."""
    if len(blob) == 4 * dimensions:  # float32, as written before the int8 rows
        return np.frombuffer(blob, dtype=np.float32)
    codes = np.frombuffer(blob, dtype=np.int8, count=dimensions)
    scale = np.frombuffer(blob, dtype=np.float32, offset=dimensions, count=1)[0]
    return np.asarray(codes.astype(np.float32) * scale, dtype=np.float32)


class VectorIndex(Protocol):
    """Inner-product search over rows 0..n-1."""

    kind: str
    """Which index it is ("exact", "ivf"), as benchmarks report it."""

    def nearest(self, query: Matrix, count: int) -> tuple[Rows, Matrix]:
        """The `count` best rows, best first, and their scores."""
        ...

    def scores(self, query: Matrix, rows: Rows) -> Matrix:
        """The scores of the given rows."""
        ...


class ExactIndex:
    """Every row scored by one matrix product; ties in row order (a stable sort)."""

    kind = "exact"

    def __init__(self, matrix: Matrix) -> None:
        self.matrix = matrix

    def nearest(self, query: Matrix, count: int) -> tuple[Rows, Matrix]:
        scores = self.matrix @ query
        rows = np.asarray(best_positions(scores, count), dtype=np.int64)
        return rows, scores[rows]

    def scores(self, query: Matrix, rows: Rows) -> Matrix:
        return np.asarray(self.matrix[rows] @ query, dtype=np.float32)


class IvfIndex:
    """faiss IVF with 4-bit codes (8-bit vectors for tiny indexes) finds candidates; they
    are ranked again by the stored int8 vectors (kept beside it, d + 4 bytes a row), which
    also score any other row. Rows are faiss ids."""

    kind = "ivf"

    def __init__(self, matrix: Matrix) -> None:
        import faiss

        faiss.omp_set_num_threads(os.cpu_count() or 1)
        count, dimensions = matrix.shape
        # k-means wants about TRAIN_PER_LIST points per group: a small corpus gets fewer.
        lists = max(1, min(int(ANN_LISTS_PER_SQRT * count ** 0.5), count // TRAIN_PER_LIST))
        # A sample (twice what faiss asks for; at most TRAIN_MAX) trains k-means about as
        # well as every vector, in a fraction of the time (61k real vectors: agreement 0.984
        # with twice, 0.978 with once).
        sample = np.random.default_rng(0).choice(
            count, min(count, 2 * TRAIN_PER_LIST * lists, TRAIN_MAX), replace=False)
        index: Any = faiss.index_factory(dimensions, f"IVF{lists},{_codes(dimensions, sample)}",
                                         faiss.METRIC_INNER_PRODUCT)
        index.train(matrix[np.sort(sample)])
        index.add(matrix)
        index.nprobe = max(1, round(lists * ANN_PROBE_SHARE))
        faiss.omp_set_num_threads(1)  # built on every core; one question needs one
        self.index = index
        self.lists = lists
        self.row_scales, self.codes = _int8_rows(matrix)  # the stored rows' codes, exactly

    def nearest(self, query: Matrix, count: int) -> tuple[Rows, Matrix]:
        _, found = self.index.search(query[None, :], max(count, ANN_RERANK_CANDIDATES))
        rows = found[0][found[0] >= 0].astype(np.int64)  # -1: fewer rows in the groups scanned
        scores = self.scores(query, rows)
        order = np.lexsort((rows, -scores))[:count]
        return rows[order], scores[order]

    def scores(self, query: Matrix, rows: Rows) -> Matrix:
        return np.asarray((self.codes[rows].astype(np.float32) @ query) * self.row_scales[rows],
                          dtype=np.float32)


def _int8_rows(matrix: Matrix) -> tuple[Matrix, npt.NDArray[np.int8]]:
    """Each row's scale and int8 codes, as `encode_vector` stores them, a block of rows at a
    time: whole-matrix temporaries were three more copies of the float32 matrix (1M chunks:
    a 7.1 GB peak while the index was built)."""
    scales = np.ones(len(matrix), dtype=np.float32)
    codes = np.empty(matrix.shape, dtype=np.int8)
    for start in range(0, len(matrix), CODE_BLOCK_ROWS):
        block = matrix[start:start + CODE_BLOCK_ROWS]
        largest = np.abs(block).max(axis=1)
        block_scales = np.where(largest > 0, largest / 127.0, 1.0).astype(np.float32)
        scales[start:start + len(block)] = block_scales
        codes[start:start + len(block)] = np.clip(np.rint(block / block_scales[:, None]),
                                                  -127, 127).astype(np.int8)
    return scales, codes


def _codes(dimensions: int, sample: Rows) -> str:
    """How the IVF groups hold vectors: 4-bit product-quantizer codes of 4 dimensions each
    (64 bytes for 512 dimensions), scanned by faiss's SIMD fast-scan kernels: 16× faster
    than 8-bit vectors (100k random vectors, a third of 632 groups: p50 0.38 against
    6.2 ms); the re-ranking by the stored int8 rows restores the order. 8-bit vectors
    where the codes cannot be trained or packed."""
    if len(sample) >= ANN_FAST_SCAN_MIN_TRAIN and dimensions % 8 == 0:
        return f"PQ{dimensions // 4}x4fs"
    return "SQ8"


def build_index(matrix: Matrix, min_rows: int = ANN_MIN_ROWS) -> ExactIndex | IvfIndex:
    """Exact search for small corpora (faster there, and exact), IVF from `min_rows`."""
    if len(matrix) < min_rows:
        return ExactIndex(matrix)
    return IvfIndex(matrix)
