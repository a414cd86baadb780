"""How the ranker describes a candidate chunk: the FEATURES row of cheap evidence that it
answers the question (BM25 and cosine against the other candidates, how much of the question's
weight its title, section and text hold, how close together the question's words stand in it,
how much of the question its whole page holds, whether the question's words are known to the
corpus at all). Training (scripts/train_ranker.py) and ranking (rerank.py) read the same rows.

Query-level features (vocabulary share, the unknown words' weight, the best coverage) move
every candidate's row together: they change no ranking, they tell an unanswerable question
from an answerable one.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

import numpy as np
import numpy.typing as npt

from docassist.core.documents import Chunk, DocumentInfo
from docassist.core.i18n.detection import feature_language
from docassist.core.passages import chunk_body
from docassist.core.statuses import Language
from docassist.core.text import stem, terms
from docassist.storage.lexical_index import LexicalIndex
from docassist.storage.limits import CHUNK_CACHE_ENTRIES

FOREIGN_SHARE: Final = 0.6
"""A question with more of its weight in words no page holds is in another language."""
PROXIMITY_WINDOW: Final = 12
"""Words: two of the question's words closer than this in a chunk count as near."""

FEATURES: Final = (
    "bm25_share", "bm25_reciprocal_rank", "cosine", "cosine_gap", "dense_reciprocal_rank",
    "coverage", "coverage_gap", "title_coverage", "section_coverage", "document_coverage",
    "document_chunks", "document_bm25_reciprocal_rank", "proximity", "foreign_cosine",
    "vocabulary_share", "unknown_weight", "best_coverage", "best_cosine", "query_words",
    "known_bm25_reciprocal_rank", "known_bm25_share", "unknown_cosine",
    "unknown_dense_reciprocal_rank", "missing_known_weight", "missing_known_share",
    "heading_cosine", "heading_cosine_gap", "other_language",
)
"""One candidate's row, in this order: the ranking model's weights are read by position, and
RankerModel.load refuses weights trained on another list."""


@dataclass(frozen=True)
class Candidate:
    chunk: Chunk
    document: DocumentInfo
    bm25: float
    """Raw BM25 (0 when BM25 did not propose it)."""
    bm25_rank: int | None
    dense_rank: int | None


@dataclass(frozen=True)
class Question:
    """The question's words as the features weigh them."""

    stems: dict[str, float]
    """Content-word stem → idf (an unknown word gets the largest idf the corpus could give)."""
    unknown: frozenset[str]
    foreign: bool
    """Most of its weight is in words the corpus does not hold (another language)."""
    top: float
    """The largest idf the corpus could give (an unknown word's)."""
    text: str
    """As asked (its language is told from its words)."""

    @classmethod
    def of(cls, text: str, index: LexicalIndex) -> Question:
        rows = max(len(index.chunk_ids), 1)
        top = math.log(rows + 1.0)
        weights: dict[str, float] = {}
        unknown: set[str] = set()
        for word in terms(text):
            key = stem(word)
            if key in weights:
                continue
            found = index.document_frequency(key)
            if not found:
                unknown.add(key)
            weights[key] = math.log((rows + 1.0) / (found + 0.5)) if found else top
        total = sum(weights.values()) or 1.0
        unknown_share = sum(weights[key] for key in unknown) / total
        return cls(weights, frozenset(unknown), unknown_share > FOREIGN_SHARE, top, text)

    def coverage(self, found: set[str]) -> float:
        total = sum(self.stems.values())
        return sum(w for key, w in self.stems.items() if key in found) / total if total else 0.0

    def missing(self, found: set[str]) -> tuple[float, float]:
        """Of the words the corpus knows, those the chunk lacks: the heaviest one's idf (on
        the corpus's scale, 0..1) and their share of the known words' weight. An
        unanswerable question that sounds like an answerable one usually lacks just one
        specific word ("dress code" on the office page)."""
        known = {key: w for key, w in self.stems.items() if key not in self.unknown}
        absent = [w for key, w in known.items() if key not in found]
        if not absent:
            return 0.0, 0.0
        return max(absent) / self.top, sum(absent) / sum(known.values())


def _stems(text: str) -> list[str]:
    return [stem(word) for word in terms(text)]


def _proximity(question: Question, words: list[str]) -> float:
    """1 when two different question words stand next to each other, falling with the gap;
    0 when fewer than two occur."""
    last: dict[str, int] = {}
    best = PROXIMITY_WINDOW
    for position, word in enumerate(words):
        if word not in question.stems:
            continue
        for other, at in last.items():
            if other != word:
                best = min(best, position - at)
        last[word] = position
    return 0.0 if best >= PROXIMITY_WINDOW else 1.0 / best


def features(question: Question, candidates: Sequence[Candidate],
             cosines: Sequence[float], vocabulary_share: float,
             heading_cosines: Sequence[float]) -> npt.NDArray[np.float64]:
    """One row of FEATURES per candidate."""
    if not candidates:
        return np.zeros((0, len(FEATURES)))
    bodies_text = [chunk_body(candidate.chunk.text) for candidate in candidates]
    bodies = [_stems(text) for text in bodies_text]
    found = [set(body) | set(_stems(c.chunk.section)) | set(_stems(c.document.title))
             for body, c in zip(bodies, candidates, strict=True)]
    covered = [question.coverage(words) for words in found]
    best_bm25 = max((c.bm25 for c in candidates), default=0.0) or 1.0
    best_cosine = max(cosines)
    best_coverage = max(covered)
    by_document: dict[str, list[int]] = {}
    for position, candidate in enumerate(candidates):
        by_document.setdefault(candidate.document.document_id, []).append(position)
    unknown_weight = 1.0 - question.coverage(set(question.stems) - question.unknown)
    asked_in = feature_language(question.text, "en")
    rows = []
    for position, candidate in enumerate(candidates):
        mates = by_document[candidate.document.document_id]
        bm25_ranks = [rank for m in mates if (rank := candidates[m].bm25_rank) is not None]
        cosine = cosines[position]
        rows.append([
            candidate.bm25 / best_bm25,
            1.0 / candidate.bm25_rank if candidate.bm25_rank else 0.0,
            cosine, cosine - best_cosine,
            1.0 / candidate.dense_rank if candidate.dense_rank else 0.0,
            covered[position], covered[position] - best_coverage,
            question.coverage(set(_stems(candidate.document.title))),
            question.coverage(set(_stems(candidate.chunk.section))),
            max(covered[m] for m in mates),
            min(len(mates), 5) / 5.0,
            1.0 / min(bm25_ranks) if bm25_ranks else 0.0,
            _proximity(question, bodies[position]),
            cosine if question.foreign else 0.0,
            vocabulary_share, unknown_weight, best_coverage, best_cosine,
            min(len(question.stems), 12) / 12.0,
            # How much BM25 or the embedding should count depends on how much of the
            # question the corpus knows (a Polish question over English pages: little).
            vocabulary_share / candidate.bm25_rank if candidate.bm25_rank else 0.0,
            vocabulary_share * candidate.bm25 / best_bm25,
            (1.0 - vocabulary_share) * cosine,
            (1.0 - vocabulary_share) / candidate.dense_rank if candidate.dense_rank else 0.0,
            *question.missing(found[position]),
            heading_cosines[position], heading_cosines[position] - max(heading_cosines),
            float(_passage_language(candidate.chunk.text) != asked_in),
        ])
    return np.asarray(rows, dtype=np.float64)


@lru_cache(maxsize=CHUNK_CACHE_ENTRIES)
def _passage_language(chunk_text: str) -> Language:
    """The language of a chunk's body, kept by its text: the same chunks are candidates for
    question after question, and the store hands out the same text object each time
    (storage/chunk_cache.py), whose hash Python keeps."""
    return feature_language(chunk_body(chunk_text), "en")


def heading(candidate: Candidate) -> str:
    """What a page calls the passage: its title and the section's heading (a question in
    another language meets these better than a long passage: "How do I report an
    incident?" and the section "Jak zgłosić incydent")."""
    section = _PART.sub("", candidate.chunk.section)
    title = candidate.document.title
    return f"{title}: {section}" if section and section != title else title


_PART: Final = re.compile(r"\s*\(\d+/\d+\)$")
