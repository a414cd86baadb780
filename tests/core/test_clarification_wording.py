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


def test_a_built_in_kind_is_offered_only_by_names_the_catalog_uses(
        engine: TurnEngine, store: Store, tmp_path: Path) -> None:
    """A handbook with a page on database migrations was offered "e.g. the DocAssist
    database": the built-in kind's demo name, which no title of it says."""
    for document in store.documents():
        store.remove_document(document.document_id)
    (tmp_path / "pages").mkdir()
    (tmp_path / "pages" / "migrations.md").write_text(
        "# Database migrations\n\nRun migrations from the pipeline, never by hand.\n",
        encoding="utf-8")
    index_paths(store, [tmp_path / "pages"])
    asked = engine.handle(message("How do I restart it?"))
    assert asked and asked.status == "clarification_needed"
    assert "DocAssist" not in asked.answer
    assert asked.answer == i18n.text("clarify_subject_plain", "en")


@pytest.mark.parametrize("asked", [
    "gitleaks - how do i run it locally before i push?",
    "gitleaks: how do I run it before I push?",
    "GitLeaks – jak go uruchomić lokalnie przed pushem?",
    "what is gitleaks and how do i run it before i push?",
    "co to jest gitleaks i jak go uruchomić lokalnie przed pushem?",
])
def test_a_topic_set_off_before_the_question_is_what_it_refers_to(
        engine: TurnEngine, store: Store, tmp_path: Path, asked: str) -> None:
    """"gitleaks - how do i run it…" was asked back "Which object do you mean?"; answering
    the clarification with "gitleaks" was asked back again, and the third time handed off."""
    (tmp_path / "pages").mkdir()
    (tmp_path / "pages" / "gitleaks.md").write_text(
        "# GitLeaks guidance\n\n## Local developer workflow\n\nRun gitleaks locally before "
        "every push with `gitleaks protect --staged`; wire it into pre-commit.\n",
        encoding="utf-8")
    index_paths(store, [tmp_path / "pages"])
    answered = engine.handle(message(asked))
    assert answered and answered.status == "answered", answered
    assert "gitleaks protect --staged" in answered.answer


@pytest.mark.parametrize("vague", ["ok - how do I restart it?",
                                   "what is it and how do I restart it?"])
def test_a_filler_or_a_pronoun_names_no_topic(engine: TurnEngine, vague: str) -> None:
    asked = engine.handle(message(vague))
    assert asked and asked.status == "clarification_needed"
