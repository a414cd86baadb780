"""Offline evaluation of decisions on labelled cases.

A case runs the same path as a turn up to, not including, execution: validation, pending
clarification, follow-up resolution, selection and normalization, against the real catalog.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from docassist.core import i18n
from docassist.core.messages import InvalidMessage, validate_message
from docassist.core.planning import plan_turn
from docassist.core.ports import Catalog, SelectorModel
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


class Got(BaseModel):
    status: str
    action: str | None = None
    arguments: dict[str, Any] = Field(default_factory=dict)


class CaseResult(BaseModel):
    id: str
    expected: Expected
    got: Got
    ok: bool


class DecisionReport(BaseModel):
    total: int
    correct: int
    accuracy: float
    by_status: dict[str, dict[str, int]]
    backend: str
    model: str
    cases: list[CaseResult]


CaseT = TypeVar("CaseT", bound=BaseModel)


def load_jsonl(lines: Iterable[str], model: type[CaseT]) -> list[CaseT]:
    """One JSON object a line; blank lines skipped; a bad line is a ValueError naming it."""
    cases = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            cases.append(model.model_validate(json.loads(line)))
        except ValueError as error:
            raise ValueError(f"line {number}: {error}") from error
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
                                  ok=is_match(case.expected, got)))
        if on_case is not None:
            on_case(case)
    correct = sum(result.ok for result in results)
    totals = Counter(result.expected.status for result in results)
    hits = Counter(result.expected.status for result in results if result.ok)
    return DecisionReport(
        total=len(results),
        correct=correct,
        accuracy=round(correct / len(results), 4) if results else 0.0,
        by_status={status: {"total": totals[status], "correct": hits[status]}
                   for status in sorted(totals)},
        backend=selector.backend,
        model=selector.model,
        cases=results,
    )
