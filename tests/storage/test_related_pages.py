"""Which pages a refusal may name: the ranked retriever says whether each hit's page is
related to the question (SearchHit.related), apart from the chance that it answers. A page
is related when it is near in meaning (USE: NEAR_COSINE) or, for a question the reader read
glossed (a Polish one, where USE's cosine across languages is low), when the reader scored
it READ_RELATED or higher."""

from __future__ import annotations

import numpy as np

from docassist.core.documents import Chunk, DocumentInfo
from docassist.storage.ranker_features import FEATURES, Candidate
from docassist.storage.ranker_model import Read
from docassist.storage.rerank import NEAR_COSINE, READ_RELATED, Ranking

PAGES = ["DOC-NEAR", "DOC-READ", "DOC-FAR", "DOC-UNREAD"]


def _candidate(document_id: str) -> Candidate:
    document = DocumentInfo(document_id=document_id, title=document_id.title(), version="1",
                            source_path=f"{document_id}.md", content_sha256="0" * 64)
    chunk = Chunk(chunk_id=f"{document_id}-0000", document_id=document_id, ordinal=0,
                  section="", header="", text="text")
    return Candidate(chunk=chunk, document=document, bm25=1.0, bm25_rank=1, dense_rank=1)


def _ranking() -> Ranking:
    """Four pages, one candidate each, in this order: only DOC-NEAR is near in meaning."""
    matrix = np.zeros((len(PAGES), len(FEATURES)))
    matrix[:, FEATURES.index("cosine")] = [NEAR_COSINE + 0.05, 0.10, 0.10, 0.10]
    matrix[:, FEATURES.index("heading_cosine")] = [0.0, NEAR_COSINE - 0.01, 0.0, 0.0]
    return Ranking(candidates=[_candidate(page) for page in PAGES], matrix=matrix,
                   documents=list(PAGES), rank=np.asarray([4.0, 3.0, 2.0, 1.0]),
                   leading=[0, 1, 2, 3])


def _related(read: Read | None) -> dict[str, bool | None]:
    hits = _ranking().hits(np.asarray([0.1, 0.05, 0.02, 0.01]), top_k=4, read=read)
    return {hit.document.document_id: hit.related for hit in hits}


def _read(glossed: bool) -> Read:
    # DOC-UNREAD was not read (NaN): the reader says nothing of it.
    scores = np.asarray([-9.0, READ_RELATED + 0.5, READ_RELATED - 0.5, np.nan])
    return Read(scores, np.full(len(scores), glossed))


def test_a_page_the_reader_reads_as_related_is_named_for_a_glossed_question() -> None:
    assert _related(_read(glossed=True)) == {
        "DOC-NEAR": True, "DOC-READ": True, "DOC-FAR": False, "DOC-UNREAD": False}


def test_an_english_question_keeps_nearness_in_meaning_alone() -> None:
    assert _related(_read(glossed=False)) == {
        "DOC-NEAR": True, "DOC-READ": False, "DOC-FAR": False, "DOC-UNREAD": False}


def test_without_a_reading_only_nearness_counts() -> None:
    assert _related(None) == {
        "DOC-NEAR": True, "DOC-READ": False, "DOC-FAR": False, "DOC-UNREAD": False}


def test_the_score_stays_the_pages_answer_probability() -> None:
    """Relatedness does not touch the score the threshold is applied to."""
    hits = _ranking().hits(np.asarray([0.1, 0.05, 0.02, 0.01]), top_k=4,
                           read=_read(glossed=True))
    assert [hit.score for hit in hits] == [0.1, 0.05, 0.02, 0.01]
