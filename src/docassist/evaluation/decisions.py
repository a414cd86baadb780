"""Offline evaluation of decisions on labelled cases.

A case runs the same path as a turn up to, not including, execution: validation, pending
clarification, follow-up resolution, selection and normalization, against the real catalog.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any, Generic, NamedTuple, TypeVar

from pydantic import BaseModel, Field

from docassist.core import i18n
from docassist.core.messages import InvalidMessage, validate_message
from docassist.core.planning import plan_turn
from docassist.core.ports import Catalog, SelectorModel
from docassist.core.selection import selector_catalog_version
from docassist.core.state import ConversationState, RagResult, Source
from docassist.evaluation.cases import CaseResult, CaseState, DecisionCase, Expected, Got
from docassist.evaluation.decision_metrics import (
    DecisionScore,
    ErrorKinds,
    GroupScore,
    decision_label,
    decision_scores,
    decisions_macro_f1,
    error_kinds,
    group_scores,
    macro_f1,
)

__all__ = ["CaseResult", "CaseState", "DecisionCase", "DecisionReport", "DecisionScore",
           "ErrorKinds", "Expected", "Got", "GroupScore", "decision_label", "decision_report",
           "error_kinds", "evaluate_decisions", "is_match", "load_cases", "macro_f1",
           "state_for"]


class DecisionReport(BaseModel):
    total: int
    correct: int
    accuracy: float
    macro_f1: float
    by_status: dict[str, dict[str, int]]
    confusion: dict[str, dict[str, int]]
    errors: ErrorKinds
    backend: str
    model: str
    catalog_version: str = ""
    by_language: dict[str, GroupScore] = Field(default_factory=dict)
    by_kind: dict[str, GroupScore] = Field(default_factory=dict)
    """Only for cases labelled with a language or a kind (held-out sets). A kind's entry
    also carries the precision, recall and F1 of the decision it expects."""
    by_decision: dict[str, DecisionScore] = Field(default_factory=dict)
    """Precision, recall and F1 per decision (status, and the tool of a tool call)."""
    cases: list[CaseResult]


CaseT = TypeVar("CaseT", bound=BaseModel)


def load_jsonl(lines: Iterable[str], model: type[CaseT]) -> list[CaseT]:
    """One JSON object a line; blank lines skipped; a bad line is a ValueError naming it, and
    so is a file without any case (a run of 0 cases measures nothing)."""
    cases = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            cases.append(model.model_validate(json.loads(line)))
        except ValueError as error:
            raise ValueError(f"line {number}: {error}") from error
        except RecursionError as error:  # the json module recurses once per nesting level
            raise ValueError(f"line {number}: JSON nested too deeply") from error
    if not cases:
        raise ValueError("no cases: the file holds no JSON line")
    return cases


def load_cases(lines: Iterable[str]) -> list[DecisionCase]:
    return load_jsonl(lines, DecisionCase)


def state_for(case: DecisionCase) -> ConversationState:
    state = ConversationState(history=case.history)
    if case.state.has_last_sources:
        source = Source(chunk_id="EVAL-0000000000-0001", document_id="EVAL", title="eval",
                        version="0", section="eval", score=1.0, snippet="")
        state.last_result = RagResult(
            rag_id="eval", status="answered", answer="", sources=[source],
            retrieved_chunk_ids=[source.chunk_id], retriever="eval", top_k=1,
            similarity_threshold=None)
        state.last_sources = [source]
        state.last_source_turn_id = 1
    return state


def decide_case(
    case: DecisionCase,
    *,
    catalog: Catalog,
    selector: SelectorModel,
    tool_specs: list[dict[str, Any]],
    default_language: i18n.Language,
) -> Got:
    try:
        message = validate_message(case.message)
    except InvalidMessage as problem:
        return Got(status=problem.problem)
    language = i18n.detect_language(message, default_language)
    plan = plan_turn(message, state_for(case), catalog=catalog, selector=selector,
                     tool_specs=tool_specs, language=language)
    if plan.handoff:
        return Got(status="handoff")
    decision = plan.decision
    return Got(status=decision.status, action=decision.action, arguments=decision.arguments)


def is_match(expected: Expected, got: Got) -> bool:
    if expected.status != got.status:
        return False
    if expected.action is not None and expected.action != got.action:
        return False
    if expected.arguments is not None and expected.arguments != got.arguments:
        return False
    for name, fragment in (expected.arguments_contains or {}).items():
        value = got.arguments.get(name)
        if not isinstance(value, str) or fragment.casefold() not in value.casefold():
            return False
    return True


def evaluate_decisions(
    cases: list[DecisionCase],
    *,
    catalog: Catalog,
    selector: SelectorModel,
    tool_specs: list[dict[str, Any]],
    default_language: i18n.Language,
    on_case: Callable[[DecisionCase], None] | None = None,
) -> DecisionReport:
    results: list[CaseResult] = []
    for case in cases:
        got = decide_case(case, catalog=catalog, selector=selector, tool_specs=tool_specs,
                          default_language=default_language)
        results.append(CaseResult(id=case.id, expected=case.expected, got=got,
                                  ok=is_match(case.expected, got), language=case.language,
                                  kind=case.kind))
        if on_case is not None:
            on_case(case)
    return decision_report(results, backend=selector.backend, model=selector.model,
                           catalog_version=selector_catalog_version(tool_specs, selector))


def decision_report(results: list[CaseResult], *, backend: str, model: str,
                    catalog_version: str) -> DecisionReport:
    """The figures of a run from its case results (the selector's training reports its
    cross-validation with the same function)."""
    correct = sum(result.ok for result in results)
    totals = Counter(result.expected.status for result in results)
    hits = Counter(result.expected.status for result in results if result.ok)
    confusion: dict[str, dict[str, int]] = {}
    for result in results:
        row = confusion.setdefault(result.expected.status, {})
        row[result.got.status] = row.get(result.got.status, 0) + 1
    by_decision = decision_scores(results)
    return DecisionReport(
        total=len(results),
        correct=correct,
        accuracy=round(correct / len(results), 4) if results else 0.0,
        macro_f1=decisions_macro_f1(results),
        by_status={status: {"total": totals[status], "correct": hits[status]}
                   for status in sorted(totals)},
        confusion=confusion,
        errors=error_kinds(results),
        backend=backend,
        model=model,
        catalog_version=catalog_version,
        by_language=group_scores(results, lambda result: result.language),
        by_kind=group_scores(results, lambda result: result.kind, by_decision),
        by_decision=by_decision,
        cases=results,
    )


class CaseChange(BaseModel):
    id: str
    before: Got | None
    after: Got | None
    ok_before: bool | None
    ok_after: bool | None


class RunComparison(BaseModel):
    run_a: str
    run_b: str
    accuracy_a: float
    accuracy_b: float
    fixed: list[CaseChange]
    broken: list[CaseChange]
    changed: list[CaseChange]
    only_in_a: list[str]
    only_in_b: list[str]


C = TypeVar("C")


class Changes(NamedTuple, Generic[C]):
    """Two runs' results of the same cases, paired by case id (before, after), in id order."""

    fixed: list[tuple[C, C]]
    broken: list[tuple[C, C]]
    changed: list[tuple[C, C]]
    """Still right or still wrong, but another result."""
    only_in_a: list[str]
    only_in_b: list[str]


def changes(a: dict[str, C], b: dict[str, C], ok: Callable[[C], bool],
            same: Callable[[C, C], bool]) -> Changes[C]:
    """What changed between two runs' results, keyed by case id."""
    fixed, broken, changed = [], [], []
    for case_id in sorted(a.keys() & b.keys()):
        old, new = a[case_id], b[case_id]
        if not ok(old) and ok(new):
            fixed.append((old, new))
        elif ok(old) and not ok(new):
            broken.append((old, new))
        elif not same(old, new):
            changed.append((old, new))
    return Changes(fixed, broken, changed, sorted(a.keys() - b.keys()),
                   sorted(b.keys() - a.keys()))


def compare_runs(run_a: str, a: DecisionReport, run_b: str, b: DecisionReport
                 ) -> RunComparison:
    """What changed between two decision runs, case by case."""
    found = changes({case.id: case for case in a.cases}, {case.id: case for case in b.cases},
                    ok=lambda case: case.ok, same=lambda old, new: old.got == new.got)

    def listed(pairs: list[tuple[CaseResult, CaseResult]]) -> list[CaseChange]:
        return [CaseChange(id=old.id, before=old.got, after=new.got, ok_before=old.ok,
                           ok_after=new.ok) for old, new in pairs]

    return RunComparison(
        run_a=run_a, run_b=run_b, accuracy_a=a.accuracy, accuracy_b=b.accuracy,
        fixed=listed(found.fixed), broken=listed(found.broken), changed=listed(found.changed),
        only_in_a=found.only_in_a, only_in_b=found.only_in_b)


class ShadowReport(BaseModel):
    total: int
    agreement: float
    candidate_errors: int
    disagreements: dict[str, int]
    """`active status/action -> candidate status/action` and how often."""
    candidates: list[str]


def shadow_report(rows: list[dict[str, Any]]) -> ShadowReport:
    def label(status: str, action: str | None) -> str:
        return f"{status}/{action}" if action else status

    disagreements = Counter(
        f"{label(row['active_status'], row['active_action'])} -> "
        f"{label(row['candidate_status'], row['candidate_action'])}"
        for row in rows if not row["agree"])
    agreed = sum(1 for row in rows if row["agree"])
    return ShadowReport(
        total=len(rows),
        agreement=round(agreed / len(rows), 4) if rows else 0.0,
        candidate_errors=sum(1 for row in rows if row["candidate_error"]),
        disagreements=dict(disagreements.most_common()),
        candidates=sorted({f"{row['candidate_backend']}:{row['candidate_model']}"
                           for row in rows}))
