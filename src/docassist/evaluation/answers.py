"""End-to-end answer evaluation and harvesting draft cases from traces.

Answers: each labelled question runs as one real turn; a case with `expected_documents` should
be answered citing one of them, a case with `[]` should get `no_answer`; every cited id must
be among the sources retrieved for it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from docassist.core.answering import CITATION
from docassist.core.documents import document_of_chunk
from docassist.core.results import TurnResult
from docassist.evaluation.decisions import load_jsonl


class AnswerCase(BaseModel):
    """A labelled question; `expected_documents: []` means it should not be answered."""

    model_config = ConfigDict(extra="ignore")

    id: str
    question: str
    expected_documents: list[str] = Field(default_factory=list)
    expected_sections: list[str] = Field(default_factory=list)
    """Optional: headings of the sections that answer it; one of them should be cited."""


def load_answer_cases(lines: list[str]) -> list[AnswerCase]:
    return load_jsonl(lines, AnswerCase)


class AnswerCaseResult(BaseModel):
    id: str
    status: str
    expected_documents: list[str]
    cited_documents: list[str]
    answered_as_expected: bool
    cites_expected: bool | None
    cites_expected_section: bool | None = None
    """None when the case names no section or was not answered."""
    citations_valid: bool


class AnswerReport(BaseModel):
    total: int
    answered_as_expected: float
    cites_expected: float
    cites_expected_section: float
    """Share of answered cases with `expected_sections` that cite one of those sections."""
    section_cases: int
    invalid_citations: int
    cases: list[AnswerCaseResult]



def judge(case: AnswerCase, result: TurnResult) -> AnswerCaseResult:
    cited = CITATION.findall(result.answer)
    retrieved = {source.chunk_id for source in result.sources}
    documents = sorted({document_of_chunk(chunk) for chunk in cited})
    sections = {source.section.casefold() for source in result.sources
                if source.chunk_id in cited}
    wanted = {section.casefold() for section in case.expected_sections}
    should_answer = bool(case.expected_documents)
    answered = result.status == "answered"
    return AnswerCaseResult(
        id=case.id, status=result.status, expected_documents=case.expected_documents,
        cited_documents=documents,
        answered_as_expected=answered == should_answer,
        cites_expected=(bool(set(documents) & set(case.expected_documents))
                        if answered and should_answer else None),
        cites_expected_section=bool(sections & wanted) if answered and wanted else None,
        citations_valid=set(cited) <= retrieved)


def evaluate_answers(cases: list[AnswerCase], run_turn: Callable[[str, str], TurnResult],
                     on_case: Callable[[], None] | None = None) -> AnswerReport:
    """`run_turn(case_id, question)` runs one fresh one-turn conversation."""
    results = []
    for case in cases:
        results.append(judge(case, run_turn(case.id, case.question)))
        if on_case is not None:
            on_case()
    judged = [r for r in results if r.cites_expected is not None]
    by_section = [r for r in results if r.cites_expected_section is not None]
    total = len(results)
    return AnswerReport(
        total=total,
        answered_as_expected=round(sum(r.answered_as_expected for r in results) / total, 4)
        if total else 0.0,
        cites_expected=round(sum(bool(r.cites_expected) for r in judged) / len(judged), 4)
        if judged else 0.0,
        cites_expected_section=round(
            sum(bool(r.cites_expected_section) for r in by_section) / len(by_section), 4)
        if by_section else 0.0,
        section_cases=len(by_section),
        invalid_citations=sum(not r.citations_valid for r in results),
        cases=results)


def harvest(turns: list[dict[str, Any]], negative_result_ids: set[str]
            ) -> tuple[list[dict[str, Any]], int]:
    """Draft cases from `no_answer` turns and turns with negative feedback.

    With raw text (save_raw on) a draft carries the question, ready to label; without it, only
    ids, statuses and sources, marked `text_unavailable`. Returns drafts and how many lack text.
    """
    drafts: list[dict[str, Any]] = []
    missing_text = 0
    for turn in turns:
        if turn["status"] != "no_answer" and turn["result_id"] not in negative_result_ids:
            continue
        raw = json.loads(turn["raw"]) if turn.get("raw") else None
        question = raw.get("question") if isinstance(raw, dict) else None
        reason = "no_answer" if turn["status"] == "no_answer" else "negative_feedback"
        draft: dict[str, Any] = {"id": f"harvest-{turn['result_id']}", "reason": reason,
                                 "result_id": turn["result_id"], "status": turn["status"],
                                 "source_ids": json.loads(turn["source_ids"] or "[]")}
        if question is None:
            missing_text += 1
            draft.update(question=None, text_unavailable=True)
        else:
            # Retrieval format: label expected_documents; decisions format: label expected.
            draft.update(question=question, message=question, history=[],
                         expected_documents=[], expected={"status": "TODO"})
        drafts.append(draft)
    return drafts, missing_text
