"""The message's embedding in the learned selector's features reads Polish the same with and
without diacritics (people type both; USE reads "zrestartować" and "zrestartowac" apart)."""

from __future__ import annotations

import numpy as np

from docassist.core.message_features import (
    STATE_FEATURES,
    Vector,
    Vectors,
    both_spellings,
    features_of,
)
from docassist.core.selection import SelectionRequest, StateSummary
from docassist.core.tools import default_registry
from docassist.models.embedders import get_embedder

USE = get_embedder("use")
TYPED = "Kiedy można zrestartować docassist-api"
FOLDED = "kiedy mozna zrestartowac docassist-api"


def embed(texts: list[str]) -> Vectors:
    rows: Vectors = USE.embed_queries(texts)
    return rows


def message_part(text: str) -> Vector:
    request = SelectionRequest(message=text, standalone_question=text, history=[],
                               state_summary=StateSummary(has_last_sources=False),
                               tool_specs=default_registry().specs(), language="pl")
    dense = features_of(request, embed).dense
    return dense[:len(dense) - len(STATE_FEATURES)]


def test_both_spellings_read_closer_than_the_embedder_alone() -> None:
    typed, folded = embed([TYPED, FOLDED])
    alone = float(typed @ folded)
    both = float(message_part(TYPED) @ message_part(FOLDED))
    assert alone < 0.9 < both


def test_the_mean_of_both_spellings_has_length_one() -> None:
    vector = both_spellings(embed, [TYPED])[TYPED]
    assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5
