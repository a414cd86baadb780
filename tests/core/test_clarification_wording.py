"""Clarifications name their candidates in a form that needs no inflection: in Polish a list
after a colon, each candidate in quotes as the catalog spells it ("O który obiekt chodzi:
„kopia zapasowa bazy danych” czy …?"), since "Czy chodzi o …" would need the name inflected
("o kopii…") and no maintained package inflects Polish; English reads "A or B" (issue 42,
item 9)."""

from __future__ import annotations

from pathlib import Path

import pytest

from docassist.core import i18n
from docassist.core.turn import TurnEngine
from docassist.storage import Store, index_paths
from tests.helpers import message


@pytest.mark.parametrize(("first", "follow_up", "asked_back"), [
    pytest.param("Po zmianie konfiguracji docassist-api odtworzyłem bazę danych.",
                 "Jak sprawdzić jej stan?",
                 "O który obiekt chodzi: „usługa docassist-api” czy „baza danych DocAssist”?",
                 id="polish: a list after a colon"),
    pytest.param("After changing the docassist-api config I restored the database.",
                 "How do I check it?",
                 "Do you mean the docassist-api service or the DocAssist database? Please "
                 "name one.", id="english: A or B"),
])
def test_candidates_are_named_without_inflection(engine: TurnEngine, first: str,
                                                 follow_up: str, asked_back: str) -> None:
    engine.handle(message(first))
    asked = engine.handle(message(follow_up))
    assert asked and asked.status == "clarification_needed"
    assert asked.answer == asked_back


def test_examples_are_quoted_as_the_reply_language_quotes(engine: TurnEngine) -> None:
    """An English reply quoted its examples the Polish way („…”), as a new operator saw."""
    english = engine.handle(message("How do I restart it?"))
    assert english and english.status == "clarification_needed"
    assert english.answer.startswith("Which object do you mean? Name it in your question, e.g. ")
    assert "„" not in english.answer and "”" not in english.answer
    polish = engine.handle(message("Jak to zrestartować?", event_id="Ev-pl", thread="T-pl"))
    assert polish and polish.status == "clarification_needed"
    assert polish.answer.startswith("Którego obiektu dotyczy pytanie? Podaj go w pełnym "
                                    "pytaniu, np. „")


def test_examples_are_only_what_the_catalog_holds(engine: TurnEngine, store: Store,
                                                  tmp_path: Path) -> None:
    """With the demo removed, "a jak często?" over a handbook was answered "np. „kopia
    zapasowa bazy danych”, „baza danych DocAssist”": built-in kinds the handbook never
    named."""
    for document in store.documents():
        store.remove_document(document.document_id)
    (tmp_path / "pages").mkdir()
    (tmp_path / "pages" / "threat-modeling.md").write_text(
        "# Threat modeling\n\nModel threats at the start of a project and review the model "
        "every quarter.\n", encoding="utf-8")
    index_paths(store, [tmp_path / "pages"])
    asked = engine.handle(message("a jak często?"))
    assert asked and asked.status == "clarification_needed"
    assert asked.answer == i18n.text("clarify_subject_plain", "pl")
    assert asked.clarification is not None and asked.clarification.choices == []
