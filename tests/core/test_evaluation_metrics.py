"""Decision metrics: macro-F1 over decisions, scores per decision and kind, confusion, the
error kinds that matter, run comparison."""

from __future__ import annotations

from docassist.core.tools import default_registry
from docassist.evaluation.decision_metrics import decision_scores, decisions_macro_f1
from docassist.evaluation.decisions import (
    CaseResult,
    CaseState,
    DecisionCase,
    Expected,
    Got,
    compare_runs,
    error_kinds,
    evaluate_decisions,
    is_match,
    macro_f1,
)
from docassist.storage import Store
from docassist_testkit.fakes.model_server import proposal
from tests.helpers import ScriptedSelector


def result(case_id: str, expected: str, got: str) -> CaseResult:
    return CaseResult(id=case_id, expected=Expected(status=expected), got=Got(status=got),
                      ok=expected == got)


def test_macro_f1_and_error_kinds() -> None:
    results = [
        result("a", "action_proposed", "action_proposed"),
        result("b", "rejected", "action_proposed"),           # hallucinated tool
        result("c", "no_suitable_tool", "no_suitable_tool"),
        result("d", "clarification_needed", "action_proposed"),  # missed clarification
        result("e", "action_proposed", "clarification_needed"),  # unnecessary clarification
        result("f", "action_proposed", "rejected"),              # wrong refusal
    ]
    kinds = error_kinds(results)
    assert (kinds.unnecessary_tool_calls, kinds.missed_clarifications,
            kinds.unnecessary_clarifications, kinds.wrong_refusals,
            kinds.tool_hallucinations) == (2, 1, 1, 1, 1)
    assert kinds.tool_hallucination_rate == 0.5
    assert macro_f1([("x", "x"), ("y", "y")]) == 1.0
    assert macro_f1([("x", "y"), ("y", "x")]) == 0.0
    assert 0 < macro_f1([(r.expected.status, r.got.status) for r in results]) < 1


def test_a_run_reports_confusion_and_catalog_version(store: Store) -> None:
    cases = [DecisionCase(id="1", message="How do I renew TLS?",
                          expected=Expected(status="action_proposed")),
             DecisionCase(id="2", message="Restart it now",
                          expected=Expected(status="rejected"))]
    selector = ScriptedSelector(proposal("tool_call", "answer_from_documents", {"question": "q"}),
                                proposal("tool_call", "answer_from_documents", {"question": "q"}))
    report = evaluate_decisions(cases, catalog=store, selector=selector,
                                tool_specs=default_registry().specs(), default_language="en")
    assert report.confusion == {"action_proposed": {"action_proposed": 1},
                                "rejected": {"action_proposed": 1}}
    assert report.errors.tool_hallucination_rate == 1.0
    assert report.catalog_version and report.backend == "scripted"
    again = report.model_copy(update={"cases": [report.cases[0], report.cases[1].model_copy(
        update={"got": Got(status="rejected"), "ok": True})], "accuracy": 1.0})
    comparison = compare_runs("A", report, "B", again)
    assert [change.id for change in comparison.fixed] == ["2"]
    assert comparison.broken == [] and (comparison.accuracy_a, comparison.accuracy_b) == (0.5,
                                                                                         1.0)


def case(case_id: str, expected: Expected, got: Got, kind: str | None = None) -> CaseResult:
    return CaseResult(id=case_id, expected=expected, got=got, ok=is_match(expected, got),
                      kind=kind)


SOURCES = Expected(status="action_proposed", action="show_last_sources", arguments={})
METADATA = Expected(status="action_proposed", action="get_document_metadata",
                    arguments={"document_id": "DOC-TLS"})
SHOW = Got(status="action_proposed", action="show_last_sources")
META = Got(status="action_proposed", action="get_document_metadata",
           arguments={"document_id": "DOC-TLS"})


def test_macro_f1_is_over_decisions_so_two_tools_are_told_apart() -> None:
    """Issue 41: over statuses alone, a selector that swaps two tools scored a perfect
    macro-F1 (both are `action_proposed`), above its accuracy of 0."""
    right = [case("a", SOURCES, SHOW), case("b", METADATA, META)]
    swapped = [case("a", SOURCES, META), case("b", METADATA, SHOW)]
    assert macro_f1([(r.expected.status, r.got.status) for r in swapped]) == 1.0  # the old one
    assert decisions_macro_f1(right) == 1.0
    assert decisions_macro_f1(swapped) == 0.0
    scores = decision_scores(swapped)
    assert set(scores) == {"action_proposed:show_last_sources",
                           "action_proposed:get_document_metadata"}
    assert scores["action_proposed:show_last_sources"].model_dump() == {
        "total": 1, "predicted": 1, "correct": 0, "precision": 0.0, "recall": 0.0, "f1": 0.0}


def test_the_right_tool_with_a_wrong_question_is_a_miss_and_a_false_alarm() -> None:
    expected = Expected(status="action_proposed", action="answer_from_documents",
                        arguments_contains={"question": "tls"})
    results = [case("a", expected, Got(status="action_proposed",
                                       action="answer_from_documents",
                                       arguments={"question": "how do I renew the TLS cert?"})),
               case("b", expected, Got(status="action_proposed",
                                       action="answer_from_documents",
                                       arguments={"question": "and on linux?"}))]
    score = decision_scores(results)["action_proposed:answer_from_documents"]
    assert (score.total, score.predicted, score.correct) == (2, 2, 1)
    assert (score.precision, score.recall, score.f1) == (0.5, 0.5, 0.5)


def test_a_kind_carries_the_scores_of_the_decision_it_expects(store: Store) -> None:
    cases = [DecisionCase(id="1", message="show sources", kind="sources",
                          state=CaseState(has_last_sources=True), expected=SOURCES),
             DecisionCase(id="2", message="thanks!", kind="smalltalk",
                          expected=Expected(status="no_suitable_tool")),
             DecisionCase(id="3", message="draw me a chart", kind="no_tool",
                          expected=Expected(status="no_suitable_tool"))]
    selector = ScriptedSelector(proposal("tool_call", "show_last_sources"),
                                proposal("tool_call", "show_last_sources"),
                                proposal("no_suitable_tool", message="No tool for that."))
    report = evaluate_decisions(cases, catalog=store, selector=selector,
                                tool_specs=default_registry().specs(), default_language="en")
    show = report.by_decision["action_proposed:show_last_sources"]
    assert (show.total, show.predicted, show.correct, show.precision) == (1, 2, 1, 0.5)
    assert report.by_kind["sources"].decision == "action_proposed:show_last_sources"
    assert report.by_kind["sources"].precision == 0.5 and report.by_kind["sources"].recall == 1
    assert report.by_kind["smalltalk"].decision == "no_suitable_tool"
    assert report.by_kind["smalltalk"].recall == 0.5  # over the run: one of two
    assert report.by_kind["smalltalk"].accuracy == 0.0
    assert report.errors.tool_hallucination_rate == 0.5
    assert report.macro_f1 == round((2 / 3 + 2 / 3) / 2, 4)
