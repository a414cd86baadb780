"""Picking the best of many scores without sorting them all (shared by BM25 and vectors; it
imports no store, so the store's own modules may use it)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt


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
