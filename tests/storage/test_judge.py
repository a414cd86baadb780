"""The judge's part in answering (storage/judge.py): only the ranker's best JUDGED_PAGES can
be answered from, and the judge orders them by its cosine of each one's leading passage (so
ranking is measured with it, and without the reader)."""

from __future__ import annotations

import math

import numpy as np

from docassist.core.scopes import EVERYTHING
from docassist.core.turn import TurnEngine
from docassist.models.embedders import get_embedder
from docassist.storage.judge import JUDGED_PAGES, ORDER_WEIGHT, Judge, judge_order, judged
from docassist.storage.reader import Reader
from docassist.storage.rerank import RankedRetriever
from tests.helpers import message


def test_the_judges_column_is_empty_where_it_read_nothing() -> None:
    column = judged([4, 1], [0.8, 0.7], 6)
    assert [round(v, 2) if not math.isnan(v) else None for v in column] == [
        None, 0.7, None, None, 0.8, None]


def test_the_judge_orders_the_pages_it_read_by_logit_and_cosine_and_keeps_the_rest() -> None:
    rank = np.asarray([3.0, 2.0, 1.0, 0.5, -4.0])
    leading = [0, 1, 2, 3, 4]
    # Page 2 is a logit behind page 0 but reads 0.05 nearer: 1 + 120 × 0.05 > 2.
    cosines = [0.80, 0.80, 0.85]
    assert rank[0] - rank[2] < ORDER_WEIGHT * 0.05
    assert judge_order(leading, rank, cosines) == [2, 0, 1, 3, 4]
    # Equal scores keep the ranker's order; pages the judge did not read never move up.
    assert judge_order(leading, np.zeros(5), [0.8, 0.8, 0.8]) == [0, 1, 2, 3, 4]
    assert judge_order(leading, rank, []) == leading


def test_pages_beyond_the_rankers_best_cannot_be_answered_from(
        ranked_engine: TurnEngine) -> None:
    retriever = ranked_engine.retriever
    assert isinstance(retriever, RankedRetriever)
    question = "How do I renew the TLS certificate?"
    ranking = retriever.ranking(question, EVERYTHING)
    assert ranking is not None
    best = {ranking.documents[i] for i in ranking.leading[:JUDGED_PAGES]}
    hits = retriever.search(question, 30)
    pages = list(dict.fromkeys(hit.document.document_id for hit in hits))
    assert len(pages) > JUDGED_PAGES
    scores = {hit.document.document_id: hit.score for hit in hits}
    assert pages[0] == "DOC-TLS" and scores["DOC-TLS"] > 0.9
    assert all(scores[page] == 0.0 for page in pages if page not in best)
    # Past the judged pages the ranker's order stands.
    ranked_pages = [ranking.documents[i] for i in ranking.leading]
    assert pages[JUDGED_PAGES:] == ranked_pages[JUDGED_PAGES:len(pages)]


def test_the_order_alone_is_the_judged_order_without_reading(ranked_engine: TurnEngine) -> None:
    judged_retriever = ranked_engine.retriever
    assert isinstance(judged_retriever, RankedRetriever)
    unread = Reader()
    alone = RankedRetriever(judged_retriever.bm25, judged_retriever.dense,
                            Judge(get_embedder("e5")), unread).order_only()
    for question in ("How do I renew the TLS certificate?", "Jak zgłosić incydent?",
                     "What's the wifi password?", "kto zatwierdza dostęp administratora?"):
        judged_hits = judged_retriever.search(question, 12)
        hits = alone.search(question, 12)
        assert [h.chunk.chunk_id for h in hits] == [h.chunk.chunk_id for h in judged_hits]
        assert all(0 < hit.score < 1 for hit in hits)
    assert len(unread.kept) == 0  # the reader read nothing


def test_a_refusal_names_the_close_pages_in_the_judges_order(ranked_engine: TurnEngine) -> None:
    """The demo says nothing of how long new documents take to appear; the worker page and
    the onboarding FAQ are both near in meaning. The ranker puts the worker page first, the
    judge the FAQ, and the refusal names them as the judge orders them."""
    retriever = ranked_engine.retriever
    assert isinstance(retriever, RankedRetriever)
    question = ("Why do newly published documents take so long to show up in the assistant's "
                "answers?")
    ranking = retriever.ranking(question, EVERYTHING)
    assert ranking is not None
    ranked = [ranking.documents[i] for i in ranking.leading[:JUDGED_PAGES]]
    judged_order = [ranking.documents[i] for i in judge_order(
        ranking.leading, ranking.rank, retriever.judged_cosines(question, ranking))]
    assert ranked[:2] == ["DOC-WORKER", "DOC-ONBOARDING-FAQ"]
    assert judged_order[:2] == ["DOC-ONBOARDING-FAQ", "DOC-WORKER"]
    result = ranked_engine.handle(message(question))
    assert result is not None and result.status == "no_answer"
    named = result.answer.split(":", 1)[1]
    assert named.index("(DOC-ONBOARDING-FAQ)") < named.index("(DOC-WORKER)")
