"""Fusing rankings of one query: score-normalised CombMNZ (the default) and weighted RRF.

CombMNZ (Fox and Shaw): each retriever's scores over its own candidates become z-scores (how
far above that retriever's average candidate a hit stands, in its standard deviations), a
chunk's fused score is the weighted sum of its z-scores times the number of retrievers that
found it. Unlike reciprocal ranks, a z-score says how *sure* a retriever is: a BM25 hit far
ahead of the rest (a rare exact term) outweighs dense's flat top, and a dense hit far ahead
outweighs BM25's many near-ties (a question in another language). Chosen on the held-out tune
split against RRF variants (docs/retrieval.md, "How the choices were made").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

Fusion = Literal["combmnz", "rrf"]

Ranking = Sequence[tuple[str, float]]
"""(chunk id, the retriever's own score), best first."""


@dataclass(frozen=True)
class Vote:
    """One retriever's ranking of a query and how much it counts."""

    weight: float
    ranking: Ranking
    depth: int = 0
    """With a depth, the places the ranking leaves empty count as score 0 (BM25: a chunk it
    did not return holds none of the query's words), so a hit few chunks share stands far
    out; without one, scores of chunks not returned are unknown (dense) and nothing is added."""


def z_scores(values: Sequence[float]) -> list[float]:
    """Distance from the mean in standard deviations; a lone or flat list prefers none of its
    entries (0 each), so only agreement (the MNZ count) counts for them."""
    if len(values) < 2:
        return [0.0] * len(values)
    # Plain floats: statistics.pstdev sums exact fractions, 1.4% of a turn's CPU (profiled).
    mean = math.fsum(values) / len(values)
    spread = math.sqrt(math.fsum((value - mean) ** 2 for value in values) / len(values))
    if spread == 0.0:
        return [0.0] * len(values)
    return [(value - mean) / spread for value in values]


def comb_mnz(votes: Sequence[Vote]) -> list[str]:
    """Chunk ids by weighted CombMNZ over z-scored rankings, best first (ties: first seen)."""
    fused: dict[str, float] = {}
    found_by: dict[str, int] = {}
    for vote in votes:
        if vote.weight <= 0.0 or not vote.ranking:
            continue
        scores = [score for _, score in vote.ranking]
        scores += [0.0] * (vote.depth - len(scores))
        for (chunk_id, _), z in zip(vote.ranking, z_scores(scores), strict=False):
            fused[chunk_id] = fused.get(chunk_id, 0.0) + vote.weight * z
            found_by[chunk_id] = found_by.get(chunk_id, 0) + 1
    return sorted(fused, key=lambda chunk_id: -fused[chunk_id] * found_by[chunk_id])


def weighted_rrf(votes: Sequence[Vote], k: int) -> list[str]:
    """Chunk ids by weighted reciprocal rank fusion (the default before; kept to measure)."""
    fused: dict[str, float] = {}
    for vote in votes:
        for rank, (chunk_id, _) in enumerate(vote.ranking, start=1):
            fused[chunk_id] = fused.get(chunk_id, 0.0) + vote.weight / (k + rank)
    return sorted(fused, key=lambda chunk_id: -fused[chunk_id])
