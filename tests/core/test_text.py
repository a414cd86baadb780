"""Word folding: the fast path must mean exactly what the definition says. Stems: the C
stemmers (PyStemmer) give exactly the pure-Python Snowball stems an index may have been built
with."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import snowballstemmer  # type: ignore[import-untyped]
import Stemmer  # type: ignore[import-not-found]
from hypothesis import given
from hypothesis import strategies as st
from snowballstemmer.english_stemmer import EnglishStemmer  # type: ignore[import-untyped]
from snowballstemmer.polish_stemmer import PolishStemmer  # type: ignore[import-untyped]
from snowballstemmer.russian_stemmer import RussianStemmer  # type: ignore[import-untyped]

from docassist.core.text import fold, is_cyrillic, stem, terms

REPO = Path(__file__).resolve().parents[2]
VOCABULARY_SOURCES = (*sorted((REPO / "samples" / "docs").iterdir()),
                      *sorted((REPO / "src" / "docassist" / "core").glob("glossary_*.tsv")),
                      REPO / "samples" / "train" / "ranker_questions.jsonl")
"""The demo corpus, the glossaries and the ranker's training questions: English and Polish
words, about 17,000 distinct."""
RUSSIAN = "Настройка конфигурации, перезапуск сервиса и проверка ошибок в журналах"


def folded_by_definition(text: str) -> str:
    """Case-folded, `ł` as `l`, compatibility-decomposed, `и` + breve as `й`, every other
    combining mark dropped."""
    decomposed = unicodedata.normalize("NFKD", text.casefold().replace("ł", "l"))
    decomposed = decomposed.replace("и\u0306", "й")
    return "".join(char for char in decomposed if not unicodedata.combining(char))


@given(st.text(max_size=200))
def test_fold_is_its_definition_for_any_text(text: str) -> None:
    assert fold(text) == folded_by_definition(text)


def test_fold_examples() -> None:
    assert fold("Zażółć GĘŚLĄ jaźń") == "zazolc gesla jazn"
    assert fold("Straße ﬁ") == "strasse fi"
    assert fold("e\u0301\U0001d165x") == "ex"  # marks outside the basic plane too
    assert fold("Restart docassist-API") == "restart docassist-api"
    assert fold("Настройка ЙОД ёлка") == "настройка йод елка"


def stemmed_in_pure_python(term: str) -> str:
    """`stem` as snowballstemmer's own Python stemmers give it (what it ran before the C
    stemmers were a dependency)."""
    if "-" in term:
        return term
    if is_cyrillic(term):
        return str(RussianStemmer().stemWord(term))
    if term.isascii():
        return str(EnglishStemmer().stemWord(PolishStemmer().stemWord(term)))
    return term


def test_the_c_stemmers_run_and_give_the_pure_python_stems() -> None:
    """The index keys words by stem, so an index built before the C stemmers were installed
    (or where they are missing) must key them the same: no re-index."""
    assert snowballstemmer.stemmer is Stemmer.Stemmer
    vocabulary = sorted({term for path in VOCABULARY_SOURCES
                         for term in terms(path.read_text(encoding="utf-8"))} | set(terms(RUSSIAN)))
    assert len(vocabulary) > 10_000
    assert [stem(term) for term in vocabulary] == [
        stemmed_in_pure_python(term) for term in vocabulary]
