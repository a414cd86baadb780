"""Which language a reply is in: the user's, judged by their words. A Polish name in an
English sentence, or an English product name in a Polish one, does not switch it."""

from __future__ import annotations

import pytest

from docassist.core import i18n
from docassist.core.i18n.detection import feature_language
from docassist.core.turn import TurnEngine
from docassist.storage.roles import Storage
from tests.helpers import message


@pytest.mark.parametrize(("text", "language"), [
    ("What is the address of the Kraków office?", "en"),
    ("How do I get to the Łódź site?", "en"),
    ("Jak dojechać do biura w Krakowie?", "pl"),
    ("Co zrobić po restarcie service?", "pl"),
    ("Zrób restart", "pl"),  # a tie: the Polish letters decide
    ("Jak restart?", "en"),  # a tie without them: the default
    ("VPN nie działa", "pl"),
    ("hasło", "pl"),
    ("ile dni urlopu mam", "pl"),
    ("Kraków", "pl"),
    ("docassist-api", "en"),  # nothing to go by: the default
    ("zrestartuj serwer docassist-api", "pl"),  # Polish typed without its letters
    ("dziekuje bardzo", "pl"),
    ("restart the server", "en"),
])
def test_the_words_decide_and_a_name_does_not(text: str, language: str) -> None:
    assert i18n.detect_language(text, "en") == language


def test_an_english_question_naming_a_polish_city_is_answered_in_english(
        engine: TurnEngine) -> None:
    result = engine.handle(message("What are the opening hours of the Kraków office?"))
    assert result is not None and result.language == "en"
    polish = engine.handle(message("Jakie są godziny otwarcia biura w Krakowie?"))
    assert polish is not None and polish.language == "pl"


def test_the_ranking_features_keep_the_reading_they_were_fitted_with() -> None:
    # A change here changes every training question's features: a refit, not a tweak.
    assert feature_language("zrestartuj serwer docassist-api", "en") == "en"
    assert feature_language("Jak zgłosić incydent?", "en") == "pl"


def test_a_polish_request_to_act_without_polish_letters_is_refused_in_polish(
        engine: TurnEngine, store: Storage) -> None:
    result = engine.handle(message("zrestartuj serwer docassist-api"))
    assert result is not None and result.status == "rejected"
    assert (result.language, result.answer) == ("pl", i18n.text("rejected", "pl"))
    assert store.tool_calls() == []
    [row] = store.turns(result.conversation_id)
    assert (row["status"], row["tool_name"]) == ("rejected", None)
