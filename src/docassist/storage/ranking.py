"""Picking the best of many scores without sorting them all (shared by BM25 and vectors; it
imports no store, so the store's own modules may use it)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from docassist.core.scopes import Scope

SAMPLE_STRIDE: Final = 16
"""`best_positive_positions` first takes the cut of every SAMPLE_STRIDE-th score: the k-th
best of a subset is never above the k-th best of all, so it only shrinks the race (to about
SAMPLE_STRIDE × k entries), never changes its winner."""


def best_positions(scores: npt.NDArray[np.floating], count: int,
                   among: npt.NDArray[np.intp] | None = None) -> list[int]:
    """Positions of the `count` highest scores (of positions `among`), best first, ties in
    position order: what a stable sort of every score gives, without sorting them all."""
    if count <= 0:
        return []
    candidates = np.arange(len(scores)) if among is None else among
    if len(candidates) > count:
        cut = np.partition(scores[candidates], len(candidates) - count)[len(candidates) - count]
        candidates = candidates[scores[candidates] >= cut]  # ties at the cut stay in the race
    order = np.lexsort((candidates, -scores[candidates]))
    return [int(position) for position in candidates[order][:count]]


@dataclass(frozen=True)
class RowCollections:
    """The collection of each row of a search index, as small codes: a scope becomes a
    boolean mask over the rows, applied to the candidates before any ranking."""

    codes: npt.NDArray[np.int32]
    names: dict[str, int]

    @classmethod
    def of(cls, chunk_ids: list[str], collection_of: Mapping[str, str]) -> RowCollections:
        names: dict[str, int] = {}
        codes = np.fromiter(
            (names.setdefault(collection_of.get(chunk_id, ""), len(names))
             for chunk_id in chunk_ids), dtype=np.int32, count=len(chunk_ids))
        return cls(codes, names)

    def covers(self, scope: Scope) -> bool:
        """True when every row is in the scope: nothing to restrict (an installation whose
        documents are all in `default` searches exactly as without scopes, ANN included)."""
        return scope.collections is None or set(self.names) <= scope.collections

    def mask(self, scope: Scope) -> npt.NDArray[np.bool_]:
        """True for the rows in the scope (a chunk without a document is in none)."""
        if scope.collections is None:
            return np.ones(len(self.codes), dtype=np.bool_)
        wanted = [self.names[name] for name in scope.collections if name in self.names]
        return np.isin(self.codes, np.asarray(wanted, dtype=np.int32))
def best_positive_positions(scores: npt.NDArray[np.floating], count: int) -> list[int]:
    """`best_positions` of the positive scores, in a fraction of its time on long arrays
    (100k BM25 scores: ~0.1 instead of ~1.3 ms on a loaded machine): a cut taken on a sample
    keeps only the entries that can still win, and one pass over the array finds them."""
    if count <= 0:
        return []
    floor = 0.0
    sample = scores[::SAMPLE_STRIDE]
    if len(sample) > count:
        floor = max(floor, float(np.partition(sample, len(sample) - count)[len(sample) - count]))
    race = np.flatnonzero(scores >= floor) if floor > 0.0 else np.flatnonzero(scores > 0.0)
    return best_positions(scores, count, among=race)
