"""How `eval answers` judges one reply: a refusal that points to the right page is told apart
from one that does not (a refused answerable question is not all the same to an employee)."""

from __future__ import annotations

from docassist.core.results import TurnResult
from docassist.core.state import Source
from docassist.evaluation.answers import AnswerCase, group_scores, judge


def _reply(status: str, answer: str) -> TurnResult:
    return TurnResult(result_id="r", conversation_id="c", generation=1, turn_id=1,
                      status=status, answer=answer, language="en")


def _case(expected: list[str]) -> AnswerCase:
    return AnswerCase.model_validate({"id": "q", "question": "How do I renew it?",
                                      "expected_documents": expected})


REFUSED = "I could not find this in the documents."


def test_a_refusal_naming_the_expected_page_is_counted_as_pointing_to_it() -> None:
    pointing = judge(_case(["DOC-TLS"]), _reply(
        "no_answer", f"{REFUSED} The closest documents: TLS certificates (DOC-TLS); "
        "Backups (DOC-DB)."))
    elsewhere = judge(_case(["DOC-TLS"]), _reply(
        "no_answer", f"{REFUSED} The closest documents: TLS certificates v2 (DOC-TLS-V2)."))
    bare = judge(_case(["DOC-TLS"]), _reply("no_answer", REFUSED))
    assert (pointing.verdict, pointing.names_expected) == ("refused", True)
    # An id that merely starts like the expected one is another page.
    assert (elsewhere.verdict, elsewhere.names_expected) == ("refused", False)
    assert (bare.verdict, bare.names_expected) == ("refused", False)


def test_the_page_named_first_is_the_first_title_and_id_not_a_titles_own_brackets() -> None:
    second = judge(_case(["DOC-DB"]), _reply(
        "no_answer", f"{REFUSED} The closest documents: TLS certificates (DOC-TLS); "
        "Backups (DOC-DB)."))
    first = judge(_case(["DOC-API"]), _reply(
        "no_answer", "Nie znalazłem tego w dokumentach. Najbliższe dokumenty: "
        "Application Programming Interface (API) guide (DOC-API); Backups (DOC-DB)."))
    assert (second.names_expected, second.names_expected_first) == (True, False)
    assert (first.names_expected, first.names_expected_first) == (True, True)
    bare = judge(_case(["DOC-TLS"]), _reply("no_answer", REFUSED))
    assert bare.names_expected_first is False


def test_only_refused_answerable_cases_are_judged_for_pointing() -> None:
    unanswerable = judge(_case([]), _reply(
        "no_answer", f"{REFUSED} The closest documents: TLS certificates (DOC-TLS)."))
    assert (unanswerable.verdict, unanswerable.names_expected) == ("abstained", None)
    assert unanswerable.names_expected_first is None


def test_the_share_is_of_the_answerable_cases() -> None:
    cases = [_case(["DOC-TLS"]), _case(["DOC-TLS"]), _case(["DOC-DB"]), _case([])]
    results = [
        judge(cases[0], _reply("no_answer", f"{REFUSED} The closest documents: T (DOC-TLS).")),
        judge(cases[1], _reply("no_answer", REFUSED)),
        judge(cases[2], _reply("no_answer", f"{REFUSED} The closest documents: T (DOC-TLS); "
                               "B (DOC-DB).")),
        judge(cases[3], _reply("no_answer", f"{REFUSED} The closest documents: T (DOC-TLS).")),
    ]
    scores = group_scores(results, cases)
    assert (scores.refused_answerable, scores.refused_naming_expected) == (1.0, 0.6667)
    assert scores.refused_naming_expected_first == 0.3333


def test_an_expected_section_written_with_its_heading_marks_is_that_heading() -> None:
    """The writer of the thirty-fifth set wrote "## Leader failure": no answer could hit it."""
    chunk = "DOC-FAILURES-0123456789-0002"
    reply = TurnResult(
        result_id="r", conversation_id="c", generation=1, turn_id=1, status="answered",
        answer=f"Elect a new leader. [{chunk}]", language="en",
        sources=[Source(chunk_id=chunk, document_id="DOC-FAILURES", title="Failures",
                        version="1", section="Leader failure (2/3)", score=0.9, snippet="")])
    case = AnswerCase.model_validate({"id": "q", "question": "what if the leader fails?",
                                      "expected_documents": ["DOC-FAILURES"],
                                      "expected_sections": ["## Leader failure"]})
    assert judge(case, reply).section_hit is True
