"""From unanswered questions, 👎 and handoffs to the documents that need work.

After a turn is committed, `QuestionRecorder` keeps its question as an embedding (a vector,
no text unless save_raw) with the closest documents, off the user's path. `group_gaps`
groups the gap turns of a period by meaning for `docassist gaps` and the report.

Grouping is one pass of centroid threshold clustering: each question joins the group whose
mean vector is the most similar if that similarity reaches GAP_SIMILARITY, else it starts a
group. No number of groups to choose (unlike k-means), a threshold measured on paraphrases
(limits.py), and O(questions × groups) with numpy: a week of gaps is hundreds of rows. The
order (oldest first) decides ties; that is enough for a list that people read.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_all
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field

from docassist.core import i18n
from docassist.core.limits import GAP_DIGEST_GROUPS, GAP_DOCUMENTS, GAP_EXAMPLES, GAP_SIMILARITY
from docassist.core.ports import Catalog, Embedder, QuestionLog, QuestionTrace
from docassist.core.results import TurnResult
from docassist.core.state import RagResult
from docassist.core.statuses import QUESTION_STATUSES, GapKind

logger = logging.getLogger(__name__)


class QuestionRecorder:
    """Keeps what `gaps` needs of each question, on its own thread after the commit: the
    questions that queued while it wrote are written together, in one transaction (a turn
    process finishing 30 turns a second otherwise took the write lock once more per turn)."""

    def __init__(self, log: QuestionLog, embedder: Embedder | None, *, save_raw: bool) -> None:
        self.log = log
        self.embedder = embedder
        self.save_raw = save_raw
        self._worker: ThreadPoolExecutor | None = None
        self._pending: set[Future[None]] = set()
        self._queued: list[tuple[str, TurnResult, RagResult | None]] = []
        self._lock = threading.Lock()

    def after_turn(self, question: str | None, result: TurnResult, rag: RagResult | None
                   ) -> None:
        if not question or result.status not in QUESTION_STATUSES:
            return
        with self._lock:
            self._queued.append((question, result, rag))
            if self._worker is None:
                self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="questions")
            future = self._worker.submit(self._record_queued)
        self._pending.add(future)
        future.add_done_callback(self._pending.discard)

    def wait(self, timeout: float | None = None) -> None:
        """Block until the questions handed over so far are stored (tests, shutdown)."""
        wait_all(list(self._pending), timeout=timeout)

    def _record_queued(self) -> None:
        with self._lock:
            queued, self._queued = self._queued, []
        if not queued:
            return  # an earlier run took them
        try:
            questions = [question for question, _, _ in queued]
            vectors = (self.embedder.embed_queries(questions)
                       if self.embedder is not None else None)
            created_at = datetime.now(UTC).isoformat(timespec="milliseconds")
            self.log.record_questions([QuestionTrace(
                result_id=result.result_id, created_at=created_at,
                embedder=self.embedder.name if self.embedder is not None else None,
                vector=vectors[index] if vectors is not None else None,
                document_ids=(rag.closest_document_ids if rag else [])[:GAP_DOCUMENTS],
                question=question if self.save_raw else None)
                for index, (question, result, rag) in enumerate(queued)])
        except Exception:  # a lost gap row must never hurt a user's turn
            logger.exception("questions of %s not kept for gaps",
                             ", ".join(result.result_id for _, result, _ in queued))


class GapDocument(BaseModel):
    model_config = ConfigDict(extra="forbid")

    document_id: str
    title: str | None
    owner: str | None


class GapExample(BaseModel):
    """A question of the group: its text where raw text is kept, its hash always."""

    model_config = ConfigDict(extra="forbid")

    text: str | None
    sha256: str | None


class GapGroup(BaseModel):
    model_config = ConfigDict(extra="forbid")

    count: int
    kinds: dict[str, int]
    documents: list[GapDocument]
    examples: list[GapExample]
    reasons: list[str] = Field(default_factory=list)
    platforms: list[str] = Field(default_factory=list)
    first_seen: str
    last_seen: str


@dataclass
class Gap:
    """One gap turn: why it is one, and what is kept of its question."""

    result_id: str
    created_at: str
    platform: str
    kinds: list[GapKind]
    question: str | None
    question_sha256: str | None
    vector: npt.NDArray[np.float32] | None
    document_ids: list[str]
    reasons: list[str] = field(default_factory=list)

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Gap:
        return cls(result_id=row["result_id"], created_at=row["created_at"],
                   platform=row["platform"], kinds=list(row["kinds"]),
                   question=row.get("question"), question_sha256=row.get("question_sha256"),
                   vector=row.get("vector"), document_ids=list(row.get("document_ids") or []),
                   reasons=list(row.get("reasons") or []))


def group_gaps(gaps: Iterable[Gap], catalog: Catalog) -> list[GapGroup]:
    """Gaps grouped by meaning (vectors), else by closest document; biggest group first."""
    clusters: list[list[Gap]] = []
    sums: list[npt.NDArray[np.float32]] = []  # of each group's unit vectors
    centroids: list[npt.NDArray[np.float32]] = []  # the sums normalised
    by_document: dict[str, list[Gap]] = {}
    for gap in sorted(gaps, key=lambda gap: gap.created_at):
        if gap.vector is None or not np.any(gap.vector):
            key = gap.document_ids[0] if gap.document_ids else ""
            by_document.setdefault(key, []).append(gap)
            continue
        vector = (gap.vector / np.linalg.norm(gap.vector)).astype(np.float32)
        best = _closest(centroids, vector)
        if best is None:
            clusters.append([gap])
            sums.append(vector)
            centroids.append(vector)
            continue
        clusters[best].append(gap)
        sums[best] = sums[best] + vector
        centroids[best] = sums[best] / np.linalg.norm(sums[best])
    groups = [_group(members, catalog) for members in [*clusters, *by_document.values()]]
    return sorted(groups, key=lambda group: (-group.count, group.first_seen))


def _closest(centroids: list[npt.NDArray[np.float32]], vector: npt.NDArray[np.float32]
             ) -> int | None:
    """The most similar group of the same embedding size (the embedder may have changed
    within the period), if similar enough."""
    same = [index for index, centroid in enumerate(centroids) if len(centroid) == len(vector)]
    if not same:
        return None
    similarities = np.stack([centroids[index] for index in same]) @ vector
    best = int(np.argmax(similarities))
    return same[best] if similarities[best] >= GAP_SIMILARITY else None


def _group(members: list[Gap], catalog: Catalog) -> GapGroup:
    kinds = Counter(kind for gap in members for kind in gap.kinds)
    documents = Counter(document for gap in members for document in gap.document_ids)
    return GapGroup(
        count=len(members), kinds=dict(kinds),
        documents=[_document(document_id, catalog)
                   for document_id, _ in documents.most_common(GAP_DOCUMENTS)],
        examples=[GapExample(text=gap.question, sha256=gap.question_sha256)
                  for gap in members[-GAP_EXAMPLES:]],
        reasons=sorted({reason for gap in members for reason in gap.reasons}),
        platforms=sorted({gap.platform for gap in members}),
        first_seen=members[0].created_at, last_seen=members[-1].created_at)


def _document(document_id: str, catalog: Catalog) -> GapDocument:
    info = catalog.document(document_id)
    return GapDocument(document_id=document_id, title=info.title if info else None,
                       owner=info.owner if info else None)


def digest_text(groups: list[GapGroup], language: i18n.Language, days: int) -> str:
    """The weekly digest for an admin channel: the biggest groups, whom to ask (owners)."""
    if not groups:
        return i18n.text("gaps_digest_none", language)
    lines = [i18n.text("gaps_digest_title", language, days=days)]
    for group in groups[:GAP_DIGEST_GROUPS]:
        documents = ", ".join(
            f"{d.document_id} ({d.owner})" if d.owner else d.document_id
            for d in group.documents) or i18n.text("gaps_digest_no_document", language)
        example = next((f" — “{e.text}”" for e in reversed(group.examples) if e.text), "")
        lines.append(i18n.text(
            "gaps_digest_group", language, count=group.count, documents=documents,
            kinds=", ".join(f"{kind} {count}" for kind, count in group.kinds.items()),
            example=example))
    return "\n".join(lines)
