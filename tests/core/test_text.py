"""Word folding: the fast path must mean exactly what the definition says."""

from __future__ import annotations

import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from docassist.core.text import fold


def folded_by_definition(text: str) -> str:
    """Case-folded, `ł` as `l`, compatibility-decomposed, `и` + breve as `й`, every other
    combining mark dropped."""
    decomposed = unicodedata.normalize("NFKD", text.casefold().replace("ł", "l"))
    decomposed = decomposed.replace("и\u0306", "й")
    return "".join(char for char in decomposed if not unicodedata.combining(char))


@given(st.text(max_size=200))
def test_fold_is_its_definition_for_any_text(text: str) -> None:
    assert fold(text) == folded_by_definition(text)


def test_fold_examples() -> None:
    assert fold("Zażółć GĘŚLĄ jaźń") == "zazolc gesla jazn"
    assert fold("Straße ﬁ") == "strasse fi"
    assert fold("e\u0301\U0001d165x") == "ex"  # marks outside the basic plane too
    assert fold("Restart docassist-API") == "restart docassist-api"
    assert fold("Настройка ЙОД ёлка") == "настройка йод елка"
