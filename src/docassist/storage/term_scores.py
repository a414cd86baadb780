"""A term's BM25 scores in every row holding it, kept between questions (storage.search).

A term that most rows hold is kept as one score per row (0 where it is absent) and added to
a question's totals as a whole array; a rarer one as its rows and their scores, added at
those rows. Adding 0.0 leaves a sum as it is, so both give the same numbers; the whole
array is about ten times faster to add than scattering as many scores (100k synthetic
chunks, where each common word is in 87% of them: BM25 from ~4 to ~0.5 ms a question).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]

DENSE_SHARE: Final = 1 / 8
"""From this share of the rows on, a term's scores are kept as a whole array: it is then at
most four times the size of rows + scores (8 bytes a row against 16 a posting), and adding
it is still far faster than scattering."""


@dataclass(frozen=True)
class TermScores:
    """Scores of one term: at `rows` (sparse), or in `whole` for every row (dense)."""

    rows: Ints
    scores: Floats
    whole: Floats | None = None

    @classmethod
    def of(cls, rows: Ints, scores: Floats, row_count: int) -> TermScores:
        if len(rows) < DENSE_SHARE * row_count:
            return cls(rows, scores)
        whole = np.zeros(row_count, dtype=np.float64)
        whole[rows] = scores
        return cls(rows[:0], scores[:0], whole)

    @property
    def nbytes(self) -> int:
        return self.rows.nbytes + self.scores.nbytes + (
            0 if self.whole is None else self.whole.nbytes)

    def empty(self) -> bool:
        return self.whole is None and not len(self.rows)

    def add_to(self, total: Floats) -> None:
        """total += these scores (0 where the term is absent)."""
        if self.whole is not None:
            np.add(total, self.whole, out=total)
        elif len(self.rows):
            total[self.rows] += self.scores


class TermCache:
    """Terms' scores, oldest dropped first beyond `limit` bytes in all."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._lock = threading.Lock()
        self._entries: dict[object, TermScores] = {}
        self._size = 0

    def get(self, key: object) -> TermScores | None:
        with self._lock:
            return self._entries.get(key)

    def put(self, key: object, value: TermScores) -> None:
        with self._lock:
            if key in self._entries or value.nbytes > self.limit:
                return
            self._entries[key] = value
            self._size += value.nbytes
            while self._size > self.limit:
                oldest = next(iter(self._entries))
                self._size -= self._entries.pop(oldest).nbytes
