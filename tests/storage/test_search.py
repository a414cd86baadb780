"""The in-memory BM25 index against FTS5 itself: same tokens, same scores, same ranking."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from docassist.core.documents import parse_document
from docassist.evaluation.retrieval import load_retrieval_cases
from docassist.storage import Bm25Retriever, Store
from docassist.storage.database import FTS_COLUMN_WEIGHTS
from docassist.storage.ranking import best_positions, best_positive_positions
from docassist.storage.search import Match, fts_query, query_phrases
from tests.conftest import REPO

QUESTIONS = [case.question for case in load_retrieval_cases(
    (REPO / "samples" / "retrieval_dev.jsonl").read_text(encoding="utf-8").splitlines())]

ODD_TEXT = """## Znaki_i liczby
Zażółć gęślą jaźń; Straße, ŁÓDŹ, naïve café, øre, ı, Ελληνικά, 東京, x² 3.14 v1_2
snake_case_name, docassist-api, e-mail, TLS-Zertifikat; ½ ⅓ ①; emoji 🙂 tab\there.
ab\u19b0cd: a letter to Python, a separator to SQLite's Unicode tables.
"""


@pytest.fixture
def odd_store(store: Store) -> Store:
    """The demo corpus plus a document of characters a tokenizer could disagree on."""
    store.replace_document(parse_document("odd.md", "odd", ODD_TEXT), "/tmp/odd.md")
    return store


def test_the_index_holds_exactly_what_fts5_indexed(odd_store: Store) -> None:
    index = Bm25Retriever(odd_store).index()
    odd_store.db.execute(
        "CREATE VIRTUAL TABLE temp.fts_instances USING fts5vocab(main, chunks_fts, instance)")
    expected: dict[tuple[str, int], float] = defaultdict(float)
    for term, rowid, column, _offset in odd_store.db.execute(
            "SELECT term, doc, col, offset FROM temp.fts_instances"):
        weight = FTS_COLUMN_WEIGHTS[["chunk_id", "title", "section", "body"].index(column)]
        expected[term, rowid] += weight
    ours: dict[tuple[str, int], float] = {}
    for position, token in enumerate(index.tokens):
        start, end = int(index.offsets[position]), int(index.offsets[position + 1])
        for row, frequency in zip(index.posting_rows[start:end],
                                  index.posting_frequencies[start:end], strict=True):
            ours[token, int(index.rowids[row])] = float(frequency)
    assert ours == dict(expected)


@pytest.mark.parametrize("prefix", [True, False])
def test_scores_and_ranking_are_fts5s(odd_store: Store, prefix: bool) -> None:
    # Prefixes and exact words are what FTS5 can express; stems are tested by their matches.
    match: Match = "prefix" if prefix else "exact"
    retriever = Bm25Retriever(odd_store, match=match)
    index = retriever.index()
    for question in [*QUESTIONS, "Straße naïve øre x²", "snake_case_name", "e-mail ①",
                     "ab\u19b0cd", "abcde\u19b0c"]:
        expression = fts_query(question, match)
        assert expression is not None
        expected = odd_store.fts_scores(expression)
        scores = index.scores(query_phrases(question, match), odd_store)
        by_rowid = dict(zip(index.rowids.tolist(), scores.tolist(), strict=True))
        assert {rowid for rowid, score in by_rowid.items() if score > 0} == {
            rowid for rowid, _ in expected}, question
        for rowid, value in expected:
            assert by_rowid[rowid] == pytest.approx(-value, rel=1e-12), question
        ranked = [chunk.chunk_id for chunk, _document, _rank
                  in odd_store.search_fts(expression, 20)]
        assert [hit.chunk.chunk_id for hit in retriever.search(question, 20)] == ranked, question


@pytest.mark.parametrize("match", ["prefix", "exact"])
def test_common_words_kept_as_whole_arrays_score_as_fts5_does(tmp_path: Path,
                                                               match: Match) -> None:
    """A word in most chunks is kept as one score per row (storage.term_scores), a rare one
    as postings: FTS5's numbers either way, summed in the same order."""
    store = Store(tmp_path / "x.db")
    for number in range(40):
        words = ["backup"] * (1 + number % 3) + ["restore"] * (number % 2) + (
            ["kettle"] if number == 7 else [])
        store.replace_document(parse_document(f"d{number}.md", f"d{number}",
                                              f"## Part {number}\n{' '.join(words)} done.\n"),
                               f"/tmp/d{number}.md")
    retriever = Bm25Retriever(store, match=match)
    index = retriever.index()
    for question in ["backup", "backup restore", "restore kettle backup", "kettle"]:
        expression = fts_query(question, match)
        assert expression is not None
        scores = index.scores(query_phrases(question, match), store)
        by_rowid = dict(zip(index.rowids.tolist(), scores.tolist(), strict=True))
        expected = store.fts_scores(expression)
        assert {rowid for rowid, score in by_rowid.items() if score > 0} == {
            rowid for rowid, _ in expected}, question
        for rowid, value in expected:
            assert by_rowid[rowid] == pytest.approx(-value, rel=1e-12), question
    kept = [index.term_cache.get((index.tokens.index(word),)) for word in ("backup", "kettle")]
    assert kept[0] is not None and kept[0].whole is not None  # in every row: a whole array
    assert kept[1] is not None and kept[1].whole is None and len(kept[1].rows) == 1
    store.close()


def test_the_index_follows_the_index_version(tmp_path: Path) -> None:
    store = Store(tmp_path / "x.db")
    retriever = Bm25Retriever(store)
    assert retriever.search("kettle", 3) == []  # an empty index
    store.replace_document(parse_document("k.md", "k", "## Kettle\nDescale the kettle.\n"),
                           "/tmp/k.md")
    [hit] = retriever.search("kettle", 3)
    assert hit.document.document_id == "DOC-K" and hit.score == 1.0
    index = retriever.index()
    assert retriever.index() is index  # not rebuilt per query
    other = Store(store.path)  # another process indexes
    other.replace_document(parse_document("k.md", "k", "## Teapot\nWarm the teapot.\n"),
                           "/tmp/k.md")
    other.close()
    assert retriever.search("kettle", 3) == []
    assert retriever.search("teapot", 3)[0].document.document_id == "DOC-K"
    assert retriever.index() is not index
    store.close()


def test_best_positions_is_a_stable_sort_cut_short() -> None:
    rng = np.random.default_rng(1)
    scores = rng.integers(0, 5, 200).astype(np.float32)  # many ties
    stable = [int(i) for i in np.argsort(-scores, kind="stable")]
    for count in (0, 1, 7, 50, 200, 300):
        assert best_positions(scores, count) == stable[:count]
    positive = np.flatnonzero(scores > 0)
    assert best_positions(scores, 500, among=positive) == [i for i in stable if scores[i] > 0]
    assert best_positions(np.zeros(0), 3) == []


def test_best_positive_positions_are_best_positions_of_the_positive_scores() -> None:
    """The sampled cut only shortens the race: same positions, same order, ties included,
    whatever share of the scores is positive (all, some, fewer than asked, none)."""
    rng = np.random.default_rng(2)
    for size, positive_share in [(5000, 1.0), (5000, 0.9), (5000, 0.001), (300, 0.5), (40, 0.0)]:
        scores = rng.integers(1, 6, size).astype(np.float64)  # many ties
        scores[rng.random(size) >= positive_share] = 0.0
        scores[:: 97] *= -1  # negative scores never win either
        positive = np.flatnonzero(scores > 0)
        for count in (0, 1, 5, 20, 200):
            assert best_positive_positions(scores, count) == best_positions(
                scores, count, among=positive), (size, positive_share, count)


def test_a_chunk_of_punctuation_matches_nothing(tmp_path: Path) -> None:
    store = Store(tmp_path / "x.db")
    store.replace_document(parse_document("p.md", "p", "## !!!\n... --- ???\n"), "/tmp/p.md")
    retriever = Bm25Retriever(store)
    assert retriever.search("anything at all", 3) == []
    assert not np.isnan(retriever.index().length_norm).any()
    store.close()


def test_words_match_other_forms_of_the_same_word(tmp_path: Path) -> None:
    """Stems, not five-letter prefixes: inflected Polish, Russian and English forms find the
    page, and words that only share a prefix do not."""
    store = Store(tmp_path / "x.db")
    pages = {"pl": "## Zmiana konfiguracji\nPo zmianie konfiguracji uruchom usługę ponownie.\n",
             "ru": "## Настройки\nФайлы настройки пользователя лежат в домашнем каталоге.\n",
             "en": "## Installing\nThe installer configures libraries automatically.\n",
             "xx": "## Konfetti\nKonfetti and configurable widgets.\n"}
    for name, text in pages.items():
        store.replace_document(parse_document(f"{name}.md", name, text), f"/tmp/{name}.md")
    retriever = Bm25Retriever(store)
    for question, expected in [("konfiguracja zmiany", "DOC-PL"), ("файл пользователей", "DOC-RU"),
                               ("installing configured libraries", "DOC-EN")]:
        hits = retriever.search(question, 5)
        assert hits[0].document.document_id == expected, question
        assert hits[0].score == 1.0, question  # every word of the question found, in other forms
    assert [h.document.document_id for h in retriever.search("konfiguracja", 5)] == ["DOC-PL"]
    store.close()
