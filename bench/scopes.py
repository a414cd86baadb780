"""What a scope costs a search: BM25, dense and hybrid unscoped, over every collection, and
restricted to one collection of ten (issue 22). Figures only; nothing is asserted.

    python bench/scopes.py [DOCUMENTS]      # default 2000 documents × 5 sections

A synthetic corpus (words drawn from a fixed vocabulary) is indexed into a temporary
database, one collection per tenth of the documents; dense uses a deterministic hashing
embedder (64 dimensions, no model: this measures the ranking, not an embedder).
"""

from __future__ import annotations

import hashlib
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import numpy.typing as npt

from docassist.core.scopes import EVERYTHING, Scope
from docassist.storage import Bm25Retriever, Store, index_paths
from docassist.storage.dense import DenseRetriever, HybridRetriever

SECTIONS = 5
COLLECTIONS = 10
QUERIES = 200
WORDS = [f"w{index:04d}" for index in range(3000)]


class HashEmbedder:
    """Deterministic vectors from word hashes (a bag of hashed words, normalised)."""

    name = "bench-hash"
    dimensions = 64

    def _rows(self, texts: list[str]) -> npt.NDArray[np.float32]:
        rows = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.split():
                digest = hashlib.blake2b(word.encode(), digest_size=4).digest()
                rows[row, int.from_bytes(digest, "little") % self.dimensions] += 1.0
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        return np.asarray(rows / np.where(norms == 0, 1, norms), dtype=np.float32)

    def embed_queries(self, texts: list[str]) -> npt.NDArray[np.float32]:
        return self._rows(texts)

    def embed_passages(self, texts: list[str]) -> npt.NDArray[np.float32]:
        return self._rows(texts)


def build(folder: Path, documents: int, rng: random.Random) -> Store:
    store = Store(folder / "bench.db")
    for collection in range(COLLECTIONS):
        part = folder / f"c{collection}"
        part.mkdir()
        for number in range(collection, documents, COLLECTIONS):
            body = "\n\n".join(f"## Section {s}\n\n" + " ".join(rng.choices(WORDS, k=60))
                               for s in range(SECTIONS))
            (part / f"doc{number}.md").write_text(f"# Document {number}\n\n{body}\n")
        index_paths(store, [part], collection=f"c{collection}")
    return store


def timed(search: object, queries: list[str]) -> float:
    """Median ms of a second pass (the first fills BM25's term cache)."""
    for query in queries:
        search(query)  # type: ignore[operator]
    durations = []
    for query in queries:
        began = time.perf_counter()
        search(query)  # type: ignore[operator]
        durations.append((time.perf_counter() - began) * 1000)
    return statistics.median(durations)


def main() -> None:
    documents = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    rng = random.Random(0)
    with tempfile.TemporaryDirectory() as folder:
        store = build(Path(folder), documents, rng)
        bm25 = Bm25Retriever(store)
        dense = DenseRetriever(store, HashEmbedder())
        hybrid = HybridRetriever(bm25, dense)
        queries = [" ".join(rng.choices(WORDS, k=6)) for _ in range(QUERIES)]
        every = Scope(frozenset(f"c{c}" for c in range(COLLECTIONS)))
        one = Scope(frozenset({"c3"}))
        for retriever in (bm25, dense, hybrid):
            retriever.search(queries[0], 5)  # build the in-memory indexes first
        print(f"{documents * SECTIONS} chunks in {COLLECTIONS} collections; median ms "
              f"over {QUERIES} queries, top 5")
        for name, retriever in (("bm25", bm25), ("dense", dense), ("hybrid", hybrid)):
            plain = timed(lambda q, r=retriever: r.search_in(q, 5, EVERYTHING), queries)
            all_named = timed(lambda q, r=retriever: r.search_in(q, 5, every), queries)
            narrow = timed(lambda q, r=retriever: r.search_in(q, 5, one), queries)
            print(f"{name:7} unscoped {plain:6.2f}  every collection named {all_named:6.2f}  "
                  f"one of ten {narrow:6.2f}")
        store.close()


if __name__ == "__main__":
    main()
