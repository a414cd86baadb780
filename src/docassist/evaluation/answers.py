"""End-to-end answer evaluation and harvesting draft cases from traces.

Each labelled question runs as one real turn. A case names the pages that answer it
(`expected_documents`, or `expected_paths` relative to the indexed root); `[]` means the
documents cannot answer it. An answer is judged by its primary citation — the first chunk it
cites — because that is the page an employee opens:

- **right**: answered, the primary citation on an expected page;
- **wrong**: answered from another page, or any answer to an unanswerable question;
- **refused answerable**: `no_answer` where the documents hold the answer;
- **unanswerable answered**: an answer where they do not (also counted as wrong);
- **section hit**: of the right answers whose case names `expected_sections`, the share whose
  primary citation is in one of them;
- **refused, right page named**: of the answerable cases, the share refused with a reply that
  names an expected page among the closest documents (the employee is pointed to the page,
  not told an answer), and the share whose reply names one first (the page they open first).

A wrong answer costs more than a refusal (DESIGN §11): `wrong` is reported against every
answer given, the others against the cases they are about.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from typing import Any, Final

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from docassist.core.documents import CITATION, document_of_chunk, whole_section
from docassist.core.results import TurnResult
from docassist.evaluation.decisions import changes, load_jsonl

_HEADING_MARKS: Final = re.compile(r"^#{1,6}\s+")
_NAMED: Final = re.compile(r"\(([A-Z][A-Z0-9_]*(?:-[A-Z0-9_]+)*)\)(?=;|\.$)")
"""A page a refusal names: `Title (DOCUMENT-ID)`, then `;` or the closing full stop
(core/answering.py), so a title's own `(API)` is not taken for it."""


class AnswerCase(BaseModel):
    """A labelled question; no expected page means it should not be answered."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    id: str
    question: str
    expected_documents: list[str] = Field(default_factory=list)
    expected_paths: list[str] = Field(default_factory=list)
    """Pages relative to the indexed root (mapped to ids through the catalog)."""
    expected_sections: list[str] = Field(default_factory=list)
    """Optional: headings of the sections that answer it; one of them should be cited."""
    set: str | None = None
    language: str | None = Field(default=None, validation_alias=AliasChoices("language", "lang"))
    split: str | None = None

    @property
    def answerable(self) -> bool:
        return bool(self.expected_documents or self.expected_paths)

    @property
    def group(self) -> str:
        return f"{self.set or '-'}/{self.language or '-'}"


def load_answer_cases(lines: list[str]) -> list[AnswerCase]:
    return load_jsonl(lines, AnswerCase)


def with_documents_by_path(cases: list[AnswerCase], ids_by_path: dict[str, str]
                           ) -> list[AnswerCase]:
    """`expected_paths` as document ids; a path the catalog does not hold is a ValueError."""
    missing = sorted({path for case in cases for path in case.expected_paths
                      if path not in ids_by_path})
    if missing:
        raise ValueError(f"{len(missing)} expected path(s) not in the catalog under this root, "
                         f"e.g. {', '.join(missing[:3])}")
    return [case.model_copy(update={"expected_documents": list(dict.fromkeys(
        [*case.expected_documents, *(ids_by_path[path] for path in case.expected_paths)]))})
        for case in cases]


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
    primary_document: str | None = None
    """The document of the answer's first citation (what the employee opens)."""
    verdict: str = ""
    """right, wrong, refused (answerable, no answer) or abstained (unanswerable, no answer)."""
    section_hit: bool | None = None
    """A right answer whose primary citation is in an expected section (None: not judged)."""
    names_expected: bool | None = None
    """A refused answerable case whose reply names an expected page among the closest
    documents (None: not a refused answerable case)."""
    names_expected_first: bool | None = None
    """The same, with an expected page named first (None: not a refused answerable case)."""
    group: str = "-/-"

    @property
    def handled_right(self) -> bool:
        """Answered from an expected page, or an unanswerable question refused."""
        return self.verdict in ("right", "abstained")


class GroupScores(BaseModel):
    answerable: int
    unanswerable: int
    answered: int
    right: float
    """Right answers / answerable cases."""
    wrong: float
    """Wrong answers (other page, or unanswerable answered) / answers given."""
    refused_answerable: float
    unanswerable_answered: float
    section_hit_rate: float
    section_cases: int
    refused_naming_expected: float = 0.0
    """Refused answerable cases whose reply names an expected page / answerable cases."""
    refused_naming_expected_first: float = 0.0
    """Refused answerable cases whose reply names an expected page first / answerable cases."""


class AnswerReport(BaseModel):
    total: int
    answered_as_expected: float
    cites_expected: float
    cites_expected_section: float
    """Share of answered cases with `expected_sections` that cite one of those sections."""
    section_cases: int
    invalid_citations: int
    cases: list[AnswerCaseResult]
    right: float = 0.0
    wrong: float = 0.0
    refused_answerable: float = 0.0
    unanswerable_answered: float = 0.0
    section_hit_rate: float = 0.0
    groups: dict[str, GroupScores] = Field(default_factory=dict)
    """The same figures per `set/language`, when cases say."""
    overall: GroupScores | None = None
    """The same figures over every case, with the counts."""
    backend: str = ""
    """The answerer's backend and model, the retriever and the tool catalog's version: what
    produced the run (`eval runs` lists all but the retriever)."""
    model: str = ""
    retriever: str = ""
    catalog_version: str = ""

    @property
    def accuracy(self) -> float:
        """What `eval runs` lists: the share of cases handled right (a right answer, or a
        refusal of an unanswerable question)."""
        return _share(sum(case.handled_right for case in self.cases), self.total)


class AnswerChange(BaseModel):
    id: str
    before: str
    """The verdict (right, wrong, refused, abstained)."""
    after: str
    page_before: str | None
    """The primary citation's document."""
    page_after: str | None


class AnswerRunComparison(BaseModel):
    run_a: str
    run_b: str
    accuracy_a: float
    accuracy_b: float
    fixed: list[AnswerChange]
    broken: list[AnswerChange]
    changed: list[AnswerChange]
    """Still as expected or still not, but another verdict or page (wrong page → refused)."""
    only_in_a: list[str]
    only_in_b: list[str]


def compare_answer_runs(run_a: str, a: AnswerReport, run_b: str, b: AnswerReport
                        ) -> AnswerRunComparison:
    """What changed between two answer runs, case by case."""
    found = changes(
        {case.id: case for case in a.cases}, {case.id: case for case in b.cases},
        ok=lambda case: case.handled_right,
        same=lambda old, new: (old.verdict, old.primary_document) == (new.verdict,
                                                                       new.primary_document))

    def listed(pairs: list[tuple[AnswerCaseResult, AnswerCaseResult]]) -> list[AnswerChange]:
        return [AnswerChange(id=old.id, before=old.verdict, after=new.verdict,
                             page_before=old.primary_document, page_after=new.primary_document)
                for old, new in pairs]

    return AnswerRunComparison(
        run_a=run_a, run_b=run_b, accuracy_a=a.accuracy, accuracy_b=b.accuracy,
        fixed=listed(found.fixed), broken=listed(found.broken), changed=listed(found.changed),
        only_in_a=found.only_in_a, only_in_b=found.only_in_b)


def _section(label: str) -> str:
    """The heading a case names: a long section's part (`Heading (2/3)`) is its heading, and
    a heading written with its Markdown marks ("## Leader failure", as the writer of the
    thirty-fifth set wrote them) is that heading."""
    return _HEADING_MARKS.sub("", whole_section(label).rsplit(" > ", 1)[-1].strip()).casefold()


def judge(case: AnswerCase, result: TurnResult) -> AnswerCaseResult:
    cited = list(dict.fromkeys(CITATION.findall(result.answer)))
    retrieved = {source.chunk_id for source in result.sources}
    documents = sorted({document_of_chunk(chunk) for chunk in cited})
    section_of = {source.chunk_id: source.section for source in result.sources}
    sections = {_section(section_of[chunk]) for chunk in cited if chunk in section_of}
    wanted = {_section(section) for section in case.expected_sections}
    answered = result.status == "answered"
    primary = document_of_chunk(cited[0]) if answered and cited else None
    right = answered and primary in case.expected_documents
    if not answered:
        verdict = "refused" if case.answerable else "abstained"
    else:
        verdict = "right" if right else "wrong"
    section_hit = (_section(section_of.get(cited[0], "")) in wanted
                   if right and wanted and cited else None)
    named = _NAMED.findall(result.answer) if verdict == "refused" else []
    names_expected = (bool(set(named) & set(case.expected_documents))
                      if verdict == "refused" else None)
    names_first = (bool(named) and named[0] in case.expected_documents
                   if verdict == "refused" else None)
    return AnswerCaseResult(
        id=case.id, status=result.status, expected_documents=case.expected_documents,
        cited_documents=documents,
        answered_as_expected=answered == case.answerable,
        cites_expected=(bool(set(documents) & set(case.expected_documents))
                        if answered and case.answerable else None),
        cites_expected_section=bool(sections & wanted) if answered and wanted else None,
        citations_valid=set(cited) <= retrieved, primary_document=primary, verdict=verdict,
        section_hit=section_hit, names_expected=names_expected,
        names_expected_first=names_first, group=case.group)


def _share(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


def group_scores(results: Iterable[AnswerCaseResult], cases: Iterable[AnswerCase]
                 ) -> GroupScores:
    pairs = list(zip(cases, results, strict=True))
    answerable = [r for c, r in pairs if c.answerable]
    unanswerable = [r for c, r in pairs if not c.answerable]
    answered = [r for _, r in pairs if r.verdict in ("right", "wrong")]
    sections = [r for r in answerable if r.section_hit is not None]
    return GroupScores(
        answerable=len(answerable), unanswerable=len(unanswerable), answered=len(answered),
        right=_share(sum(r.verdict == "right" for r in answerable), len(answerable)),
        wrong=_share(sum(r.verdict == "wrong" for r in answered), len(answered)),
        refused_answerable=_share(sum(r.verdict == "refused" for r in answerable),
                                  len(answerable)),
        unanswerable_answered=_share(sum(r.verdict == "wrong" for r in unanswerable),
                                     len(unanswerable)),
        section_hit_rate=_share(sum(bool(r.section_hit) for r in sections), len(sections)),
        section_cases=len(sections),
        refused_naming_expected=_share(sum(bool(r.names_expected) for r in answerable),
                                       len(answerable)),
        refused_naming_expected_first=_share(
            sum(bool(r.names_expected_first) for r in answerable), len(answerable)))


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
    overall = group_scores(results, cases)
    grouped: dict[str, tuple[list[AnswerCaseResult], list[AnswerCase]]] = {}
    for case, result in zip(cases, results, strict=True):
        if case.set or case.language:
            members = grouped.setdefault(case.group, ([], []))
            members[0].append(result)
            members[1].append(case)
    total = len(results)
    return AnswerReport(
        total=total,
        answered_as_expected=_share(sum(r.answered_as_expected for r in results), total),
        cites_expected=_share(sum(bool(r.cites_expected) for r in judged), len(judged)),
        cites_expected_section=_share(
            sum(bool(r.cites_expected_section) for r in by_section), len(by_section)),
        section_cases=len(by_section),
        invalid_citations=sum(not r.citations_valid for r in results),
        cases=results, right=overall.right, wrong=overall.wrong,
        refused_answerable=overall.refused_answerable,
        unanswerable_answered=overall.unanswerable_answered,
        section_hit_rate=overall.section_hit_rate, overall=overall,
        groups={name: group_scores(*members) for name, members in sorted(grouped.items())})


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
