"""Chunk sizes against retrieval quality on long documents.

    python bench/chunk_sizes.py samples/public/python_howto_retrieval.jsonl --docs DIR

For each (target, overlap) the documents are indexed anew and embedded; prints chunk count,
recall@1/5 and MRR of bm25, dense and hybrid. Figures only.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from docassist.core.documents import ChunkSizes
from docassist.core.ports import Retriever
from docassist.evaluation.retrieval import evaluate_retrieval, load_retrieval_cases
from docassist.models.embedders import get_embedder
from docassist.storage import Bm25Retriever, Store, index_paths
from docassist.storage.dense import DenseRetriever, HybridRetriever, embed_missing

SIZES = ((600, 100), (1000, 0), (1000, 200), (1600, 300))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("cases", type=Path)
    parser.add_argument("--docs", type=Path, required=True)
    args = parser.parse_args()
    cases = load_retrieval_cases(args.cases.read_text(encoding="utf-8").splitlines())
    embedder = get_embedder("use")
    print(f"{'target':>6} {'overlap':>7} {'chunks':>6} {'embed s':>7}  "
          f"{'bm25 r@1/r@5/MRR':>18}  {'dense':>18}  {'hybrid':>18}")
    for target, overlap in SIZES:
        sizes = ChunkSizes(max_chars=int(target * 1.5), target_chars=target,
                           overlap_chars=overlap)
        with tempfile.TemporaryDirectory() as folder:
            store = Store(Path(folder) / "bench.db")
            index_paths(store, [args.docs], sizes=sizes)
            started = time.perf_counter()
            embed_missing(store, embedder)
            embed_seconds = time.perf_counter() - started
            bm25 = Bm25Retriever(store)
            dense = DenseRetriever(store, embedder)
            retrievers: dict[str, Retriever] = {
                "bm25": bm25, "dense": dense, "hybrid": HybridRetriever(bm25, dense)}
            report = evaluate_retrieval(cases, retrievers, "hybrid")
            cells = [f"{s.recall_at_1:.3f}/{s.recall_at_5:.3f}/{s.mrr:.3f}"
                     for s in report.retrievers.values()]
            print(f"{target:6} {overlap:7} {len(store.current_chunks()):6} "
                  f"{embed_seconds:7.1f}  {cells[0]:>18}  {cells[1]:>18}  {cells[2]:>18}")
            store.close()


if __name__ == "__main__":
    main()
