"""Fusion of rankings (storage.fusion) and the morphology the BM25 side matches with."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from docassist.core.documents import parse_document
from docassist.models.embedders import get_embedder
from docassist.storage import Bm25Retriever, Store
from docassist.storage.dense import DenseRetriever, HybridRetriever
from docassist.storage.fusion import Vote, comb_mnz, weighted_rrf, z_scores
from docassist.storage.limits import DENSE_SIMILARITY_THRESHOLD
from docassist.storage.search import query_phrases


def test_flat_or_lone_scores_prefer_nothing() -> None:
    assert z_scores([0.5, 0.5, 0.5]) == [0.0, 0.0, 0.0]
    assert z_scores([3.0]) == [0.0]
    assert z_scores([]) == []
    assert z_scores([3.0, 1.0]) == pytest.approx([1.0, -1.0])


def test_z_scores_match_the_population_deviation() -> None:
    scores = [12.5, 9.75, 9.75, 3.2, 0.0, 0.0, 0.0, 1e-9]
    mean, spread = statistics.fmean(scores), statistics.pstdev(scores)
    assert z_scores(scores) == pytest.approx([(s - mean) / spread for s in scores], rel=1e-12)


def test_agreement_counts_and_sureness_beats_rank() -> None:
    dense = [("a", 0.50), ("b", 0.49), ("c", 0.48), ("d", 0.10)]
    lexical = [("c", 9.0), ("e", 1.0), ("f", 1.0), ("g", 1.0)]
    # c: dense's third by a hair, BM25's first by far, found by both: first after fusion.
    assert comb_mnz([Vote(1.0, dense), Vote(1.0, lexical)])[0] == "c"
    # a: dense's first by far; BM25 puts c first by a hair and a fourth among near-ties. Ranks
    # cannot tell a clear winner from a near-tie, scores can.
    dense = [("a", 0.60), ("c", 0.30), ("b", 0.29), ("d", 0.28), ("e", 0.27), ("f", 0.26)]
    lexical = [("c", 5.0), ("g", 4.99), ("h", 4.98), ("a", 4.97), ("i", 4.96), ("j", 1.0),
               ("k", 1.0), ("l", 1.0)]
    assert comb_mnz([Vote(1.0, dense), Vote(1.0, lexical)])[0] == "a"
    assert weighted_rrf([Vote(1.0, dense), Vote(1.0, lexical)], 60)[0] == "c"


def test_a_vote_of_weight_zero_changes_nothing() -> None:
    dense = [("a", 0.5), ("b", 0.4), ("c", 0.1)]
    assert comb_mnz([Vote(1.0, dense), Vote(0.0, [("c", 5.0), ("b", 1.0)])]) == ["a", "b", "c"]


def test_a_hit_few_chunks_share_stands_out_within_its_depth() -> None:
    """BM25 returns only chunks holding a query word; the rest of its depth scores 0, so a
    word only one chunk holds makes that chunk stand far out (a rare term keeps its weight)."""
    dense = [("a", 0.41), ("b", 0.28), ("r", 0.23), ("c", 0.20), ("d", 0.13)]
    lexical = [("r", 2.1)]
    assert comb_mnz([Vote(1.0, dense), Vote(1 / 3, lexical)])[0] == "a"  # unknown rest: no say
    assert comb_mnz([Vote(1.0, dense), Vote(1 / 3, lexical, depth=20)])[0] == "r"


def test_no_hybrid_hit_passes_the_threshold_dense_would_refuse(store: Store) -> None:
    """The hybrid's score is the hit's cosine, never above dense's best: the fusion cannot let
    an off-topic question through."""
    dense = DenseRetriever(store, get_embedder("use"))
    hybrid = HybridRetriever(Bm25Retriever(store), dense)
    for question in ("What is the capital of Australia?", "Przepis na szarlotkę z kruszonką",
                     "Kto napisał Pana Tadeusza?", "restart the moon base"):
        best = dense.search(question, 1)[0].score
        assert best < DENSE_SIMILARITY_THRESHOLD
        assert all(hit.score <= best for hit in hybrid.search(question, 5))


def test_polish_forms_the_stemmer_keeps_apart_match_by_prefix(tmp_path: Path) -> None:
    store = Store(tmp_path / "x.db")
    store.replace_document(parse_document(
        "codes.md", "codes", "## Komunikaty\nKomunikaty serwera opisuje ta strona.\n"),
        "/d/codes.md")
    store.replace_document(parse_document(
        "other.md", "other", "## Kopie\nKopie zapasowe robimy co noc.\n"), "/d/other.md")
    question = "Gdzie jest opis komunikatów?"
    # Snowball's Polish stems of the folded forms differ ('komunikatow' / 'komunikat',
    # 'opis' / 'opisuj'): by stems alone no page matches; by prefix the right one does.
    assert Bm25Retriever(store, match="stem").search(question, 3) == []
    [hit] = Bm25Retriever(store).search(question, 3)
    assert hit.document.document_id == "DOC-CODES"
    assert hit.score == 0.0  # its score (coverage) still counts stems: no stem is there
    store.close()


def test_cyrillic_words_match_by_stem_only() -> None:
    phrases = query_phrases("где логи сервера nginx", "stem+prefix")
    assert [phrase.match for phrase in phrases] == ["stem", "stem", "stem", "stem", "prefix"]

