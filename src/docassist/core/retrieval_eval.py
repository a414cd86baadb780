"""Ranking quality of retrievers on labelled questions: recall@1/3/5 and MRR.

A case hits at k when any of the top-k chunks belongs to an expected document; no
threshold is applied (this measures ranking, not the answer/no-answer cut).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Final

from pydantic import BaseModel, ConfigDict, Field

from docassist.core.evaluation import load_jsonl
from docassist.core.ports import Retriever

RANK_DEPTH: Final = 10
"""Chunks looked at per question; MRR counts a first hit below this as 0."""
RECALL_AT: Final = (1, 3, 5)


class RetrievalCase(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: str
    question: str
    expected_documents: list[str] = Field(min_length=1)


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


class RetrievalReport(BaseModel):
    total: int
    default: str
    retrievers: dict[str, RetrieverScores]
    cases: list[RetrievalCaseResult]


def load_retrieval_cases(lines: Iterable[str]) -> list[RetrievalCase]:
    return load_jsonl(lines, RetrievalCase)


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
) -> RetrievalReport:
    results = []
    for case in cases:
        ranks: dict[str, int | None] = {}
        tops: dict[str, list[str]] = {}
        for name, retriever in retrievers.items():
            ranks[name], documents = first_hit_rank(retriever, case)
            tops[name] = documents[:5]
            if on_step is not None:
                on_step()
        results.append(RetrievalCaseResult(id=case.id, expected_documents=case.expected_documents,
                                           ranks=ranks, top_documents=tops))
    total = len(results)

    def scores(name: str) -> RetrieverScores:
        ranks = [result.ranks[name] for result in results]

        def recall(k: int) -> float:
            return round(sum(1 for r in ranks if r is not None and r <= k) / total, 4)

        mrr = round(sum(1 / r for r in ranks if r is not None) / total, 4)
        return RetrieverScores(recall_at_1=recall(1), recall_at_3=recall(3),
                               recall_at_5=recall(5), mrr=mrr)

    return RetrievalReport(
        total=total,
        default=default,
        retrievers={name: scores(name) for name in retrievers} if total else {},
        cases=results,
    )
