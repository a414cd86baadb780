"""The figures of a decision run: scores per decision and per group, and the mistakes that
matter. A decision is the status plus, for a tool call, the tool (`action_proposed:
show_last_sources`): two selectors that call different tools are told apart."""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from pydantic import BaseModel

from docassist.evaluation.cases import CaseResult, Expected, Got


class DecisionScore(BaseModel):
    """One decision over a run: how often it was expected (`total`), proposed (`predicted`)
    and proposed where expected with the right arguments (`correct`)."""

    total: int
    predicted: int
    correct: int
    precision: float
    recall: float
    f1: float


class GroupScore(BaseModel):
    total: int
    correct: int
    accuracy: float
    macro_f1: float
    decision: str | None = None
    """The decision this group's cases expect, when they all expect one (kinds)."""
    precision: float | None = None
    """Precision, recall and F1 of `decision` over the whole run, not only this group."""
    recall: float | None = None
    f1: float | None = None


class ErrorKinds(BaseModel):
    """The mistakes that matter, counted over cases (see `error_kinds`)."""

    unnecessary_tool_calls: int = 0
    missed_clarifications: int = 0
    unnecessary_clarifications: int = 0
    wrong_refusals: int = 0
    tool_hallucinations: int = 0
    tool_hallucination_rate: float = 0.0


NO_TOOL_FITS: Final = frozenset({"no_suitable_tool", "rejected"})


def decision_label(status: str, action: str | None) -> str:
    return f"{status}:{action}" if status == "action_proposed" and action else status


def labels_of(result: CaseResult) -> tuple[str, str]:
    """(expected, got) decisions. A right case counts as the decision made (an expected
    `action_proposed` that names no tool takes the tool that was right)."""
    got = decision_label(result.got.status, result.got.action)
    if result.ok:
        return got, got
    return decision_label(result.expected.status, result.expected.action), got


def _ratio(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


def decision_scores(results: list[CaseResult]) -> dict[str, DecisionScore]:
    """Precision, recall and F1 per decision. A case counts as a hit only when right in
    full: the right tool with a wrong question is a miss, and a false alarm, of that tool."""
    pairs = [labels_of(result) for result in results]
    scores = {}
    for label in sorted({label for pair in pairs for label in pair}):
        total = sum(1 for expected, _ in pairs if expected == label)
        predicted = sum(1 for _, got in pairs if got == label)
        correct = sum(1 for result, (expected, _) in zip(results, pairs, strict=True)
                      if result.ok and expected == label)
        precision, recall = _ratio(correct, predicted), _ratio(correct, total)
        f1 = round(2 * precision * recall / (precision + recall), 4) if precision + recall else 0.0
        scores[label] = DecisionScore(total=total, predicted=predicted, correct=correct,
                                      precision=precision, recall=recall, f1=f1)
    return scores


def decisions_macro_f1(results: list[CaseResult]) -> float:
    """Mean F1 over the decisions that were expected or made."""
    scores = decision_scores(results)
    return round(sum(s.f1 for s in scores.values()) / len(scores), 4) if scores else 0.0


def macro_f1(pairs: list[tuple[str, str]]) -> float:
    """Mean F1 over the labels that occur as expected or got labels (plain pairs)."""
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


def group_scores(results: list[CaseResult], key: Callable[[CaseResult], str | None],
                 overall: dict[str, DecisionScore] | None = None) -> dict[str, GroupScore]:
    """Scores per group; with `overall` (the run's decision scores), a group whose cases
    all expect one decision also carries that decision's precision, recall and F1."""
    groups: dict[str, list[CaseResult]] = {}
    for result in results:
        name = key(result)
        if name is not None:
            groups.setdefault(name, []).append(result)
    scores = {}
    for name, members in sorted(groups.items()):
        score = GroupScore(total=len(members), correct=sum(m.ok for m in members),
                           accuracy=_ratio(sum(m.ok for m in members), len(members)),
                           macro_f1=decisions_macro_f1(members))
        expected = {decision_label(m.expected.status, m.expected.action) for m in members}
        if overall is not None and len(expected) == 1 and (label := expected.pop()) in overall:
            decision = overall[label]
            score = score.model_copy(update={"decision": label, "precision": decision.precision,
                                             "recall": decision.recall, "f1": decision.f1})
        scores[name] = score
    return scores


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
    kinds.tool_hallucination_rate = _ratio(kinds.tool_hallucinations, none_fits)
    return kinds


__all__ = [
    "DecisionScore",
    "ErrorKinds",
    "Expected",
    "Got",
    "GroupScore",
    "decision_label",
    "decision_scores",
    "decisions_macro_f1",
    "error_kinds",
    "group_scores",
    "macro_f1",
]
