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

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Final

import numpy as np
import numpy.typing as npt

from docassist.core.glossary import default_glossary
from docassist.core.i18n.detection import feature_language
from docassist.core.passages import chunk_body
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

ONLY_POLISH_LETTERS: Final = re.compile(r"[ąćęłńśźż]", re.IGNORECASE)
"""Letters no other language we meet writes (Spanish and others write "ó" too)."""
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
        other chunks: the first hits are that many different pages (what recall counts).
        Over Polish pages, an English question glossed into Polish as well, unless a page
        found as asked already reaches the threshold."""
        return in_both_languages(self, query, top_k, scope, self.answered,
                                 enough=self.default_threshold)

    def answered(self, query: str, ranking: Ranking, top_k: int) -> list[SearchHit]:
        """The ranking's hits, each page scored by the probability that it answers."""
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

    def of_pages(self, pages: set[str]) -> Ranking | None:
        """Only these pages' candidates, with the features they were given among all (None:
        none of them is here)."""
        kept = [i for i, document in enumerate(self.documents) if document in pages]
        if not kept:
            return None
        rank = self.rank[kept]
        documents = [self.documents[i] for i in kept]
        return Ranking([self.candidates[i] for i in kept], self.matrix[kept], documents, rank,
                       page_leaders(documents, rank))

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
        return in_both_languages(self.ranked, query, top_k, scope, self.ordered)

    def ordered(self, query: str, ranking: Ranking, top_k: int) -> list[SearchHit]:
        cosines = self.ranked.judged_cosines(query, ranking)
        return ranking.judged_by(cosines).hits(logistic(ranking.rank), top_k)


def in_both_languages(ranked: RankedRetriever, query: str, top_k: int, scope: Scope,
                      hits: Callable[[str, Ranking, int], list[SearchHit]],
                      enough: float | None = None) -> list[SearchHit]:
    """`hits` of the question's ranking and, for an English question whose candidates hold
    Polish pages too, the hits of the question glossed into Polish among those pages alone:
    first the pages that score above every page found as asked, last the others, so that a
    refusal still names the pages close to the question as asked.

    The ranking model learned Polish questions over English pages, where every page is
    foreign alike, and no English question over Polish pages: in a corpus of both, the words
    of an English question find the English pages, and a Polish page that answers it ("How
    do I report an incident?" and "Jak zgłosić incydent") ranks below them all. The gloss
    is half Polish, half the English words the glossary lacks, which the model never saw
    either: English pages are judged by the question as asked, not by it (over the demo it
    put the FAQ at 0.76 for a question the FAQ does not answer). A Polish question is not
    glossed into English: the model ranks English pages for it as it learned to. With
    `enough`, a question one of whose pages found as asked scores that much is not glossed:
    it is answered as before, and ranking and reading a second time doubled the time an
    English question took over the demo."""
    ranking = ranked.ranking(query, scope)
    if ranking is None:
        return []
    found = hits(query, ranking, top_k)
    if enough is not None and any(hit.score >= enough for hit in found):
        return found
    polish = glossed_into_polish(query, ranking.candidates)
    glossed = ranked.ranking(polish, scope) if polish else None
    polish_ranking = glossed.of_pages({
        candidate.document.document_id for candidate in glossed.candidates
        if in_polish(candidate.chunk.text)}) if glossed else None
    if polish is None or polish_ranking is None:
        return found
    glossed_hits = [replace(hit, found_by=GLOSSED_INTO_POLISH)
                    for hit in hits(polish, polish_ranking, top_k)]
    best = max((hit.score for hit in found), default=0.0)
    ahead = [hit for hit in glossed_hits if hit.score > best]
    merged: dict[str, SearchHit] = {}
    for hit in [*ahead, *found, *glossed_hits]:
        merged.setdefault(hit.chunk.chunk_id, hit)
    return list(merged.values())[:top_k]


GLOSSED_INTO_POLISH: Final = "glossed_into_polish"
"""SearchHit.found_by of a hit found by the question glossed into Polish."""


def glossed_into_polish(query: str, candidates: Sequence[Candidate]) -> str | None:
    """An English question glossed into Polish, when one of its candidates is a Polish
    passage (None otherwise, or when the gloss changes no word)."""
    if feature_language(query, "en") != "en" or not any(
            in_polish(candidate.chunk.text) for candidate in candidates):
        return None
    polish = default_glossary().gloss_into_polish(query)
    return polish if polish.split() != query.split() else None


def in_polish(chunk_text: str) -> bool:
    """A chunk Polish by its words and written with letters only Polish writes: an English
    page's code or list of links can hold more words that Polish also has ("na", "go")
    than English ones, and a Spanish passage has both those words and "ó"."""
    body = chunk_body(chunk_text)
    return bool(ONLY_POLISH_LETTERS.search(body)) and feature_language(body, "en") == "pl"
