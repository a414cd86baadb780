"""Offline evaluation of decisions on labelled cases.

A case runs the same path as a turn up to, not including, execution: validation, pending
clarification, follow-up resolution, selection and normalization, against the real catalog.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any, Final, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from docassist.core import i18n
from docassist.core.messages import InvalidMessage, validate_message
from docassist.core.planning import plan_turn
from docassist.core.ports import Catalog, SelectorModel
from docassist.core.selection import tool_catalog_version
from docassist.core.state import ConversationState, HistoryMessage, RagResult, Source


class CaseState(BaseModel):
    model_config = ConfigDict(extra="ignore")

    has_last_sources: bool = False


class Expected(BaseModel):
    model_config = ConfigDict(extra="ignore")

    status: str
    action: str | None = None
    arguments: dict[str, Any] | None = None
    arguments_contains: dict[str, str] | None = None


class DecisionCase(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: str
    message: Any
    history: list[HistoryMessage] = Field(default_factory=list)
    state: CaseState = Field(default_factory=CaseState)
    expected: Expected
    language: str | None = None
    kind: str | None = None
    split: str | None = None
    """Held-out sets mark `tune` and `test`; `eval decisions --split test` reports one."""


class Got(BaseModel):
    status: str
    action: str | None = None
    arguments: dict[str, Any] = Field(default_factory=dict)


class CaseResult(BaseModel):
    id: str
    expected: Expected
    got: Got
    ok: bool
    language: str | None = None
    kind: str | None = None


class GroupScore(BaseModel):
    total: int
    correct: int
    accuracy: float
    macro_f1: float


class ErrorKinds(BaseModel):
    """The mistakes that matter, counted over cases (see `error_kinds`)."""

    unnecessary_tool_calls: int = 0
    missed_clarifications: int = 0
    unnecessary_clarifications: int = 0
    wrong_refusals: int = 0
    tool_hallucinations: int = 0
    tool_hallucination_rate: float = 0.0


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
    """Only for cases labelled with a language or a kind (held-out sets)."""
    cases: list[CaseResult]


def group_scores(results: list[CaseResult], key: Callable[[CaseResult], str | None]
                 ) -> dict[str, GroupScore]:
    groups: dict[str, list[CaseResult]] = {}
    for result in results:
        name = key(result)
        if name is not None:
            groups.setdefault(name, []).append(result)
    return {name: GroupScore(
        total=len(members), correct=sum(m.ok for m in members),
        accuracy=round(sum(m.ok for m in members) / len(members), 4),
        macro_f1=macro_f1([(m.expected.status, m.got.status) for m in members]))
        for name, members in sorted(groups.items())}


NO_TOOL_FITS: Final = frozenset({"no_suitable_tool", "rejected"})


def macro_f1(pairs: list[tuple[str, str]]) -> float:
    """Mean F1 over the labels that occur as expected or got statuses."""
    labels = sorted({label for pair in pairs for label in pair})
    scores = []
    for label in labels:
        true_positive = sum(1 for e, g in pairs if e == label and g == label)
        predicted = sum(1 for _, g in pairs if g == label)
        actual = sum(1 for e, _ in pairs if e == label)
        precision = true_positive / predicted if predicted else 0.0
        recall = true_positive / actual if actual else 0.0
        scores.append(2 * precision * recall / (precision + recall) if precision + recall else 0.0)
    return round(sum(scores) / len(scores), 4) if scores else 0.0


def error_kinds(results: list[CaseResult]) -> ErrorKinds:
    """Unnecessary tool calls (a tool where the answer was not a tool), missed and unnecessary
    clarifications, wrong refusals, and tool hallucinations (a tool where none fits: the
    request was unsupported or to be refused)."""
    kinds = ErrorKinds()
    none_fits = 0
    for result in results:
        expected, got = result.expected.status, result.got.status
        proposed_tool = got == "action_proposed"
        if proposed_tool and expected != "action_proposed":
            kinds.unnecessary_tool_calls += 1
        if expected == "clarification_needed" and got != "clarification_needed":
            kinds.missed_clarifications += 1
        if got == "clarification_needed" and expected != "clarification_needed":
            kinds.unnecessary_clarifications += 1
        if got == "rejected" and expected != "rejected":
            kinds.wrong_refusals += 1
        if expected in NO_TOOL_FITS:
            none_fits += 1
            kinds.tool_hallucinations += proposed_tool
    kinds.tool_hallucination_rate = round(kinds.tool_hallucinations / none_fits, 4) \
        if none_fits else 0.0
    return kinds


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


def _state_for(case: DecisionCase) -> ConversationState:
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
    plan = plan_turn(message, _state_for(case), catalog=catalog, selector=selector,
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
    correct = sum(result.ok for result in results)
    totals = Counter(result.expected.status for result in results)
    hits = Counter(result.expected.status for result in results if result.ok)
    confusion: dict[str, dict[str, int]] = {}
    for result in results:
        row = confusion.setdefault(result.expected.status, {})
        row[result.got.status] = row.get(result.got.status, 0) + 1
    return DecisionReport(
        total=len(results),
        correct=correct,
        accuracy=round(correct / len(results), 4) if results else 0.0,
        macro_f1=macro_f1([(r.expected.status, r.got.status) for r in results]),
        by_status={status: {"total": totals[status], "correct": hits[status]}
                   for status in sorted(totals)},
        confusion=confusion,
        errors=error_kinds(results),
        backend=selector.backend,
        model=selector.model,
        catalog_version=tool_catalog_version(tool_specs),
        by_language=group_scores(results, lambda result: result.language),
        by_kind=group_scores(results, lambda result: result.kind),
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


def compare_runs(run_a: str, a: DecisionReport, run_b: str, b: DecisionReport
                 ) -> RunComparison:
    """What changed between two runs, case by case."""
    before = {case.id: case for case in a.cases}
    after = {case.id: case for case in b.cases}
    fixed, broken, changed = [], [], []
    for case_id in before.keys() & after.keys():
        old, new = before[case_id], after[case_id]
        change = CaseChange(id=case_id, before=old.got, after=new.got, ok_before=old.ok,
                            ok_after=new.ok)
        if not old.ok and new.ok:
            fixed.append(change)
        elif old.ok and not new.ok:
            broken.append(change)
        elif old.got != new.got:
            changed.append(change)
    return RunComparison(
        run_a=run_a, run_b=run_b, accuracy_a=a.accuracy, accuracy_b=b.accuracy,
        fixed=sorted(fixed, key=lambda c: c.id), broken=sorted(broken, key=lambda c: c.id),
        changed=sorted(changed, key=lambda c: c.id),
        only_in_a=sorted(before.keys() - after.keys()),
        only_in_b=sorted(after.keys() - before.keys()))


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
