"""Ranking quality of retrievers on labelled questions: recall@1/3/5 and MRR.

A case hits at k when any of the top-k chunks belongs to an expected document; no
threshold is applied (this measures ranking, not the answer/no-answer cut). Cases name their
expected documents by id (`expected_documents`) or by path relative to the corpus root
(`expected_paths`, mapped to ids through the catalog); held-out sets also carry `set`,
`language` and `split`, and the report gives the scores per set and language too.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import Final, Protocol, Self, runtime_checkable

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, model_validator

from docassist.core.ports import Retriever
from docassist.evaluation.decisions import load_jsonl

RANK_DEPTH: Final = 10
"""Chunks looked at per question; MRR counts a first hit below this as 0."""
RECALL_AT: Final = (1, 3, 5)


@runtime_checkable
class OrdersAlone(Protocol):
    """A retriever whose order costs less than its scores (the ranked retriever's reader
    scores its best pages and moves none)."""

    def order_only(self) -> Retriever: ...


def measured(retriever: Retriever) -> Retriever:
    """What ranking is measured on: the retriever's order alone where it offers one."""
    return retriever.order_only() if isinstance(retriever, OrdersAlone) else retriever


class RetrievalCase(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: str
    question: str
    expected_documents: list[str] = Field(default_factory=list)
    expected_paths: list[str] = Field(default_factory=list)
    set: str | None = None
    language: str | None = Field(default=None, validation_alias=AliasChoices("language", "lang"))
    split: str | None = None

    @model_validator(mode="after")
    def _expects_something(self) -> Self:
        if not self.expected_documents and not self.expected_paths:
            raise ValueError("a case needs expected_documents or expected_paths")
        return self

    @property
    def group(self) -> str:
        """`set/language` for the per-group scores (`-` where a case does not say)."""
        return f"{self.set or '-'}/{self.language or '-'}"


class RetrieverScores(BaseModel):
    recall_at_1: float
    recall_at_3: float
    recall_at_5: float
    mrr: float


class RetrievalCaseResult(BaseModel):
    id: str
    expected_documents: list[str]
    ranks: dict[str, int | None]
    top_documents: dict[str, list[str]]
    set: str | None = None
    language: str | None = None
    split: str | None = None


class RetrievalReport(BaseModel):
    total: int
    default: str
    retrievers: dict[str, RetrieverScores]
    cases: list[RetrievalCaseResult]
    baselines: dict[str, RetrieverScores] = Field(default_factory=dict)
    """Reference retrievers that are not ours (plain `bm25s`), over the same chunks."""
    groups: dict[str, dict[str, RetrieverScores]] = Field(default_factory=dict)
    """Scores per `set/language` (ours and the baselines), when the cases say."""


def load_retrieval_cases(lines: Iterable[str]) -> list[RetrievalCase]:
    """Cases from JSONL. An answer set's unanswerable case (`expected_documents: []` or
    `expected_paths: []`, nothing in either) has no page to rank and is left out, so one
    held-out file serves `eval answers` and `eval retrieval`; a line that names nothing
    expected at all is still an error."""
    return load_jsonl(["" if _unanswerable(line) else line for line in lines], RetrievalCase)


def _unanswerable(line: str) -> bool:
    try:
        data = json.loads(line)
    except (ValueError, RecursionError):
        return False  # load_jsonl names the bad line
    return (isinstance(data, dict)
            and [] in (data.get("expected_documents"), data.get("expected_paths"))
            and not data.get("expected_documents") and not data.get("expected_paths"))


def with_documents_by_path(cases: list[RetrievalCase],
                           ids_by_path: Mapping[str, str]) -> list[RetrievalCase]:
    """Cases whose `expected_paths` are turned into document ids; a path the catalog does not
    hold is a ValueError naming it (the corpus was not indexed, or indexed from elsewhere)."""
    resolved = []
    missing = sorted({path for case in cases for path in case.expected_paths
                      if path not in ids_by_path})
    if missing:
        raise ValueError(f"{len(missing)} expected path(s) not in the catalog under this root, "
                         f"e.g. {', '.join(missing[:3])}")
    for case in cases:
        ids = [*case.expected_documents, *(ids_by_path[path] for path in case.expected_paths)]
        resolved.append(case.model_copy(update={"expected_documents": list(dict.fromkeys(ids))}))
    return resolved


def first_hit_rank(retriever: Retriever, case: RetrievalCase) -> tuple[int | None, list[str]]:
    """1-based rank of the first chunk from an expected document, and the ranked doc ids."""
    documents = [hit.document.document_id for hit in retriever.search(case.question, RANK_DEPTH)]
    for rank, document_id in enumerate(documents, start=1):
        if document_id in case.expected_documents:
            return rank, documents
    return None, documents


def evaluate_retrieval(
    cases: list[RetrievalCase],
    retrievers: Mapping[str, Retriever],
    default: str,
    on_step: Callable[[], None] | None = None,
    baselines: Mapping[str, Retriever] | None = None,
) -> RetrievalReport:
    """Every retriever (and baseline) on every case; per-case ranks name them all."""
    every = {**retrievers, **(baselines or {})}
    results = []
    for case in cases:
        ranks: dict[str, int | None] = {}
        tops: dict[str, list[str]] = {}
        for name, retriever in every.items():
            ranks[name], documents = first_hit_rank(retriever, case)
            tops[name] = documents[:5]
            if on_step is not None:
                on_step()
        results.append(RetrievalCaseResult(
            id=case.id, expected_documents=case.expected_documents, ranks=ranks,
            top_documents=tops, set=case.set, language=case.language, split=case.split))
    groups: dict[str, list[RetrievalCaseResult]] = {}
    for case, result in zip(cases, results, strict=True):
        if case.set or case.language:
            groups.setdefault(case.group, []).append(result)
    return RetrievalReport(
        total=len(results),
        default=default,
        retrievers=scores_of(results, list(retrievers)),
        cases=results,
        baselines=scores_of(results, list(baselines or {})),
        groups={group: scores_of(members, list(every))
                for group, members in sorted(groups.items())},
    )


def scores_of(results: list[RetrievalCaseResult],
              names: list[str]) -> dict[str, RetrieverScores]:
    """Recall@1/3/5 and MRR of each retriever over these case results."""
    total = len(results)
    if not total:
        return {}

    def scores(name: str) -> RetrieverScores:
        ranks = [result.ranks[name] for result in results]

        def recall(k: int) -> float:
            return round(sum(1 for r in ranks if r is not None and r <= k) / total, 4)

        mrr = round(sum(1 / r for r in ranks if r is not None) / total, 4)
        return RetrieverScores(recall_at_1=recall(1), recall_at_3=recall(3),
                               recall_at_5=recall(5), mrr=mrr)

    return {name: scores(name) for name in names}
