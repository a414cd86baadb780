"""Dense index candidates measured side by side (figures, no assertions).

    python bench/ann_candidates.py [--size N] [--random]

On the cached real embeddings (bench/real_corpus.py; `--random` uses unit random vectors,
the worst case for graph indexes): build seconds, query p50/p95 (top 20, one thread, as a
question runs), agreement@10 with exact float32 search, and bytes per vector in memory, for:
exact float32 (numpy), exact int8 (numpy, the stored rows), usearch HNSW (f32, f16, i8),
faiss HNSW (flat, SQ8) and faiss IVF-flat.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

TOP = 20


def _timed(search: Callable[[Any], Any], queries: Any) -> tuple[list[Any], float, float]:
    results, timings = [], []
    for query in queries:
        began = time.perf_counter()
        results.append(search(query))
        timings.append((time.perf_counter() - began) * 1000)
    timings.sort()
    return results, statistics.median(timings), timings[int(0.95 * len(timings))]


def agreement(found: list[Any], truth: list[Any]) -> float:
    return float(np.mean([len(set(map(int, a[:10])) & set(map(int, b[:10]))) / 10
                          for a, b in zip(found, truth, strict=True)]))


def candidates(vectors: Any) -> dict[str, Callable[[], tuple[Callable[[Any], Any], int]]]:
    def exact32() -> tuple[Callable[[Any], Any], int]:
        return (lambda q: np.argsort(-(vectors @ q))[:TOP]), vectors.nbytes

    def exact8() -> tuple[Callable[[Any], Any], int]:
        scale = np.abs(vectors).max(axis=1) / 127
        codes = np.round(vectors / scale[:, None]).astype(np.int8)

        def search(q: Any) -> Any:
            return np.argsort(-((codes @ q.astype(np.float32)) * scale))[:TOP]
        return search, codes.nbytes + scale.nbytes

    def usearch(dtype: str) -> Callable[[], tuple[Callable[[Any], Any], int]]:
        def build() -> tuple[Callable[[Any], Any], int]:
            from usearch.index import Index

            index = Index(ndim=vectors.shape[1], metric="ip", dtype=dtype, connectivity=16,
                          expansion_add=128, expansion_search=64)
            index.add(np.arange(len(vectors)), vectors)
            return (lambda q: index.search(q, TOP, threads=1).keys), index.memory_usage
        return build

    def faiss_index(kind: str) -> Callable[[], tuple[Callable[[Any], Any], int]]:
        def build() -> tuple[Callable[[Any], Any], int]:
            import faiss

            faiss.omp_set_num_threads(2)
            dims = vectors.shape[1]
            index: Any  # faiss's IVF and HNSW indexes, each with its own knobs
            if kind.startswith("IVF"):
                lists = max(16, int(4 * len(vectors) ** 0.5))
                index = faiss.index_factory(dims, kind.format(lists=lists),
                                            faiss.METRIC_INNER_PRODUCT)
                sample = np.random.default_rng(1).choice(len(vectors),
                                                         min(len(vectors), 40 * lists), False)
                index.train(vectors[sample])
                index.nprobe = max(1, lists // 32)
            else:
                index = faiss.index_factory(dims, kind, faiss.METRIC_INNER_PRODUCT)
                index.hnsw.efConstruction = 128
                index.train(vectors)
                index.hnsw.efSearch = 64
            index.add(vectors)

            def search(q: Any) -> Any:
                faiss.omp_set_num_threads(1)
                return index.search(q[None, :], TOP)[1][0]
            return search, faiss.serialize_index(index).nbytes
        return build

    return {"exact_f32": exact32, "exact_i8": exact8, "usearch_hnsw_f32": usearch("f32"),
            "usearch_hnsw_f16": usearch("f16"), "usearch_hnsw_i8": usearch("i8"),
            "faiss_hnsw_flat": faiss_index("HNSW32,Flat"),
            "faiss_hnsw_sq8": faiss_index("HNSW32,SQ8"),
            "faiss_ivf_flat": faiss_index("IVF{lists},Flat"),
            "faiss_ivf_sq8": faiss_index("IVF{lists},SQ8")}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=0)
    parser.add_argument("--random", action="store_true")
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    if args.random:
        rng = np.random.default_rng(5)
        vectors = rng.standard_normal((args.size or 100_000, 512), dtype=np.float32)
        queries = rng.standard_normal((200, 512), dtype=np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    else:
        from real_corpus import load

        _, vectors, queries = load()
        vectors = vectors[: args.size or len(vectors)]
        queries = queries[:200]
    truth, _, _ = _timed(lambda q: np.argsort(-(vectors @ q))[:TOP], queries)
    figures: dict[str, Any] = {"vectors": len(vectors), "random": args.random}
    for name, build in candidates(vectors).items():
        if args.only and name not in args.only.split(","):
            continue
        began = time.perf_counter()
        search, size = build()
        built = time.perf_counter() - began
        found, p50, p95 = _timed(search, queries)
        figures[name] = {"build_s": round(built, 1), "p50_ms": round(p50, 2),
                         "p95_ms": round(p95, 2),
                         "agreement_at_10": round(agreement(found, truth), 4),
                         "bytes_per_vector": round(size / len(vectors))}
        print(name, figures[name], file=sys.stderr, flush=True)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
