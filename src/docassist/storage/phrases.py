"""The query as FTS5 phrases: each word by its stem, its prefix or exactly, and hyphenated
names as exact phrases (how a query word matches the index: `Match`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from docassist.core.text import Stemmer, is_cyrillic, prefix_stem, stem, terms


@dataclass(frozen=True)
class Phrase:
    """One part of the query: a word, a stem (any word with it), a prefix (any word starting
    with it) or a phrase (words in a row, exact)."""

    tokens: tuple[str, ...]
    match: Match

    def fts(self) -> str:
        """As FTS5 syntax; a stem (rarely sent: only a word FTS5 splits) becomes a prefix."""
        return '"' + " ".join(self.tokens) + '"' + ("" if self.match == "exact" else "*")


Match = Literal["stem+prefix", "stem", "prefix", "exact"]
"""How a query word matches the index: by its stem and, in Latin letters, also by its first
five letters (the default: Snowball's Polish stemmer on folded text misses forms that share a
prefix, `komunikatow`, `logowal`/`logowania`; BM25 scores both, so a word matching either way
counts, one matching both ways counts more); by its stem alone; by its prefix alone (what we
had before issue 13); or exactly. Measured in bench/retrieval.py and docs/retrieval.md."""


def query_phrases(query: str, match: Match = "stem", stemmer: Stemmer = stem) -> list[Phrase]:
    """The query's words — as stems, prefixes or exact words — and hyphenated names as
    phrases. With "stem+prefix", a word in Latin letters is both its stem and its prefix."""
    phrases: list[Phrase] = []
    for term in dict.fromkeys(terms(query)):
        if "-" in term:
            phrases.append(Phrase(tuple(term.split("-")), "exact"))
        elif match == "stem+prefix":
            phrases.append(Phrase((stemmer(term),), "stem"))
            if not is_cyrillic(term):
                phrases.append(Phrase((prefix_stem(term),), "prefix"))
        elif match == "stem":
            phrases.append(Phrase((stemmer(term),), "stem"))
        elif match == "prefix":
            phrases.append(Phrase((prefix_stem(term),), "prefix"))
        else:
            phrases.append(Phrase((term,), "exact"))
    return phrases


def fts_query(query: str, match: Match = "stem") -> str | None:
    """An FTS5 expression matching any of the query's phrases. Every part is quoted, so no
    query is FTS syntax."""
    parts = [phrase.fts() for phrase in query_phrases(query, match)]
    return " OR ".join(parts) if parts else None
