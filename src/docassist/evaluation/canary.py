"""The canary: the labelled sets run with the current configuration and index, compared case
by case with the previous canary run. A case that passed then and fails now is a regression.

The sets are decision cases (`expected`) or answer cases (`expected_documents`), told apart
by their first line. The first run is the baseline: nothing to compare, no regressions.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from docassist.core import i18n
from docassist.core.messages import ChatMessage, ConversationKey
from docassist.core.results import TurnResult
from docassist.core.scopes import OPERATOR, Audience
from docassist.core.turn import TurnEngine
from docassist.evaluation.answers import evaluate_answers, load_answer_cases
from docassist.evaluation.decisions import evaluate_decisions, load_cases
from docassist.storage import Store

CANARY = "canary"
"""The kind of canary runs among the stored eval runs."""


class CanaryCase(BaseModel):
    model_config = ConfigDict(extra="forbid")

    set: str
    id: str
    passed: bool


class CanaryReport(BaseModel):
    """One canary run; `total` and `accuracy` are what `eval runs` lists for every run."""

    model_config = ConfigDict(extra="forbid")

    backend: str
    model: str
    catalog_version: str
    total: int
    accuracy: float
    cases: list[CanaryCase]
    baseline: str | None = None
    """The run compared against (None on the first run)."""
    regressions: list[CanaryCase] = Field(default_factory=list)
    fixed: list[CanaryCase] = Field(default_factory=list)
    configuration: str | None = None
    """The models and tools it ran with (runtime.canary_configuration); a serving process
    whose configuration differs from the latest run's runs the canary again."""


def scratch_turns(engine: TurnEngine, audience: Audience = OPERATOR
                  ) -> Callable[[str, str], TurnResult]:
    """Whole turns with the engine's parts, recorded in an in-memory store: evaluation
    conversations stay out of the real traces (and out of `docassist gaps`). The operator's
    audience (every collection) unless told otherwise."""
    scratch = TurnEngine(store=Store(":memory:"), catalog=engine.catalog,
                         retriever=engine.retriever, selector=engine.selector,
                         answerer=engine.answerer, registry=engine.registry,
                         options=engine.options, scopes=engine.scopes)

    def run_turn(case_id: str, question: str) -> TurnResult:
        key = ConversationKey(platform="eval", workspace="answers", channel="eval",
                              thread=case_id)
        result = scratch.handle(ChatMessage(key=key, user="eval", text=question,
                                            audience=audience))
        assert result is not None  # no event id: never a duplicate
        return result

    return run_turn


def run_set(name: str, lines: list[str], engine: TurnEngine, language: i18n.Language
            ) -> list[CanaryCase]:
    """Every case of one set, passed or not; ValueError for a line that is no case."""
    first: dict[str, Any] = next((json.loads(line) for line in lines if line.strip()), {})
    if "expected_documents" in first:
        answers = evaluate_answers(load_answer_cases(lines), scratch_turns(engine))
        return [CanaryCase(set=name, id=case.id, passed=case.answered_as_expected
                           and case.cites_expected is not False and case.citations_valid)
                for case in answers.cases]
    decisions = evaluate_decisions(load_cases(lines), catalog=engine.catalog,
                                   selector=engine.selector,
                                   tool_specs=engine.registry.specs(),
                                   default_language=language)
    return [CanaryCase(set=name, id=case.id, passed=case.ok) for case in decisions.cases]


def read_sets(sets: list[str], root: Path) -> dict[str, list[str]]:
    """The lines of each set (relative names from `root`); ValueError names what failed."""
    found = {}
    for name in sets:
        path = Path(name) if Path(name).is_absolute() else root / name
        try:
            found[name] = path.read_text(encoding="utf-8").splitlines()
        except OSError as error:
            raise ValueError(f"canary set {name}: {error.strerror or error}") from error
    return found


def compare(cases: list[CanaryCase], engine: TurnEngine, previous: tuple[str, Any] | None
            ) -> CanaryReport:
    """The report of this run beside the previous one (`(run id, report JSON)`)."""
    passed = sum(case.passed for case in cases)
    report = CanaryReport(
        backend=engine.selector.backend, model=engine.selector.model,
        catalog_version=engine.tool_catalog_version, total=len(cases),
        accuracy=passed / len(cases) if cases else 0.0, cases=cases)
    if previous is None:
        return report
    run_id, stored = previous
    before = {(case.set, case.id): case.passed
              for case in CanaryReport.model_validate_json(stored).cases}
    report.baseline = run_id
    report.regressions = [case for case in cases
                          if before.get((case.set, case.id)) is True and not case.passed]
    report.fixed = [case for case in cases
                    if before.get((case.set, case.id)) is False and case.passed]
    return report


class CanaryLog(Protocol):
    """Where canary runs are kept (the eval runs of the store)."""

    def latest_eval_run(self, kind: str) -> dict[str, Any] | None: ...

    def save_eval_run(self, kind: str, source: str, report: Any) -> str: ...


def run_canary(log: CanaryLog, engine: TurnEngine, sets: list[str], root: Path,
               language: i18n.Language, configuration: str | None = None
               ) -> tuple[str, CanaryReport]:
    """Run the sets, compare with the previous canary run, store this one; (run id, report).
    ValueError (nothing stored) for a set that cannot be read or holds no valid case."""
    lines = read_sets(sets, root)
    cases = [case for name, set_lines in lines.items()
             for case in run_set(name, set_lines, engine, language)]
    previous = log.latest_eval_run(CANARY)
    report = compare(cases, engine, (previous["run_id"], previous["report"])
                     if previous else None)
    report.configuration = configuration
    return log.save_eval_run(CANARY, ",".join(sets), report), report


def configuration_changed(log: CanaryLog, configuration: str) -> bool:
    """True when no canary has run yet, or the latest ran with other models or tools."""
    previous = log.latest_eval_run(CANARY)
    if previous is None:
        return True
    return CanaryReport.model_validate_json(previous["report"]).configuration != configuration


def canary_sets(setting: str) -> list[str]:
    return [name.strip() for name in setting.split(",") if name.strip()]
