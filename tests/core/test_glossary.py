"""The Polish→English glossaries the reader glosses a Polish question with."""

from __future__ import annotations

from pathlib import Path

from docassist.core.glossary import Glossary, default_glossary
from docassist.core.text import stem

LEAVE = Glossary([("urlop", ("leave", "holiday")), ("urlopu", ("leave",)),
                  ("ile", ("how many", "how much")), ("dni", ("days",))])


def test_each_word_becomes_its_first_english_word_in_the_questions_order() -> None:
    assert LEAVE.gloss("Ile dni urlopu?") == "how many days leave ?"


def test_a_word_the_glossary_lacks_stays_as_written() -> None:
    assert LEAVE.gloss("urlop w docassist-api, v2.1") == "leave w docassist-api , v2.1"


def test_an_inflection_the_glossary_does_not_list_finds_its_lemma_by_stem() -> None:
    assert "urlopem" not in LEAVE.forms and stem("urlopem") == stem("urlop")
    assert LEAVE.english("urlopem") == ("leave", "holiday")
    assert LEAVE.english("zlozyc") == ()


def test_the_glossary_file_reads_forms_tabs_and_commas(tmp_path: Path) -> None:
    path = tmp_path / "glossary.tsv"
    path.write_text("delegacja\ttravel, trip\n\nbez tłumaczenia\t\nwynagrodzenie\tsalary,pay\n",
                    encoding="utf-8")
    glossary = Glossary.load(path)
    assert glossary.english("delegacja") == ("travel", "trip")
    assert glossary.english("wynagrodzenie") == ("salary", "pay")
    assert glossary.english("bez") == ()


def test_the_shipped_glossaries_cover_workplace_and_question_words_typed_without_diacritics(
        ) -> None:
    glossary = default_glossary()
    assert "leave" in glossary.english("urlopu")
    assert "travel" in glossary.english("delegacje")
    assert glossary.english("zglosic") == glossary.english("zgłosić") != ()
    assert glossary.english("ile")[0] == "how many"


def test_an_english_question_is_glossed_into_the_first_polish_form_of_each_word() -> None:
    glossary = Glossary([("zgłosić", ("report", "submit")), ("zgłoszę", ("report",)),
                         ("incydent", ("incident",))])
    assert glossary.gloss_into_polish("How do I report an Incident?") == (
        "How do I zgłosić an incydent ?")
    assert glossary.gloss_into_polish("submit docassist-api logs") == (
        "zgłosić docassist-api logs")
