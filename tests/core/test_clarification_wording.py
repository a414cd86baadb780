"""Clarifications name their candidates in a form that needs no inflection: in Polish a list
after a colon, each candidate in quotes as the catalog spells it ("O który obiekt chodzi:
„kopia zapasowa bazy danych” czy …?"), since "Czy chodzi o …" would need the name inflected
("o kopii…") and no maintained package inflects Polish; English reads "A or B" (issue 42,
item 9)."""

from __future__ import annotations

from docassist.core.turn import TurnEngine
from tests.helpers import message


def test_polish_candidates_come_as_a_list_after_a_colon(engine: TurnEngine) -> None:
    engine.handle(message("Po zmianie konfiguracji docassist-api odtworzyłem bazę danych."))
    asked = engine.handle(message("Jak sprawdzić jej stan?"))
    assert asked and asked.status == "clarification_needed"
    assert asked.answer == ("O który obiekt chodzi: „usługa docassist-api” czy "
                            "„baza danych DocAssist”?")


def test_english_candidates_read_a_or_b(engine: TurnEngine) -> None:
    engine.handle(message("After changing the docassist-api config I restored the database."))
    asked = engine.handle(message("How do I check it?"))
    assert asked and asked.status == "clarification_needed"
    assert asked.answer == ("Do you mean the docassist-api service or the DocAssist "
                            "database? Please name one.")
