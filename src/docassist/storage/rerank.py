"""The second stage of ranking: a learned model over cheap features of the fused candidates.

BM25 and dense search each propose their best chunks (RERANK_CANDIDATES of each, inside the
scope); every candidate is then described by features that say why it might answer — BM25
and cosine against the other candidates, how much of the question's weight (idf) its title,
section and text hold, how close together the question's words stand in it, how much of the
question its whole document holds, whether the question's words are known to the corpus at
all — and a logistic model trained on questions over other public collections
(scripts/train_ranker.py; never the evaluation sets) turns them into a rank score.
Candidates are ranked by it; a second model, which also reads what e5 makes of the best
pages (judge.py), gives the probability that a page answers, and that is their score: the
answer/refuse threshold is a probability, calibrated on the spent held-out answer sets
(docs/ranker-threshold.md).

Query-level features (vocabulary share, the unknown words' weight, the best coverage) move
every candidate's probability together: they change no ranking, they tell an unanswerable
question from an answerable one.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from docassist.core.documents import Chunk, DocumentInfo
from docassist.core.i18n.detection import detect_language
from docassist.core.ports import SearchHit
from docassist.core.scopes import EVERYTHING, Scope
from docassist.core.text import stem, terms
from docassist.storage.dense import DenseResult, DenseRetriever
from docassist.storage.judge import JUDGED_PAGES, Judge, judge_order, judge_text, judged
from docassist.storage.lexical_index import LexicalIndex
from docassist.storage.reader import READ_PASSAGES, Reader, glossed, in_english
from docassist.storage.search import Bm25Retriever
from docassist.storage.text_vectors import TextVectors

RERANK_CANDIDATES: Final = 30
"""Chunks each first-stage retriever proposes (their union is ranked)."""
WEIGHTS_FILE: Final = Path(__file__).with_name("ranker_weights.json")
"""The trained model (scripts/train_ranker.py writes it, with how it was trained)."""
MARGIN_CAP: Final = 4.0
"""A page's lead in rank score counts up to this: beyond, a small corpus's pages simply differ
(seven pages: any page leads by far), which says nothing about answering."""
FOREIGN_SHARE: Final = 0.6
"""A question with more of its weight in words no page holds is in another language."""
HEADING_CACHE_ENTRIES: Final = 20_000
"""Headings whose vectors are kept (a few MB at 512 floats each)."""
MIN_ANSWER_COSINE: Final = 0.15
"""A chunk this far in meaning from the question, in its text and in its heading, answers
nothing however alone its page stands ("dress code for client visits" shares one word with the
TLS page of a seven-page corpus, where any page leads by far). A guard for small corpora, not
a gain: on the training questions it refused 3 more (1 wrong page, 2 right), on the tune split
none."""
NEAR_COSINE: Final = 0.25
"""A chunk whose nearness (the larger cosine of its text and heading) reaches this makes its
page related to the question, named by a refusal as close. Not its score: that is the
probability that the page *answers*, which is low exactly when a question's words are absent
from a related page ("Jak przekazać dyżur?" and the incident page: 0.07 to answer, 0.30
near). Over the first held-out answer set's refusals, 0.25 names a page for 64 of 76, and the
right one for 23 of the 26 whose best page was right; the demo's off-topic questions stay at
or below 0.24."""
READ_RELATED: Final = -3.0
"""A judged page the reader scores this high, for a question it read glossed (a Polish one),
is related too, however far USE puts it: USE's cosine of a Polish question and an English
page rarely reaches NEAR_COSINE. English questions keep USE's nearness alone, which names
the right page for them about as often (80 of the 103 refused answerable English questions
of the spent held-out sets 1–8, 84 with the reader too). For the 152 refused answerable
Polish questions of those sets it names the right page for 84 instead of 74; the 122
refused unanswerable Polish questions get 5 more pages named among them (303 against 298).
The demo's off-topic and out-of-scope questions (a capital city, a dress code, parental
leave) score at most −8.3 on the pages they reach, but for "Ile dni urlopu mi
przysługuje?" on the TLS page (−3.37); −4 would name it (docs/evaluation-method.md)."""
PROXIMITY_WINDOW: Final = 12
"""Words: two of the question's words closer than this in a chunk count as near."""

FEATURES: Final = (
    "bm25_share", "bm25_reciprocal_rank", "cosine", "cosine_gap", "dense_reciprocal_rank",
    "coverage", "coverage_gap", "title_coverage", "section_coverage", "document_coverage",
    "document_chunks", "document_bm25_reciprocal_rank", "proximity", "foreign_cosine",
    "vocabulary_share", "unknown_weight", "best_coverage", "best_cosine", "query_words",
    "known_bm25_reciprocal_rank", "known_bm25_share", "unknown_cosine",
    "unknown_dense_reciprocal_rank", "missing_known_weight", "missing_known_share",
    "heading_cosine", "heading_cosine_gap", "other_language",
)


ANSWER_FEATURES: Final = (
    "margin", "coverage", "title_coverage", "cosine", "heading_cosine",
    "missing_known_weight", "partly_unknown", "first_of_retrievers", "retrievers_agree",
    "other_language", "judge_cosine", "judge_margin", "reader_score", "reader_glossed",
)
"""What tells whether a candidate's page answers at all: its lead over the best chunk of any
other page, how much of the question it holds (words, meaning, heading), how much of the
question's known words it lacks, whether BM25 and the embedding put their first chunk on
this page (and on one page at all: two retrievers that disagree about a question have
usually found no page that answers it), and whether the question is in the page's language
(a Polish question holds few of an English page's words even when the page answers it),
what e5 makes of the page's leading passage and of its lead over the next pages' (judge.py),
and what the reader makes of the page's best passages (reader.py): read as asked, or, for a
Polish question, glossed into English (its scores are worth less, so they get a weight of
their own).
Kept few and of an obvious direction: with more (the
corpus's vocabulary share, the unknown words' weight, the best cosine) the model fitted signs
that held on the training collections and not on a small bilingual one (the demo: "What is
the dress code?" answered from the TLS page, its unknown words counting *for* it)."""


@dataclass(frozen=True)
class Linear:
    """A linear model over standardised features (a logistic one for probabilities)."""

    means: npt.NDArray[np.float64]
    scales: npt.NDArray[np.float64]
    weights: npt.NDArray[np.float64]
    bias: float = 0.0

    @classmethod
    def of(cls, data: dict[str, Any]) -> Linear:
        return cls(np.asarray(data["means"], dtype=np.float64),
                   np.asarray(data["scales"], dtype=np.float64),
                   np.asarray(data["weights"], dtype=np.float64), float(data.get("bias", 0.0)))

    def logits(self, rows: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        return np.asarray(((rows - self.means) / self.scales) @ self.weights + self.bias)


READER_FEATURES: Final = ("reader_score", "reader_glossed")
UNREAD_FEATURES: Final = tuple(name for name in ANSWER_FEATURES if name not in READER_FEATURES)
"""What the answer model without the reader reads: a page the reader cannot read (not in
English) is judged by a model trained without it, not by a guess at its score."""
_UNREAD_COLUMNS: Final = [ANSWER_FEATURES.index(name) for name in UNREAD_FEATURES]


@dataclass(frozen=True)
class RankerModel:
    """The pairwise ranking model over FEATURES, the answerability models over
    ANSWER_FEATURES (and UNREAD_FEATURES, for pages the reader cannot read), and the
    probability above which the best page is answered."""

    ranking: Linear
    answering: Linear
    answering_unread: Linear
    threshold: float
    """Calibrated on the spent held-out answer sets (scripts/train_ranker.py calibrate)."""

    @classmethod
    def load(cls, path: Path = WEIGHTS_FILE) -> RankerModel:
        data = json.loads(path.read_text(encoding="utf-8"))
        if (tuple(data["features"]), tuple(data["answer_features"])) != (
                FEATURES, ANSWER_FEATURES):
            raise ValueError(f"{path} was trained on other features; train it again")
        return cls(Linear.of(data["ranking"]), Linear.of(data["answering"]),
                   Linear.of(data["answering_unread"]), float(data["threshold"]))

    def answer_probability(self, answers: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """The probability that each row's page answers (rows of ANSWER_FEATURES; a row the
        reader did not read has NaN in its columns)."""
        unread = np.isnan(answers[:, ANSWER_FEATURES.index("reader_score")])
        return np.where(unread, logistic(self.answering_unread.logits(answers[:, _UNREAD_COLUMNS])),
                        logistic(self.answering.logits(np.nan_to_num(answers))))

    def answer_probabilities(self, documents: Sequence[str], matrix: npt.NDArray[np.float64],
                             rank: npt.NDArray[np.float64], judge: npt.NDArray[np.float64],
                             reader: Read) -> npt.NDArray[np.float64]:
        """Per candidate, the probability that its page answers: 0 where the judge read
        nothing (a page below the best JUDGED_PAGES) or the passage is too far in meaning."""
        read = ~np.isnan(judge)
        probability = np.zeros(len(documents))
        if read.any():
            answers = answer_features(documents, matrix, rank, judge, reader)
            probability[read] = self.answer_probability(answers[read])
        return np.asarray(np.where(nearness(matrix) >= MIN_ANSWER_COSINE, probability, 0.0))


def logistic(logits: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Logits as probabilities."""
    return np.asarray(1.0 / (1.0 + np.exp(-logits)))


def nearness(matrix: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Each candidate's nearness in meaning to the question: the larger cosine of its text
    and of its heading."""
    return np.asarray(np.maximum(matrix[:, FEATURES.index("cosine")],
                                 matrix[:, FEATURES.index("heading_cosine")]))


def page_leaders(documents: Sequence[str], rank: npt.NDArray[np.float64]) -> list[int]:
    """Each page's best candidate, best page first (ties: the earlier candidate)."""
    leaders: dict[str, int] = {}
    for i in np.lexsort((np.arange(len(rank)), -rank)):
        leaders.setdefault(documents[int(i)], int(i))
    return list(leaders.values())


def reading(documents: Sequence[str], rank: npt.NDArray[np.float64],
            english: Sequence[bool]) -> list[list[int]]:
    """The candidates the reader reads: of each of the best JUDGED_PAGES pages, its best
    READ_PASSAGES in English (its model reads nothing else), best first."""
    order = [int(i) for i in np.lexsort((np.arange(len(rank)), -rank))]
    return [[i for i in order if documents[i] == documents[leader] and english[i]]
            [:READ_PASSAGES] for leader in page_leaders(documents, rank)[:JUDGED_PAGES]]


@dataclass(frozen=True)
class Read:
    """What the reader made of the judged pages: per candidate, its page's best score where
    the page's leading candidate stands (NaN elsewhere, and for a page it could not read),
    and whether the question was read glossed (a Polish one)."""

    scores: npt.NDArray[np.float64]
    glossed: bool

    @classmethod
    def of(cls, documents: Sequence[str], rank: npt.NDArray[np.float64],
           groups: Sequence[Sequence[int]], scores: Sequence[float], glossed: bool) -> Read:
        """`groups`: reading()'s; `scores`: one per candidate of theirs, in order."""
        column = np.full(len(documents), np.nan)
        at = 0
        for leader, group in zip(page_leaders(documents, rank), groups, strict=False):
            if group:
                column[leader] = max(scores[at:at + len(group)])
            at += len(group)
        return cls(column, glossed)

    def column(self, glossed: bool) -> npt.NDArray[np.float64]:
        """The scores where the question was read that way, 0 where it was not (NaN where
        nothing was read)."""
        return self.scores if glossed == self.glossed else np.where(
            np.isnan(self.scores), np.nan, 0.0)


def answer_features(documents: Sequence[str], matrix: npt.NDArray[np.float64],
                    rank: npt.NDArray[np.float64], judge: npt.NDArray[np.float64],
                    reader: Read) -> npt.NDArray[np.float64]:
    """One row of ANSWER_FEATURES per candidate (`documents`: each candidate's page;
    `judge`: the judge's cosine of the candidates it read, NaN elsewhere; `reader`: what the
    reader made of the judged pages)."""
    column = {name: matrix[:, FEATURES.index(name)] for name in ANSWER_FEATURES
              if name in FEATURES}
    margins = np.empty(len(documents))
    for position, document in enumerate(documents):
        others = [rank[i] for i, other in enumerate(documents) if other != document]
        margins[position] = rank[position] - max(others) if others else 1.0
    unknown = matrix[:, FEATURES.index("unknown_weight")]
    firsts = [{documents[int(i)] for i in np.flatnonzero(matrix[:, FEATURES.index(column)] == 1.0)}
              for column in ("bm25_reciprocal_rank", "dense_reciprocal_rank")]
    judge_margins = np.full(len(documents), np.nan)
    read = [int(i) for i in np.flatnonzero(~np.isnan(judge))]
    for position in read:
        rivals = [judge[i] for i in read if documents[i] != documents[position]]
        judge_margins[position] = judge[position] - max(rivals) if rivals else 0.0
    extra = {"rank_score": rank, "margin": np.minimum(margins, MARGIN_CAP),
             "judge_cosine": judge, "judge_margin": judge_margins,
             "reader_score": reader.column(glossed=False),
             "reader_glossed": reader.column(glossed=True),
             "first_of_retrievers": np.asarray([sum(document in first for first in firsts)
                                                for document in documents], dtype=np.float64),
             "retrievers_agree": np.full(len(documents), float(
                 all(firsts) and bool(firsts[0] & firsts[1]))),
             # Words no page holds, in a question the corpus otherwise knows ("dress code"
             # asked of the TLS page); not a question in another language (most unknown).
             "partly_unknown": np.where(unknown <= FOREIGN_SHARE, unknown, 0.0)}
    return np.column_stack([extra[name] if name in extra else column[name]
                            for name in ANSWER_FEATURES])


@dataclass(frozen=True)
class Candidate:
    chunk: Chunk
    document: DocumentInfo
    bm25: float
    """Raw BM25 (0 when BM25 did not propose it)."""
    bm25_rank: int | None
    dense_rank: int | None


@dataclass(frozen=True)
class Question:
    """The question's words as the features weigh them."""

    stems: dict[str, float]
    """Content-word stem → idf (an unknown word gets the largest idf the corpus could give)."""
    unknown: frozenset[str]
    foreign: bool
    """Most of its weight is in words the corpus does not hold (another language)."""
    top: float
    """The largest idf the corpus could give (an unknown word's)."""
    text: str
    """As asked (its language is told from its words)."""

    @classmethod
    def of(cls, text: str, index: LexicalIndex) -> Question:
        rows = max(len(index.chunk_ids), 1)
        top = math.log(rows + 1.0)
        weights: dict[str, float] = {}
        unknown: set[str] = set()
        for word in terms(text):
            key = stem(word)
            if key in weights:
                continue
            found = index.document_frequency(key)
            if not found:
                unknown.add(key)
            weights[key] = math.log((rows + 1.0) / (found + 0.5)) if found else top
        total = sum(weights.values()) or 1.0
        unknown_share = sum(weights[key] for key in unknown) / total
        return cls(weights, frozenset(unknown), unknown_share > FOREIGN_SHARE, top, text)

    def coverage(self, found: set[str]) -> float:
        total = sum(self.stems.values())
        return sum(w for key, w in self.stems.items() if key in found) / total if total else 0.0

    def missing(self, found: set[str]) -> tuple[float, float]:
        """Of the words the corpus knows, those the chunk lacks: the heaviest one's idf (on
        the corpus's scale, 0..1) and their share of the known words' weight. An
        unanswerable question that sounds like an answerable one usually lacks just one
        specific word ("dress code" on the office page)."""
        known = {key: w for key, w in self.stems.items() if key not in self.unknown}
        absent = [w for key, w in known.items() if key not in found]
        if not absent:
            return 0.0, 0.0
        return max(absent) / self.top, sum(absent) / sum(known.values())


def _stems(text: str) -> list[str]:
    return [stem(word) for word in terms(text)]


def _proximity(question: Question, words: list[str]) -> float:
    """1 when two different question words stand next to each other, falling with the gap;
    0 when fewer than two occur."""
    last: dict[str, int] = {}
    best = PROXIMITY_WINDOW
    for position, word in enumerate(words):
        if word not in question.stems:
            continue
        for other, at in last.items():
            if other != word:
                best = min(best, position - at)
        last[word] = position
    return 0.0 if best >= PROXIMITY_WINDOW else 1.0 / best


def features(question: Question, candidates: Sequence[Candidate],
             cosines: Sequence[float], vocabulary_share: float,
             heading_cosines: Sequence[float]) -> npt.NDArray[np.float64]:
    """One row of FEATURES per candidate."""
    if not candidates:
        return np.zeros((0, len(FEATURES)))
    bodies_text = [candidate.chunk.text.split("\n", 1)[-1] for candidate in candidates]
    bodies = [_stems(text) for text in bodies_text]
    found = [set(body) | set(_stems(c.chunk.section)) | set(_stems(c.document.title))
             for body, c in zip(bodies, candidates, strict=True)]
    covered = [question.coverage(words) for words in found]
    best_bm25 = max((c.bm25 for c in candidates), default=0.0) or 1.0
    best_cosine = max(cosines)
    best_coverage = max(covered)
    by_document: dict[str, list[int]] = {}
    for position, candidate in enumerate(candidates):
        by_document.setdefault(candidate.document.document_id, []).append(position)
    unknown_weight = 1.0 - question.coverage(set(question.stems) - question.unknown)
    asked_in = detect_language(question.text, "en")
    rows = []
    for position, candidate in enumerate(candidates):
        mates = by_document[candidate.document.document_id]
        bm25_ranks = [rank for m in mates if (rank := candidates[m].bm25_rank) is not None]
        cosine = cosines[position]
        rows.append([
            candidate.bm25 / best_bm25,
            1.0 / candidate.bm25_rank if candidate.bm25_rank else 0.0,
            cosine, cosine - best_cosine,
            1.0 / candidate.dense_rank if candidate.dense_rank else 0.0,
            covered[position], covered[position] - best_coverage,
            question.coverage(set(_stems(candidate.document.title))),
            question.coverage(set(_stems(candidate.chunk.section))),
            max(covered[m] for m in mates),
            min(len(mates), 5) / 5.0,
            1.0 / min(bm25_ranks) if bm25_ranks else 0.0,
            _proximity(question, bodies[position]),
            cosine if question.foreign else 0.0,
            vocabulary_share, unknown_weight, best_coverage, best_cosine,
            min(len(question.stems), 12) / 12.0,
            # How much BM25 or the embedding should count depends on how much of the
            # question the corpus knows (a Polish question over English pages: little).
            vocabulary_share / candidate.bm25_rank if candidate.bm25_rank else 0.0,
            vocabulary_share * candidate.bm25 / best_bm25,
            (1.0 - vocabulary_share) * cosine,
            (1.0 - vocabulary_share) / candidate.dense_rank if candidate.dense_rank else 0.0,
            *question.missing(found[position]),
            heading_cosines[position], heading_cosines[position] - max(heading_cosines),
            float(detect_language(bodies_text[position], "en") != asked_in),
        ])
    return np.asarray(rows, dtype=np.float64)


def heading(candidate: Candidate) -> str:
    """What a page calls the passage: its title and the section's heading (a question in
    another language meets these better than a long passage: "How do I report an
    incident?" and the section "Jak zgłosić incydent")."""
    section = _PART.sub("", candidate.chunk.section)
    title = candidate.document.title
    return f"{title}: {section}" if section and section != title else title


_PART: Final = re.compile(r"\s*\(\d+/\d+\)$")


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
        groups = reading(ranking.documents, ranking.rank,
                         [bool(text) and in_english(text) for text in texts])
        scores = self.reader.scores(query, [texts[i] for group in groups for i in group])
        readings = Read.of(ranking.documents, ranking.rank, groups, scores, glossed(query))
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
        calibrated on), not its own, and is related when it is near in meaning or, for a
        question read glossed, its page was read as related (READ_RELATED)."""
        page_scores = {self.documents[i]: float(scores[i]) for i in self.leading}
        read_pages = {self.documents[i] for i in self.leading
                      if read is not None and read.glossed
                      and not np.isnan(read.scores[i]) and read.scores[i] >= READ_RELATED}
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
