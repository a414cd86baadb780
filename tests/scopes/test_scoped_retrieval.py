"""The scope restricts retrieval inside the ranking: BM25, dense and hybrid candidates are
those of the scope's collections before `top_k`, never filtered afterwards."""

from __future__ import annotations

import pytest

from docassist.core.scopes import EVERYTHING, Scope
from docassist.core.scoping import ScopedCatalog, scoped
from docassist.storage import Bm25Retriever, Store
from docassist.storage.dense import DenseRetriever, HybridRetriever
from tests.scopes.scoped_corpus import (
    COLLECTIONS,
    TLS_QUESTION,
    collection_of,
    split_into_collections,
)

DEFAULT_ONLY = Scope(frozenset({"default"}))
ACCESS_QUESTION = "How do I request access to the database backup?"


@pytest.fixture
def split(store: Store) -> Store:
    split_into_collections(store)
    return store


@pytest.mark.parametrize("kind", ["bm25", "dense"])
def test_top_k_is_filled_from_the_scope_not_cut_from_everything(split: Store,
                                                               hybrid: HybridRetriever,
                                                               kind: str) -> None:
    retriever = hybrid.bm25 if kind == "bm25" else hybrid.dense
    everything = retriever.search(ACCESS_QUESTION, 10_000)
    top_two = [hit.chunk.chunk_id for hit in everything[:2]]
    beyond_top_two = 0
    for name in COLLECTIONS:
        in_scope = [hit.chunk.chunk_id for hit in everything
                    if collection_of(hit.document.document_id) == name]
        found = [hit.chunk.chunk_id for hit in
                 retriever.search_in(ACCESS_QUESTION, 2, Scope(frozenset({name})))]
        # The scope's own best two, in the full ranking's order, however far down it.
        assert found == in_scope[:2] and len(found) == min(2, len(in_scope))
        beyond_top_two += bool(set(found) - set(top_two))
    assert beyond_top_two >= 2  # top 2 of everything, filtered, would have lost them


def test_hybrid_fuses_only_candidates_of_the_scope(split: Store,
                                                    hybrid: HybridRetriever) -> None:
    assert collection_of(hybrid.search(ACCESS_QUESTION, 1)[0].document.document_id) == "hr"
    hits = hybrid.search_in(ACCESS_QUESTION, 4, DEFAULT_ONLY)
    assert len(hits) == 4
    assert {collection_of(hit.document.document_id) for hit in hits} == {"default"}


def test_an_empty_scope_finds_nothing_and_everything_is_the_plain_search(
        split: Store, hybrid: HybridRetriever) -> None:
    assert hybrid.search_in(TLS_QUESTION, 5, Scope(frozenset())) == []
    assert hybrid.bm25.search_in(TLS_QUESTION, 5, Scope(frozenset({"no-such"}))) == []
    plain = [hit.chunk.chunk_id for hit in hybrid.search(TLS_QUESTION, 5)]
    assert [hit.chunk.chunk_id for hit in hybrid.search_in(TLS_QUESTION, 5, EVERYTHING)
            ] == plain
    wide = Scope(frozenset({"default", "security", "ops", "hr"}))
    assert [hit.chunk.chunk_id for hit in scoped(hybrid, wide).search(TLS_QUESTION, 5)
            ] == plain


def test_the_approximate_index_is_restricted_too(split: Store) -> None:
    from docassist.models.embedders import get_embedder

    dense = DenseRetriever(split, get_embedder("use"), ann_min_rows=0)  # IVF even when small
    hybrid = HybridRetriever(Bm25Retriever(split), dense)
    hits = hybrid.search_in(TLS_QUESTION, 3, Scope(frozenset({"hr"})))
    assert hits and {hit.document.document_id for hit in hits} == {"DOC-ACCESS"}


def test_a_retagged_document_moves_scope_at_once(split: Store, hybrid: HybridRetriever) -> None:
    security = Scope(frozenset({"security"}))
    assert hybrid.search_in(TLS_QUESTION, 1, security)[0].document.document_id == "DOC-TLS"
    split.tag_document("DOC-TLS", None, "default")
    assert hybrid.search_in(TLS_QUESTION, 3, security) == []


def test_the_scoped_catalog_answers_out_of_scope_as_unknown(split: Store) -> None:
    catalog = ScopedCatalog(split, DEFAULT_ONLY)
    assert catalog.document("DOC-TLS") is None and split.document("DOC-TLS") is not None
    tls_chunk = split.current_chunks()[0]
    tls_chunk = next(c for c in split.current_chunks() if c.document_id == "DOC-TLS")
    assert catalog.chunk(tls_chunk.chunk_id) is None
    assert {collection_of(d.document_id) for d in catalog.documents()} == {"default"}
    assert catalog.document("DOC-INSTR") is not None
