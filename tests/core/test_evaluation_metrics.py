"""Decision metrics: macro-F1, confusion, the error kinds that matter, run comparison."""

from __future__ import annotations

from docassist.core.tools import default_registry
from docassist.evaluation.decisions import (
    CaseResult,
    DecisionCase,
    Expected,
    Got,
    compare_runs,
    error_kinds,
    evaluate_decisions,
    macro_f1,
)
from docassist.storage import Store
from tests.helpers import ScriptedSelector, proposal


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
