"""How long a replica takes to load the search rows of a PostgreSQL catalog: the in-memory
FTS5 mirror (storage/postgres/fts_mirror.py), the BM25 index built from it, and the
incremental catch-up after another replica adds one row.

    python bench/pg_mirror.py [--rows 50000]

Synthetic rows (120 words of a 20,000-word vocabulary) written straight into `chunks_fts`
of a throwaway cluster (docassist_testkit.pg). Figures only.
"""

from __future__ import annotations

import argparse
import random
import time

from docassist.storage.postgres import PostgresStore
from docassist.storage.search import Bm25Retriever
from docassist_testkit.pg import start_cluster


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=50_000)
    args = parser.parse_args()
    cluster = start_cluster()
    try:
        store = PostgresStore(cluster.url())
        words = [f"w{i}" for i in range(20_000)]
        chosen = random.Random(1)
        with store._transaction() as connection, connection.cursor().copy(
                "COPY chunks_fts (chunk_id, title, section, body) FROM STDIN") as copy:
            for row in range(args.rows):
                copy.write_row([f"C-{row}", "title words", "section",
                                " ".join(chosen.choices(words, k=120))])
        store.set_meta_value("index_version", "1")
        started = time.perf_counter()
        store.fts_rows(0, 1)  # syncs the mirror
        print(f"mirror of {args.rows} rows: {time.perf_counter() - started:.2f} s")
        started = time.perf_counter()
        Bm25Retriever(store).index()
        print(f"BM25 index built from it: {time.perf_counter() - started:.2f} s")
        with store._transaction() as connection:
            connection.execute("INSERT INTO chunks_fts (chunk_id, title, section, body) "
                               "VALUES ('X', 't', 's', 'w1 w2')")
        store.set_meta_value("index_version", "2")
        started = time.perf_counter()
        store.fts_rows(0, 1)
        print(f"catching up one new row: {time.perf_counter() - started:.3f} s")
        store.close()
    finally:
        cluster.stop("immediate")


if __name__ == "__main__":
    main()
