"""A question embedded twice in a turn (search, then gaps) is encoded once; the vectors are
the embedder's own."""

from __future__ import annotations

import numpy as np

from docassist.models.embedders import RecentQueries, Vectors, get_embedder
from docassist.models.limits import QUERY_CACHE_ENTRIES


class CountingEncoder:
    """A stand-in encoder (not ours: the model) that records what it was asked."""

    def __init__(self) -> None:
        self.asked: list[list[str]] = []

    def __call__(self, texts: list[str]) -> Vectors:
        self.asked.append(list(texts))
        return np.array([[float(len(text)), float(sum(map(ord, text)))] for text in texts],
                        dtype=np.float32)


def test_a_repeated_question_is_encoded_once_and_gets_the_same_vector() -> None:
    encoder = CountingEncoder()
    recent = RecentQueries(encoder)
    first = recent.embed(["jak odnowić certyfikat?", "backup"], 2)
    again = recent.embed(["backup", "jak odnowić certyfikat?", "nowe"], 2)
    assert encoder.asked == [["jak odnowić certyfikat?", "backup"], ["nowe"]]
    assert np.array_equal(again[0], first[1]) and np.array_equal(again[1], first[0])
    assert recent.embed([], 2).shape == (0, 2)


def test_only_the_most_recent_questions_are_kept() -> None:
    encoder = CountingEncoder()
    recent = RecentQueries(encoder)
    for number in range(QUERY_CACHE_ENTRIES + 1):
        recent.embed([f"q{number}"], 2)
    recent.embed(["q1"], 2)  # still kept
    recent.embed(["q0"], 2)  # the oldest was dropped: encoded again
    assert encoder.asked[-1] == ["q0"] and ["q1"] not in encoder.asked[QUERY_CACHE_ENTRIES + 1:]


def test_the_real_embedder_gives_the_same_vectors_from_its_cache() -> None:
    embedder = get_embedder("use")
    texts = ["Jak odnowić certyfikat TLS?", "How do I restore a backup?"]
    fresh = embedder.embed_passages(texts)  # passages are never cached: the model itself
    assert np.allclose(embedder.embed_queries(texts), fresh, atol=1e-6)
    assert np.allclose(embedder.embed_queries(texts[::-1]), fresh[::-1], atol=1e-6)
