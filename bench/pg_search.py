"""Search on PostgreSQL: PostgreSQL's full text (tsvector, storage/postgres/fulltext.py) vs
the in-process index built from PostgreSQL's rows (the BM25 + dense index SQLite uses), on
the same labelled sets, beside the same retrievers on SQLite.

    python bench/pg_search.py [--pg postgresql://USER@HOST:PORT/postgres] [--heldout .heldout]

The demo set (samples/retrieval_dev.jsonl over samples/docs) always; each held-out set whose
SQLite database `scripts/eval-heldout` (or `docassist index`) built in --heldout (its test
split, corpora from CORPORA, default /work/evalsets/corpora). Every SQLite database is copied
into a new PostgreSQL database with `db copy`'s code, so both stores hold the same rows and
vectors. Without --pg a throwaway cluster is started (docassist_testkit.pg). Figures only.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path

import psycopg

from docassist.core.ports import Retriever
from docassist.evaluation.retrieval import (
    RetrievalCase,
    evaluate_retrieval,
    load_retrieval_cases,
    with_documents_by_path,
)
from docassist.models.embedders import get_embedder
from docassist.storage import Bm25Retriever, Store, index_paths
from docassist.storage.dense import DenseRetriever, HybridRetriever, embed_missing
from docassist.storage.postgres import PostgresStore
from docassist.storage.postgres.copy import copy_sqlite_to_postgres
from docassist.storage.postgres.fulltext import PgFullTextRetriever, prepare
from docassist.storage.roles import Storage

REPO = Path(__file__).resolve().parents[1]
SETS = REPO / "samples" / "public" / "heldout"


def retrievers(store: Storage) -> dict[str, Retriever]:
    dense = DenseRetriever(store, get_embedder("use"))
    bm25 = Bm25Retriever(store)
    found: dict[str, Retriever] = {"bm25 (in-process)": bm25,
                                   "hybrid (in-process bm25 + dense)": HybridRetriever(bm25, dense)}
    if isinstance(store, PostgresStore):
        prepare(store)
        fulltext = PgFullTextRetriever(store)
        found["pg full text"] = fulltext
        found["hybrid (pg full text + dense)"] = HybridRetriever(fulltext, dense)
    return found


def measure(label: str, store: Storage, cases: list[RetrievalCase]) -> None:
    for name, retriever in retrievers(store).items():
        retriever.search("warm-up", 1)
        started = time.perf_counter()
        report = evaluate_retrieval(cases, {name: retriever}, name)
        per_query = (time.perf_counter() - started) / len(cases) * 1000
        s = report.retrievers[name]
        print(f"| {label} | {name} | {s.recall_at_1:.3f} | {s.recall_at_5:.3f} | {s.mrr:.3f} "
              f"| {per_query:.1f} |", flush=True)


def ids_by_path(store: Storage, root: Path | None) -> dict[str, str]:
    if root is None:
        return {}
    base = root.resolve()
    return {Path(d.source_path).relative_to(base).as_posix(): d.document_id
            for d in store.documents() if Path(d.source_path).is_relative_to(base)}


def on_both(label: str, sqlite_path: Path, cases_file: Path, root: Path | None,
            split: str | None, admin_url: str) -> None:
    cases = load_retrieval_cases(cases_file.read_text(encoding="utf-8").splitlines())
    if split:
        cases = [case for case in cases if case.split == split]
    lite = Store(sqlite_path)
    cases = with_documents_by_path(cases, ids_by_path(lite, root))
    name = f"bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    pg = PostgresStore(admin_url.rsplit("/", 1)[0] + f"/{name}")
    try:
        copy_sqlite_to_postgres(lite, pg)
        print(f"{label}: {len(cases)} questions, {len(lite.current_chunks())} chunks",
              file=sys.stderr)
        measure(f"{label} · SQLite", lite, cases)
        measure(f"{label} · PostgreSQL", pg, cases)
    finally:
        lite.close()
        pg.close()
        with psycopg.connect(admin_url, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pg", help="an admin URL (CREATE DATABASE) of a PostgreSQL server")
    parser.add_argument("--heldout", type=Path, default=REPO / ".heldout")
    args = parser.parse_args()
    cluster = None
    admin_url = args.pg
    if admin_url is None:
        from docassist_testkit.pg import start_cluster

        cluster = start_cluster()
        admin_url = cluster.url()
    corpora = Path(os.environ.get("CORPORA", "/work/evalsets/corpora"))
    print("| set · store | retriever | recall@1 | recall@5 | MRR | ms/query |")
    print("|---|---|---|---|---|---|")
    try:
        with tempfile.TemporaryDirectory() as folder:
            demo = Path(folder) / "demo.db"
            store = Store(demo)
            index_paths(store, [REPO / "samples" / "docs"])
            embed_missing(store, get_embedder("use"))
            store.close()
            on_both("demo", demo, REPO / "samples" / "retrieval_dev.jsonl", None, None,
                    admin_url)
        for name in ("man-l10n", "man-crossling", "python-docs"):
            database = args.heldout / f"{name}.db"
            if database.is_file():
                on_both(name, database, SETS / f"{name}.jsonl", corpora / name, "test",
                        admin_url)
    finally:
        if cluster is not None:
            cluster.stop("immediate")


if __name__ == "__main__":
    main()
