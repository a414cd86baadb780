"""The in-memory copy of the FTS5 index that BM25 is computed from (search.py): FTS5's own
tokenizer reproduced, the postings read page by page from the store, and FTS5's bm25 formula
term by term (phrases, which need word positions, are scored by FTS5 itself). Rebuilt when
the store's index version moves."""

from __future__ import annotations

import bisect
import math
import sqlite3
import threading
from dataclasses import dataclass, field
from itertools import chain
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from docassist.core.documents import DocumentInfo
from docassist.core.text import Stemmer, stem
from docassist.storage.full_text import FTS_COLUMN_WEIGHTS
from docassist.storage.limits import LEXICAL_INDEX_PAGE_ROWS, LEXICAL_TERM_CACHE_BYTES
from docassist.storage.phrases import Phrase
from docassist.storage.ranking import RowCollections
from docassist.storage.roles import LexicalRows
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
    def build(cls, store: LexicalRows, stemmer: Stemmer = stem) -> LexicalIndex:
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

    def scores(self, phrases: list[Phrase], store: LexicalRows) -> Floats:
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

    def _add_fts_scores(self, phrase: Phrase, store: LexicalRows, total: Floats) -> None:
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

    def document_frequency(self, word_stem: str) -> int:
        """Rows holding a word with this stem (0 for a stem the corpus does not hold)."""
        positions = self.stem_tokens.get(word_stem, [])
        if not positions:
            return 0
        if len(positions) == 1:
            return int(self.offsets[positions[0] + 1] - self.offsets[positions[0]])
        return len(self._postings(positions)[0])

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
