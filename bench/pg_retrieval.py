"""Retrieval at 100k chunks on PostgreSQL (issue 17's replica benchmark): hybrid search
through the PostgreSQL store's retrievers, after their in-process index loads.

Called by bench/replicas.py (`--retrieval-only` runs just this part). The corpus is
bench/synthetic.py's (random text from a 30-word vocabulary, random unit 512-d vectors),
built fast in SQLite and moved into PostgreSQL with `docassist db copy`'s code (COPY into
temporary tables, one transaction), so PostgreSQL holds exactly the rows `docassist index`
would have written. The first query after opening is timed apart (`load_s`: reading the
chunks and vectors from PostgreSQL and building the BM25 and dense indexes in process);
then QUERIES questions of six vocabulary words (the same kind as bench/run.py's) give
p50/p95. The machine's CPU busy share during the queries is reported beside them.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

import psycopg
from load import percentile
from synthetic import WORDS, SyntheticEmbedder, synthetic_store

from docassist.storage import Bm25Retriever
from docassist.storage.dense import DenseRetriever, HybridRetriever
from docassist.storage.postgres import PostgresStore

CHUNKS: Final = 100_000
QUERIES: Final = 200
TOP_K: Final = 5

CpuTimes = Callable[[], tuple[int, int]]


def pg_retrieval(new_database: Callable[[str, Path], str], folder: Path, cpu_times: CpuTimes,
                 chunks: int = CHUNKS, queries: int = QUERIES) -> dict[str, Any]:
    """`new_database(name, sqlite_template)` copies the template into a new PostgreSQL
    database and returns its URL (replicas.Postgres.database)."""
    path = folder / f"syn-{chunks}.db"
    began = time.perf_counter()
    synthetic_store(path, chunks).close()
    built = time.perf_counter() - began
    began = time.perf_counter()
    url = new_database(f"bench_retrieval_{chunks}", path)
    copied = time.perf_counter() - began
    path.unlink()
    with psycopg.connect(url) as check:  # what the retrievers will find there
        stored = [check.execute(query).fetchone()[0] for query in (  # type: ignore[index]
            "SELECT count(*) FROM chunks WHERE superseded_at IS NULL",
            "SELECT count(*) FROM embeddings")]
    store = PostgresStore(url)
    try:
        bm25 = Bm25Retriever(store)
        dense = DenseRetriever(store, SyntheticEmbedder())
        hybrid = HybridRetriever(bm25, dense)
        began = time.perf_counter()
        hybrid.search("warm up", TOP_K)
        load = time.perf_counter() - began
        rng = random.Random(3)
        questions = [" ".join(rng.choice(WORDS) for _ in range(6)) for _ in range(queries)]
        before = cpu_times()
        timings = []
        for question in questions:
            began = time.perf_counter()
            hybrid.search(question, TOP_K)
            timings.append((time.perf_counter() - began) * 1000)
        after = cpu_times()
        dense_kind = dense._matrix.kind
    finally:
        store.close()
    busy, total = after[0] - before[0], after[1] - before[1]
    return {"chunks": chunks, "chunks_in_postgres": stored[0], "vectors_in_postgres": stored[1],
            "queries": queries, "retriever": "hybrid (bm25 + dense)",
            "hybrid_ms_p50": round(statistics.median(timings), 1),
            "hybrid_ms_p95": round(percentile(timings, 0.95), 1),
            "load_s": round(load, 1), "dense_index": dense_kind,
            "cpu_busy": round(busy / total, 3) if total else 0.0,
            "build_sqlite_s": round(built, 1), "copy_to_postgres_s": round(copied, 1)}
