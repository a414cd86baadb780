"""BM25 search over the chunk index.

Ranking is SQLite FTS5's `bm25()` over `chunks_fts` (title, section and body weighted as in
`FTS_COLUMN_WEIGHTS`), computed with numpy from an in-memory copy of the FTS index: FTS5 has no
top-k shortcut, so a query whose words occur in most chunks made it score every one of them
(~250 ms at 100k chunks). The copy is rebuilt when the index version moves, like the dense
matrix. Single words are scored from the copy with FTS5's formula term by term, so the ranking is
FTS5's; phrases (hyphenated names), which need word positions, are scored by FTS5 itself and
added (bm25 is a sum over the query's phrases, each with its own idf).

Words match by stem (Snowball for English, Polish and Russian, `core.text.stem`) and, in Latin
letters, also by their first five letters (see `Match`): the index's vocabulary is stemmed once
per build, and a query word's postings are those of every indexed word with its stem (or
prefix).

Scores: the score we report and apply the similarity threshold to is the *coverage*, the share
of the query's distinct word stems (diacritics folded) that the chunk contains, in [0, 1]. It
is comparable across queries, unlike raw BM25.
"""

from __future__ import annotations

import bisect
import math
import sqlite3
import threading
from dataclasses import dataclass, field
from itertools import chain
from typing import Any, Final, Literal

import numpy as np
import numpy.typing as npt

from docassist.core.documents import DocumentInfo
from docassist.core.limits import (
    BM25_SIMILARITY_THRESHOLD,
    LEXICAL_INDEX_PAGE_ROWS,
    LEXICAL_TERM_CACHE_BYTES,
)
from docassist.core.ports import SearchHit
from docassist.core.scopes import EVERYTHING, Scope
from docassist.core.text import Stemmer, is_cyrillic, prefix_stem, stem, terms
from docassist.storage.backends import AnyStore
from docassist.storage.database import FTS_COLUMN_WEIGHTS
from docassist.storage.ranking import RowCollections, best_positions, best_positive_positions
from docassist.storage.term_scores import TermCache, TermScores

K1: Final = 1.2
B: Final = 0.75
"""FTS5's bm25 constants (fts5_aux.c)."""

class FtsTokenizer:
    """Splits folded text into tokens exactly as FTS5's unicode61 tokenizer does (a test compares
    the index with FTS5's own vocabulary). In ASCII, tokens are runs of letters and digits.
    Beyond ASCII, SQLite's Unicode tables decide (private-use and some symbol characters such as
    emoji are token characters, a few newer letters are not), so each new character is asked
    of SQLite once. Characters are judged one by one: in scripts whose combining marks survive
    folding (some Indic, Thai) token boundaries can still differ from FTS5's."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._separators = {code: " " for code in range(128) if not chr(code).isalnum()}
        self._known = {chr(code) for code in range(128)}
        self._probe: sqlite3.Connection | None = None

    def tokens(self, text: str) -> list[str]:
        if not text.isascii():
            with self._lock:
                unknown = set(text).difference(self._known)
                if unknown:
                    self._learn(unknown)
        return text.translate(self._separators).split()

    def _learn(self, characters: set[str]) -> None:
        """Ask SQLite which of these characters are token characters (called under the lock)."""
        if self._probe is None:
            self._probe = sqlite3.connect(":memory:", check_same_thread=False)
            self._probe.execute("CREATE VIRTUAL TABLE probe USING fts5(x, tokenize = 'unicode61')")
            self._probe.execute("CREATE VIRTUAL TABLE probe_terms USING fts5vocab(probe, instance)")
        self._probe.executemany("INSERT INTO probe (rowid, x) VALUES (?, ?)",
                                [(ord(character), character) for character in characters])
        kept = {code for (code,) in self._probe.execute("SELECT DISTINCT doc FROM probe_terms")}
        self._probe.execute("DELETE FROM probe")
        for character in characters:
            if ord(character) not in kept:
                self._separators[ord(character)] = " "
            self._known.add(character)


_TOKENIZER: Final = FtsTokenizer()

_LAST_TOKEN: Final = "\U0010ffff"

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]
Int32s = npt.NDArray[np.int32]
Float32s = npt.NDArray[np.float32]


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
had before issue 13); or exactly. Measured in bench/retrieval.py and README."""


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


@dataclass(frozen=True)
class LexicalIndex:
    """The FTS table's postings in memory: for each token, the rows holding it and its
    column-weighted count there. Row positions follow FTS rowid order."""

    version: int
    chunk_ids: list[str]
    rowids: Ints
    length_norm: Floats
    """Per row: k1 * (1 - b + b * tokens / average tokens), as fts5_aux.c computes it."""
    tokens: list[str]
    """The vocabulary, sorted."""
    stem_tokens: dict[str, list[int]]
    """Positions in `tokens` of the words with each stem."""
    offsets: Ints
    """Postings of tokens[i] are posting_rows[offsets[i]:offsets[i + 1]]."""
    posting_rows: npt.NDArray[np.int32]
    posting_frequencies: npt.NDArray[np.float32]
    documents: dict[str, DocumentInfo]
    collections: RowCollections
    term_cache: TermCache = field(default_factory=lambda: TermCache(LEXICAL_TERM_CACHE_BYTES),
                                  compare=False, repr=False)

    @classmethod
    def build(cls, store: AnyStore, stemmer: Stemmer = stem) -> LexicalIndex:
        version = store.index_version()  # read first: a change while reading reloads later
        documents = {document.document_id: document for document in store.documents()}
        vocabulary: dict[str, int] = {}
        chunk_ids: list[str] = []
        rowids: list[int] = []
        lengths: list[int] = []
        pages: list[tuple[Int32s, Int32s, Float32s]] = []
        after = 0
        while page := store.fts_rows(after, LEXICAL_INDEX_PAGE_ROWS):
            pages.append(_page_postings(page, len(chunk_ids), vocabulary, lengths))
            chunk_ids.extend(row[1] for row in page)
            rowids.extend(row[0] for row in page)
            after = page[-1][0]
        tokens = sorted(vocabulary)
        rank = np.empty(len(vocabulary), dtype=np.int32)  # first-seen id -> sorted position
        rank[[vocabulary[token] for token in tokens]] = np.arange(len(tokens), dtype=np.int32)
        token_of = _joined([rank[page[0]] for page in pages], np.int32)
        rows = _joined([page[1] for page in pages], np.int32)
        frequencies = _joined([page[2] for page in pages], np.float32)
        pages.clear()
        order = np.argsort(token_of, kind="stable")  # rows stay ascending within a token
        row_lengths = np.asarray(lengths, dtype=np.float64)
        stem_tokens: dict[str, list[int]] = {}
        for position, token in enumerate(tokens):
            stem_tokens.setdefault(stemmer(token), []).append(position)
        average = sum(lengths) / len(lengths) if sum(lengths) else 1.0  # no tokens: no match
        collections = RowCollections.of(chunk_ids, store.chunk_collections())
        return cls(
            version=version, chunk_ids=chunk_ids, rowids=np.asarray(rowids, dtype=np.int64),
            length_norm=K1 * (1 - B + B * row_lengths / average), tokens=tokens,
            stem_tokens=stem_tokens,
            offsets=np.concatenate([[0], np.cumsum(np.bincount(token_of,
                                                               minlength=len(tokens)))]),
            posting_rows=rows[order], posting_frequencies=frequencies[order],
            documents=documents, collections=collections)

    def scores(self, phrases: list[Phrase], store: AnyStore) -> Floats:
        """FTS5's bm25 of every row for the OR of `phrases`, positive (0 = no match)."""
        total = np.zeros(len(self.chunk_ids), dtype=np.float64)
        for phrase in phrases:
            if len(phrase.tokens) == 1 and _is_one_token(phrase.tokens[0]):
                self._term_scores(phrase).add_to(total)
            elif self._may_match(phrase):
                self._add_fts_scores(phrase, store, total)
        return total

    def _term_scores(self, phrase: Phrase) -> TermScores:
        """The bm25 term score of the word (stem, prefix) in each row holding it. A term's
        scores depend only on the words it matches, so they are computed once per index and
        kept (bounded; a stem and a prefix matching the same words share them): a question
        no longer gathers and divides every posting of a common word (100k synthetic chunks:
        most of BM25's time). Same operations, same numbers."""
        positions = self._positions(phrase)
        key = tuple(positions)
        cached = self.term_cache.get(key)
        if cached is not None:
            return cached
        rows, frequencies = self._postings(positions)
        weights = np.zeros(0, dtype=np.float64)
        if len(rows):
            hits = len(rows)
            idf = math.log((len(self.chunk_ids) - hits + 0.5) / (hits + 0.5))
            idf = idf if idf > 0.0 else 1e-6  # as FTS5: common words still count a bit
            weights = idf * ((frequencies * (K1 + 1.0)) / (frequencies + self.length_norm[rows]))
        found = TermScores.of(rows, weights, len(self.chunk_ids))
        self.term_cache.put(key, found)
        return found

    def _positions(self, phrase: Phrase) -> list[int]:
        """Positions in `tokens` of the words the phrase (one token) matches."""
        [token] = phrase.tokens
        if phrase.match == "stem":
            return self.stem_tokens.get(token, [])
        if phrase.match == "prefix":
            start = bisect.bisect_left(self.tokens, token)
            return list(range(start, bisect.bisect_right(self.tokens, token + _LAST_TOKEN)))
        at = bisect.bisect_left(self.tokens, token)
        return [at] if at < len(self.tokens) and self.tokens[at] == token else []

    def _postings(self, positions: list[int]) -> tuple[Ints, Floats]:
        """Rows holding any of the tokens at `positions` and their weighted count there."""
        spans = [(int(self.offsets[p]), int(self.offsets[p + 1])) for p in positions]
        rows = _joined([self.posting_rows[low:high] for low, high in spans],
                       np.int32).astype(np.int64)
        frequencies = _joined([self.posting_frequencies[low:high] for low, high in spans],
                              np.float32).astype(np.float64)
        if len(positions) > 1:  # several words share the stem: one count per row
            rows, where = np.unique(rows, return_inverse=True)
            frequencies = np.asarray(np.bincount(where, weights=frequencies, minlength=len(rows)),
                                     dtype=np.float64)
        return rows, frequencies

    def _add_fts_scores(self, phrase: Phrase, store: AnyStore, total: Floats) -> None:
        matches = store.fts_scores(phrase.fts())
        if not matches:
            return
        rowids = np.fromiter((rowid for rowid, _ in matches), dtype=np.int64, count=len(matches))
        values = np.fromiter((value for _, value in matches), dtype=np.float64,
                             count=len(matches))
        positions = np.searchsorted(self.rowids, rowids)
        known = (positions < len(self.rowids)) & (
            self.rowids[np.minimum(positions, len(self.rowids) - 1)] == rowids)
        total[positions[known]] -= values[known]  # bm25() is negative: better is lower

    def _may_match(self, phrase: Phrase) -> bool:
        """False when FTS5 surely finds no row: a word of the phrase is in no row (a last
        word that is a stem, matched as a prefix, is let through)."""
        words = [word for part in phrase.tokens for word in _TOKENIZER.tokens(part)]
        return bool(words) and all(self.has(word) for word in words[:-1]) and (
            phrase.match != "exact" or self.has(words[-1]))

    def knows(self, phrase: Phrase) -> bool:
        """Whether any row could hold the phrase: its stem, prefix or every word is indexed."""
        [first, *rest] = phrase.tokens
        if rest or phrase.match == "exact":
            words = [word for part in phrase.tokens for word in _TOKENIZER.tokens(part)]
            return bool(words) and all(self.has(word) for word in words)
        if phrase.match == "stem":
            return first in self.stem_tokens
        at = bisect.bisect_left(self.tokens, first)
        return at < len(self.tokens) and self.tokens[at].startswith(first)

    def has(self, token: str) -> bool:
        at = bisect.bisect_left(self.tokens, token)
        return at < len(self.tokens) and self.tokens[at] == token


def _is_one_token(text: str) -> bool:
    return _TOKENIZER.tokens(text) == [text]


def _joined(parts: list[Any], dtype: type[np.generic]) -> Any:
    return np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)


def _page_postings(page: list[tuple[int, str, str, str, str]], first_row: int,
                   vocabulary: dict[str, int], lengths: list[int]
                   ) -> tuple[Int32s, Int32s, Float32s]:
    """(token id, row, weighted count) for each distinct token of each row of one page, kept
    small (32 bits: counts are small whole numbers, exact in float32)."""
    # One list of tokens per (row, column), in order; numpy does the counting.
    found = [_TOKENIZER.tokens(text) for row in page for text in row[2:]]
    every_token = list(chain.from_iterable(found))
    for token in set(every_token).difference(vocabulary):
        vocabulary[token] = len(vocabulary)
    token_ids = np.fromiter(map(vocabulary.__getitem__, every_token), dtype=np.int64,
                            count=len(every_token))
    sizes = np.fromiter(map(len, found), dtype=np.int64, count=len(found))
    columns = len(FTS_COLUMN_WEIGHTS) - 1
    lengths.extend(sizes.reshape(-1, columns).sum(axis=1).tolist())
    row_span = first_row + len(page)
    rows = np.repeat(np.repeat(np.arange(first_row, row_span, dtype=np.int64), columns), sizes)
    weights = np.repeat(np.tile(np.asarray(FTS_COLUMN_WEIGHTS[1:]), len(page)), sizes)
    # One entry per (token, row): key = token * rows in all + row, summed with its weights.
    unique_keys, where = np.unique(token_ids * row_span + rows, return_inverse=True)
    counts = np.bincount(where, weights=weights).astype(np.float32)
    return ((unique_keys // row_span).astype(np.int32), (unique_keys % row_span).astype(np.int32),
            counts)


class Bm25Retriever:
    name = "bm25"
    default_threshold = BM25_SIMILARITY_THRESHOLD

    def __init__(self, store: AnyStore, *, match: Match = "stem+prefix",
                 stemmer: Stemmer = stem) -> None:
        self.store = store
        self.match = match  # others only to measure what stems buy (bench/)
        self.stemmer = {"stem+prefix": stemmer, "stem": stemmer,
                        "prefix": prefix_stem}.get(match, _exact)
        self._lock = threading.Lock()
        self._index: LexicalIndex | None = None

    def index(self) -> LexicalIndex:
        """The in-memory index, rebuilt when the store's index version moved."""
        with self._lock:
            if self._index is None or self._index.version != self.store.index_version():
                self._index = None  # let the old copy go before building the new one
                self._index = LexicalIndex.build(self.store, self.stemmer)
            return self._index

    def vocabulary_share(self, query: str) -> float:
        """Share of the query's words (stems; hyphenated names whole) that the corpus holds
        at all: low for a question in another language than the documents."""
        # By stems alone: a prefix of a foreign word often starts some word of the corpus.
        known_as = "stem" if self.match == "stem+prefix" else self.match
        phrases = query_phrases(query, known_as, self.stemmer)
        if not phrases:
            return 0.0
        index = self.index()
        return sum(1 for phrase in phrases if index.knows(phrase)) / len(phrases)

    def search(self, query: str, top_k: int, *, coverage: bool = True) -> list[SearchHit]:
        """The best hits, best first. Without `coverage` their score is left 0 (skips
        reading every hit's words: ~40% of BM25's time for 20 hits; hybrid search needs
        neither, see `ranked_ids`)."""
        return [hit for hit, _ in self.ranked(query, top_k, coverage=coverage)]

    def search_in(self, query: str, top_k: int, scope: Scope) -> list[SearchHit]:
        return [hit for hit, _ in self.ranked(query, top_k, scope=scope)]

    def ranked(self, query: str, top_k: int, *, coverage: bool = True,
               scope: Scope = EVERYTHING) -> list[tuple[SearchHit, float]]:
        """The best hits (scored by coverage) with their raw BM25 scores, best first; only
        rows of the scope's collections are candidates (before ranking and `top_k`)."""
        index = self.index()
        stemmer = self.stemmer
        wanted = {stemmer(term) for term in terms(query)}
        hits: list[tuple[SearchHit, float]] = []
        for chunk_id, raw in self.ranked_ids(query, top_k, index, scope=scope):
            chunk = self.store.chunk(chunk_id)
            document = index.documents.get(chunk.document_id) if chunk else None
            if chunk is None or document is None:  # pruned or removed since the index was read
                continue
            present = wanted & _stems_of(f"{document.title} {chunk.section} {chunk.text}",
                                         stemmer) if coverage else set()
            hits.append((SearchHit(chunk=chunk, document=document,
                                   score=len(present) / len(wanted)), raw))
        return hits

    def ranked_ids(self, query: str, top_k: int, index: LexicalIndex | None = None, *,
                   scope: Scope = EVERYTHING) -> list[tuple[str, float]]:
        """The best chunks' ids and raw BM25 scores, best first, without reading a chunk
        (hybrid search reads only the few it returns: 20 reads were ~1 ms a question)."""
        phrases = query_phrases(query, self.match, self.stemmer)
        if not phrases or top_k <= 0:
            return []
        index = index or self.index()
        scores = index.scores(phrases, self.store)
        if index.collections.covers(scope):
            best = best_positive_positions(scores, top_k)
        else:  # only the scope's rows are candidates, before ranking and top_k
            allowed = np.flatnonzero((scores > 0) & index.collections.mask(scope))
            best = best_positions(scores, top_k, among=allowed)
        return [(index.chunk_ids[position], float(scores[position])) for position in best]


def _stems_of(text: str, stemmer: Stemmer) -> set[str]:
    """Stems of every word, plus whole hyphenated names and their parts."""
    found: set[str] = set()
    for word in terms(text):
        found.add(stemmer(word))
        if "-" in word:
            found.update(stemmer(part) for part in word.split("-"))
    return found


def _exact(term: str) -> str:
    return term
