"""Which follow-ups ask for a page's failure path (core/extractive.py, asks_what_if_not)."""

from __future__ import annotations

import pytest

from docassist.core.extractive import asks_what_if_not

CONTEXT = " (usługa docassist-api)"


@pytest.mark.parametrize("own", [
    "a co jeśli nie wstanie po restarcie?",
    "Co jeżeli usługa nie działa?",
    "a gdy się nie uda?",
    "And what if it doesn't start?",
    "what if the restart fails?",
    "so what if the certificate is not accepted?",
])
def test_a_follow_up_asking_what_if_it_does_not_go_as_said(own: str) -> None:
    assert asks_what_if_not(own, own + CONTEXT)


@pytest.mark.parametrize("own", [
    "a co z kopią zapasową?",
    "Jak sprawdzić jej stan?",
    "what if I want to rename it?",
    "and how do I check its status?",
    "a jeśli chcę zmienić port?",
])
def test_other_follow_ups_do_not(own: str) -> None:
    assert not asks_what_if_not(own, own + CONTEXT)


def test_a_question_of_its_own_is_not_a_follow_up() -> None:
    question = "What if the service does not start?"
    assert not asks_what_if_not(question, question)
