"""Word handling shared by search and extractive answers: terms, stems, sentences."""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Callable
from functools import lru_cache
from typing import Final

import snowballstemmer  # type: ignore[import-untyped]

STEM_CHARS: Final = 5
"""The old stem: the first five letters (kept to measure against, bench/retrieval.py)."""
STEM_CACHE_WORDS: Final = 200_000
"""Distinct words whose stems are remembered (an index's vocabulary is stemmed once)."""

_TERM: Final = re.compile(r"[^\W_]+(?:-[^\W_]+)*", re.UNICODE)
_SENTENCE_END: Final = re.compile(
    r"(?<=[.!?])\s+(?=[A-ZĄĆĘŁŃÓŚŹŻ`\"„(\d-])|\n\s*\n|\n(?=\s*(?:[-*•]|\d+[.)])\s)"
)
_STOPWORDS: Final = (
    """a an the and or but if then so of in on at to for with from by about into is are was were
    be been being do does did how what when where which who why can could should would will may i
    you we it its this that these those my our your me us there here not no yes please after
    before up out as than too very just also any all some each
    a i o u w we z ze na do od po za przy dla pod nad przed jak jaki jaka jakie co czy gdy kiedy
    gdzie kto który która które jest są być był była było się sie nie tak to ten ta te tej tego
    jej jego ich mnie mi mój moja moje oraz lub albo ale że ze aby żeby czego czym tym""".split()
)


_NON_ASCII: Final = re.compile(r"[^\x00-\x7f]")


def fold(text: str) -> str:
    """Lower case without diacritics (`ł` → `l`), so `zrobic` matches `zrobić`. Russian `й`
    stays: it is a letter of its own, and its endings (`-ей`, `-ий`) are what the Russian
    stemmer removes."""
    if text.isascii():
        return text.lower()  # the common case, where casefold and NFKD change nothing more
    decomposed = unicodedata.normalize("NFKD", text.casefold().replace("ł", "l"))
    decomposed = decomposed.replace("\u0438\u0306", "\u0439")  # и + breve → й
    # The few distinct combining marks are removed by one regex in C: a character-by-character
    # filter in Python cost most of the lexical coverage score (bench/run.py).
    marks = sorted(c for c in set(_NON_ASCII.findall(decomposed)) if unicodedata.combining(c))
    if not marks:
        return decomposed
    return re.sub("[" + "".join(map(re.escape, marks)) + "]", "", decomposed)


STOPWORDS: Final = frozenset(fold(word) for word in _STOPWORDS)
"""Folded, like the words they are compared with (`który` is dropped as `ktory`)."""


def terms(text: str) -> list[str]:
    """Content words of `text`, folded, stopwords removed, in order."""
    return [word for word in _TERM.findall(fold(text)) if word not in STOPWORDS and len(word) > 1]


_CYRILLIC: Final = re.compile("[\u0400-\u04ff]")
_SNOWBALL_LOCK: Final = threading.Lock()  # a Snowball stemmer object keeps state per call
_ENGLISH: Final = snowballstemmer.stemmer("english")
_POLISH: Final = snowballstemmer.stemmer("polish")
_RUSSIAN: Final = snowballstemmer.stemmer("russian")


def is_cyrillic(term: str) -> bool:
    return _CYRILLIC.search(term) is not None


@lru_cache(maxsize=STEM_CACHE_WORDS)
def stem(term: str) -> str:
    """A folded word's stem (Snowball: Russian for Cyrillic; Polish, then English, for Latin
    letters: one key for both, since a page and a question need not say which language they
    are in). Hyphenated names stay whole. Chosen by the numbers in docs/retrieval.md."""
    if "-" in term:
        return term
    if _CYRILLIC.search(term):
        with _SNOWBALL_LOCK:
            return str(_RUSSIAN.stemWord(term))
    if term.isascii():
        with _SNOWBALL_LOCK:
            return str(_ENGLISH.stemWord(_POLISH.stemWord(term)))
    return term


def prefix_stem(term: str) -> str:
    """The old stem, five letters (bench/retrieval.py measures it against `stem`)."""
    return term if "-" in term else term[:STEM_CHARS]


Stemmer = Callable[[str], str]


def stems(text: str, stemmer: Stemmer = stem) -> set[str]:
    return {stemmer(term) for term in terms(text)}


_ABBREVIATION: Final = re.compile(r"\b(?:np|e\.g|i\.e|itp|itd|tzn|tj|m\.in|ok|etc|vs|nr|ul)\.$",
                                  re.IGNORECASE)


def sentences(text: str) -> list[str]:
    """Sentences and list items; "np." or "e.g." does not end a sentence."""
    result: list[str] = []
    for raw in _SENTENCE_END.split(text):
        part = " ".join(raw.split()).strip(" -•*")
        if not part:
            continue
        if result and _ABBREVIATION.search(result[-1]):
            result[-1] = f"{result[-1]} {part}"
        else:
            result.append(part)
    return result


def split_text(text: str, limit: int) -> list[str]:
    """Pieces of at most `limit` characters, cut at paragraph, line or word boundaries."""
    pieces: list[str] = []
    rest = text
    while len(rest) > limit:
        cut = max(rest.rfind("\n\n", 0, limit), rest.rfind("\n", 0, limit))
        if cut <= 0:
            cut = rest.rfind(" ", 0, limit)
        if cut <= 0:
            cut = limit
        pieces.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip()
    if rest or not pieces:
        pieces.append(rest)
    return pieces
