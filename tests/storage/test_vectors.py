"""Stored vector rows and the approximate index: exact and approximate search agree."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from docassist.evaluation.retrieval import load_retrieval_cases
from docassist.models.embedders import get_embedder
from docassist.storage import Bm25Retriever, Store
from docassist.storage.dense import DenseRetriever, HybridRetriever
from docassist.storage.vectors import (
    ExactIndex,
    IvfIndex,
    build_index,
    decode_vector,
    encode_vector,
)

CASES = Path(__file__).resolve().parents[2] / "samples" / "retrieval_dev.jsonl"


def test_a_row_is_int8_codes_and_a_scale_and_old_float_rows_still_read() -> None:
    vector = np.random.default_rng(1).standard_normal(512).astype(np.float32)
    vector /= np.linalg.norm(vector)
    blob = encode_vector(vector)
    assert len(blob) == 512 + 4
    step = float(np.abs(vector).max()) / 127
    assert np.abs(decode_vector(blob, 512) - vector).max() <= step / 2 + 1e-7
    assert np.array_equal(decode_vector(vector.tobytes(), 512), vector)  # rows written before
    assert not decode_vector(encode_vector(np.zeros(4)), 4).any()


def test_the_store_writes_int8_rows(store: Store) -> None:
    with sqlite3.connect(store.path) as connection:
        sizes = {length for (length,) in connection.execute(
            "SELECT length(vector) FROM embeddings")}
    assert sizes == {512 + 4}


def _clustered(count: int, topics: int, seed: int) -> np.ndarray:
    """Vectors around topic centres, as real embeddings are (random ones have no neighbours
    an index could group)."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((topics, 512)).astype(np.float32)
    vectors = centres[rng.integers(0, topics, count)] + 0.9 * rng.standard_normal(
        (count, 512)).astype(np.float32)
    unit: np.ndarray = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    return unit


def test_the_ivf_index_finds_what_exact_search_finds() -> None:
    vectors = _clustered(6000, 60, seed=2)
    stored = np.stack([decode_vector(encode_vector(row), 512) for row in vectors])
    approximate = build_index(stored, min_rows=1000)
    assert isinstance(approximate, IvfIndex) and approximate.lists > 1
    assert isinstance(build_index(stored, min_rows=10_000), ExactIndex)
    exact = ExactIndex(vectors)
    queries = _clustered(200, 60, seed=2)[:200]
    agreement = []
    for query in queries:
        found, scores = approximate.nearest(query, 10)
        truth, _ = exact.nearest(query, 10)
        agreement.append(len(set(found.tolist()) & set(truth.tolist())) / 10)
        assert list(scores) == sorted(scores, reverse=True)
        assert np.allclose(scores, vectors[found] @ query, atol=0.01)
    assert np.mean(agreement) >= 0.98


def test_the_index_holds_exactly_the_stored_rows_codes() -> None:
    """Built a block of rows at a time, the re-ranking codes are byte for byte the rows the
    store keeps (more rows than one block)."""
    vectors = _clustered(6000, 60, seed=5)
    vectors[17] = 0.0  # a zero vector keeps scale 1
    index = build_index(vectors, min_rows=1000)
    assert isinstance(index, IvfIndex)
    for row in range(len(vectors)):
        blob = index.codes[row].tobytes() + index.row_scales[row].tobytes()
        assert blob == encode_vector(vectors[row]), row


def test_exact_and_approximate_search_rank_the_demo_corpus_alike(store: Store) -> None:
    embedder = get_embedder("use")
    exact = DenseRetriever(store, embedder)
    approximate = DenseRetriever(store, embedder, ann_min_rows=0)
    questions = [case.question for case in load_retrieval_cases(
        CASES.read_text(encoding="utf-8").splitlines())]
    for question in questions:
        assert ([hit.chunk.chunk_id for hit in approximate.search(question, 5)]
                == [hit.chunk.chunk_id for hit in exact.search(question, 5)])
    assert isinstance(approximate._matrix, IvfIndex)
    assert isinstance(exact._matrix, ExactIndex)
    hybrid_exact = HybridRetriever(Bm25Retriever(store), exact)
    hybrid_approximate = HybridRetriever(Bm25Retriever(store), approximate)
    for question in questions[:20]:
        assert ([hit.chunk.chunk_id for hit in hybrid_approximate.search(question, 5)]
                == [hit.chunk.chunk_id for hit in hybrid_exact.search(question, 5)])


@pytest.mark.parametrize("count", [0, 3])
def test_nearest_on_tiny_corpora(count: int) -> None:
    vectors = _clustered(max(count, 1), 1, seed=4)[:count]
    for index in (ExactIndex(vectors), IvfIndex(vectors) if count else None):
        if index is None:
            continue
        rows, _ = index.nearest(_clustered(1, 1, seed=4)[0], 5)
        assert sorted(rows.tolist()) == list(range(count))


def test_the_warmer_rebuilds_both_indexes_before_a_question_asks(store: Store) -> None:
    from docassist.core.documents import parse_document
    from docassist.runtime import IndexWarmer
    from docassist_testkit.fakes.loopback import wait_until

    bm25, dense = Bm25Retriever(store), DenseRetriever(store, get_embedder("use"))
    warmer = IndexWarmer(store, [bm25, dense])
    warmer.start()
    try:
        assert wait_until(lambda: dense._snapshot.version == store.index_version()
                          and bm25.index().version == store.index_version(), seconds=30)
        other = Store(store.path)  # another process indexes a document
        other.replace_document(parse_document(
            "plants.md", "plants", "## Ficus\nWater the office ficus every Monday.\n"),
            "/tmp/plants.md")
        other.close()
        version = store.index_version()
        assert wait_until(lambda: dense._snapshot.version == version, seconds=30)
        assert "DOC-PLANTS" in dense._snapshot.documents  # built (and embedded) unasked
        assert bm25._index is not None and bm25._index.version == version
    finally:
        warmer.stopped.set()
        warmer.join(5)


def test_a_closed_store_says_so_with_its_own_error_and_the_warmer_ends_quietly(
        db_path: Path) -> None:
    from docassist.core.errors import StoreClosedError
    from docassist.runtime import IndexWarmer

    closed = Store(db_path)
    closed.close()
    with pytest.raises(StoreClosedError):
        closed.index_version()
    with pytest.raises(StoreClosedError):
        closed.documents()
    warmer = IndexWarmer(closed, [Bm25Retriever(closed)])
    warmer.start()
    warmer.join(5)
    assert not warmer.is_alive()  # it returned at once instead of retrying every poll
