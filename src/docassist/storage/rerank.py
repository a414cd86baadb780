"""The second stage of ranking: the learned ranker over the fused candidates.

BM25 and dense search each propose their best chunks (RERANK_CANDIDATES of each, inside the
scope); every candidate is described by cheap features (ranker_features.py) and the ranking
model (ranker_model.py, trained on questions over other public collections by
scripts/train_ranker.py; never the evaluation sets) turns them into a rank score.
Candidates are ranked by it; the answer model, which also reads what e5 makes of the best
pages (judge.py) and what the reader makes of their passages (reader.py), gives the
probability that a page answers, and that is their score.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Final

import numpy as np
import numpy.typing as npt

from docassist.core.ports import SearchHit
from docassist.core.scopes import EVERYTHING, Scope
from docassist.storage.dense import DenseResult, DenseRetriever
from docassist.storage.judge import JUDGED_PAGES, Judge, judge_order, judge_text, judged
from docassist.storage.lexical_index import LexicalIndex
from docassist.storage.ranker_features import Candidate, Question, features, heading
from docassist.storage.ranker_model import (
    RankerModel,
    Read,
    logistic,
    nearness,
    page_leaders,
    reading,
)
from docassist.storage.reader import Reader, as_read_passage, glossed
from docassist.storage.search import Bm25Retriever
from docassist.storage.text_vectors import TextVectors

RERANK_CANDIDATES: Final = 30
"""Chunks each first-stage retriever proposes (their union is ranked)."""
HEADING_CACHE_ENTRIES: Final = 20_000
"""Headings whose vectors are kept (a few MB at 512 floats each)."""
NEAR_COSINE: Final = 0.25
"""A chunk whose nearness (the larger cosine of its text and heading) reaches this makes its
page related to the question, named by a refusal as close. Not its score: that is the
probability that the page *answers*, which is low exactly when a question's words are absent
from a related page ("Jak przekazać dyżur?" and the incident page: 0.07 to answer, 0.30
near). Over the first held-out answer set's refusals, 0.25 names a page for 64 of 76, and the
right one for 23 of the 26 whose best page was right; the demo's off-topic questions stay at
or below 0.24."""
READ_RELATED: Final = -3.0
"""A judged page the reader scores this high, read glossed (a Polish question, or a Polish
page), is related too, however far USE puts it: USE's cosine of a Polish question and an English
page rarely reaches NEAR_COSINE. English questions keep USE's nearness alone, which names
the right page for them about as often (80 of the 103 refused answerable English questions
of the spent held-out sets 1–8, 84 with the reader too). For the 152 refused answerable
Polish questions of those sets it names the right page for 84 instead of 74; the 122
refused unanswerable Polish questions get 5 more pages named among them (303 against 298).
The demo's off-topic and out-of-scope questions (a capital city, a dress code, parental
leave) score at most −8.3 on the pages they reach, but for "Ile dni urlopu mi
przysługuje?" on the TLS page (−3.37); −4 would name it (docs/evaluation-method.md)."""


class RankedRetriever:
    """Hybrid candidates ranked by the learned second stage; a hit's score is the probability
    that its page answers the question."""

    name = "ranked"

    def __init__(self, bm25: Bm25Retriever, dense: DenseRetriever, judge: Judge,
                 reader: Reader, model: RankerModel | None = None) -> None:
        self.bm25 = bm25
        self.dense = dense
        self.judge = judge
        self.reader = reader
        self.model = model or RankerModel.load()
        self.default_threshold = self.model.threshold
        self.headings = TextVectors(dense.embedder, HEADING_CACHE_ENTRIES)

    def search(self, query: str, top_k: int) -> list[SearchHit]:
        return self.search_in(query, top_k, EVERYTHING)

    def search_in(self, query: str, top_k: int, scope: Scope) -> list[SearchHit]:
        """The best chunk of each page first, pages by their best chunk, then the pages'
        other chunks: the first hits are that many different pages (what recall counts)."""
        ranking = self.ranking(query, scope)
        if ranking is None:
            return []
        read = ranking.leading[:JUDGED_PAGES]
        judged_pages = {ranking.documents[i] for i in read}
        # Only the judged pages' passages are read, so only theirs are made and told apart.
        texts = [judge_text(c.document.title, c.chunk.text)
                 if c.document.document_id in judged_pages else "" for c in ranking.candidates]
        cosines = self.judged_cosines(query, ranking)
        passages = [as_read_passage(text) if text else None for text in texts]
        groups = reading(ranking.documents, ranking.rank, [p is not None for p in passages])
        rows = [i for group in groups for i in group]
        scores = self.reader.scores(query, [p for i in rows if (p := passages[i]) is not None])
        asked_glossed = glossed(query)
        readings = Read.of(ranking.documents, ranking.rank, groups, scores,
                           [asked_glossed or passages[i] != texts[i] for i in rows])
        answers = self.model.answer_probabilities(
            ranking.documents, ranking.matrix, ranking.rank,
            judged(read, cosines, len(ranking.candidates)), readings)
        return ranking.judged_by(cosines).hits(answers, top_k, readings)

    def judged_cosines(self, query: str, ranking: Ranking) -> list[float]:
        """The judge's cosine of each of the best JUDGED_PAGES pages' leading passage."""
        return self.judge.cosines(query, [
            judge_text(ranking.candidates[i].document.title, ranking.candidates[i].chunk.text)
            for i in ranking.leading[:JUDGED_PAGES]])

    def ranking(self, query: str, scope: Scope) -> Ranking | None:
        """The candidates in the ranking model's order (None: nothing found)."""
        candidates, matrix = self.described(query, scope)
        if not candidates:
            return None
        documents = [candidate.document.document_id for candidate in candidates]
        rank = self.model.ranking.logits(matrix)
        return Ranking(candidates, matrix, documents, rank, page_leaders(documents, rank))

    def order_only(self) -> RankedOrder:
        """This retriever's order without the reader (what `eval retrieval` measures)."""
        return RankedOrder(self)

    def described(self, query: str, scope: Scope = EVERYTHING
                  ) -> tuple[list[Candidate], npt.NDArray[np.float64]]:
        """The candidates and their FEATURES (what training and ranking both read)."""
        index = self.bm25.index()
        lexical = self.bm25.ranked_ids(query, RERANK_CANDIDATES, index, scope=scope)
        dense = self.dense.nearest(query, RERANK_CANDIDATES, scope)
        candidates = self._candidates(index, lexical, dense)
        cosines = dense.cosines([c.chunk.chunk_id for c in candidates])
        question = Question.of(query, index)
        share = self.bm25.vocabulary_share(query)
        headings = self.headings.cosines(dense.query, [heading(c) for c in candidates])
        return candidates, features(question, candidates,
                                    [cosines[c.chunk.chunk_id] for c in candidates], share,
                                    headings)

    def _candidates(self, index: LexicalIndex, lexical: list[tuple[str, float]],
                    dense: DenseResult) -> list[Candidate]:
        bm25 = {chunk_id: (score, rank) for rank, (chunk_id, score) in enumerate(lexical, 1)}
        dense_rank = {chunk_id: rank for rank, chunk_id in enumerate(dense.chunk_ids, 1)}
        found: list[Candidate] = []
        for chunk_id in dict.fromkeys([*bm25, *dense_rank]):
            chunk = self.bm25.store.chunk(chunk_id)
            document = index.documents.get(chunk.document_id) if chunk else None
            if chunk is None or document is None:  # removed since the indexes were read
                continue
            raw, rank = bm25.get(chunk_id, (0.0, None))
            found.append(Candidate(chunk, document, raw, rank, dense_rank.get(chunk_id)))
        return found


@dataclass(frozen=True)
class Ranking:
    """One question's candidates, their features, pages and rank scores; `leading`: each
    page's best candidate, best page first."""

    candidates: list[Candidate]
    matrix: npt.NDArray[np.float64]
    documents: list[str]
    rank: npt.NDArray[np.float64]
    leading: list[int]

    def judged_by(self, cosines: Sequence[float]) -> Ranking:
        """The same candidates, the best pages in the judge's order (judge_order)."""
        return replace(self, leading=judge_order(self.leading, self.rank, cosines))

    def hits(self, scores: npt.NDArray[np.float64], top_k: int,
             read: Read | None = None) -> list[SearchHit]:
        """Each page's best chunk, best page first, then the rest by rank; every chunk of a
        page carries the score of the page's best chunk (what the answer model was
        calibrated on), not its own, and is related when it is near in meaning or, read
        glossed, its page was read as related (READ_RELATED)."""
        page_scores = {self.documents[i]: float(scores[i]) for i in self.leading}
        read_pages = set() if read is None else {
            self.documents[i] for i in self.leading
            if read.glossed[i] and read.scores[i] >= READ_RELATED}
        first = set(self.leading)
        order = [int(i) for i in np.lexsort((np.arange(len(self.rank)), -self.rank))]
        rest = [i for i in order if i not in first]
        near = nearness(self.matrix)
        return [SearchHit(chunk=self.candidates[i].chunk, document=self.candidates[i].document,
                          score=page_scores[self.documents[i]],
                          related=bool(near[i] >= NEAR_COSINE)
                          or self.documents[i] in read_pages)
                for i in [*self.leading, *rest][:top_k]]


class RankedOrder:
    """The ranked retriever's order (the judge's, over the best pages), each page scored by
    the ranking model's probability (not the answer scale its threshold is on: this view is
    for measuring order), without the reader's cost."""

    name = "ranked"

    def __init__(self, ranked: RankedRetriever) -> None:
        self.ranked = ranked
        self.default_threshold = ranked.default_threshold

    def search(self, query: str, top_k: int) -> list[SearchHit]:
        return self.search_in(query, top_k, EVERYTHING)

    def search_in(self, query: str, top_k: int, scope: Scope) -> list[SearchHit]:
        ranking = self.ranked.ranking(query, scope)
        if ranking is None:
            return []
        cosines = self.ranked.judged_cosines(query, ranking)
        return ranking.judged_by(cosines).hits(logistic(ranking.rank), top_k)
