"""Dense and hybrid retrieval with the embedded multilingual embedder (no network)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from docassist.core.documents import parse_document
from docassist.models.embedders import get_embedder
from docassist.storage import Bm25Retriever, Store
from docassist.storage.dense import DenseRetriever, HybridRetriever
from docassist.storage.limits import DENSE_SIMILARITY_THRESHOLD


@pytest.fixture
def dense(store: Store) -> DenseRetriever:
    return DenseRetriever(store, get_embedder("use"))


def test_vectors_are_normalised_and_deterministic() -> None:
    embedder = get_embedder("use")
    vectors = embedder.embed_passages(["Jak odnowić certyfikat?", "How to renew a certificate?"])
    assert vectors.shape == (2, embedder.dimensions) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    again = embedder.embed_queries(["Jak odnowić certyfikat?"])
    assert np.allclose(again[0], vectors[0], atol=1e-5)
    assert embedder.embed_passages([]).shape == (0, embedder.dimensions)


@pytest.mark.parametrize(("question", "document"), [
    ("Where do I keep a copy of the config before I edit it?", "DOC-INSTR"),  # en -> pl
    ("Jak sprawdzić, ile zadań czeka w kolejce?", "DOC-WORKER"),  # pl -> en
    ("Wie erneuere ich das TLS-Zertifikat?", "DOC-TLS"),  # de -> en
    ("Как получить доступ к продакшену?", "DOC-ACCESS"),  # ru -> en
])
def test_dense_retrieval_crosses_languages(dense: DenseRetriever, question: str,
                                           document: str) -> None:
    hits = dense.search(question, 3)
    assert document in [hit.document.document_id for hit in hits]
    assert all(-1.0 <= hit.score <= 1.0 for hit in hits)
    assert hits == sorted(hits, key=lambda hit: -hit.score)


def test_off_topic_questions_stay_below_the_threshold(dense: DenseRetriever) -> None:
    for question in ("What is the capital of Australia?", "Przepis na szarlotkę"):
        assert dense.search(question, 1)[0].score < DENSE_SIMILARITY_THRESHOLD


def test_the_matrix_is_loaded_once_and_reloaded_after_indexing(
    store: Store, dense: DenseRetriever
) -> None:
    dense.search("backup", 1)
    matrix = dense._matrix
    dense.search("certificate", 1)
    assert dense._matrix is matrix  # not re-read per query
    other = Store(store.path)  # another process indexes a document, without embeddings
    other.replace_document(parse_document(
        "plants.md", "plants", "## Ficus\nWater the office ficus every Monday.\n"),
        "/tmp/plants.md")
    other.close()
    hits = dense.search("How often should the office plant be watered?", 1)
    assert hits[0].document.document_id == "DOC-PLANTS"  # embedded on demand, then found
    assert dense._matrix is not matrix


def test_hybrid_uses_strong_lexical_matches(store: Store, dense: DenseRetriever) -> None:
    hybrid = HybridRetriever(Bm25Retriever(store), dense)
    [best, *_] = hybrid.search("api nie wstaje, w logu 'address already in use'", 3)
    assert best.document.document_id == "DOC-INSTR"
    assert best.score == pytest.approx(float(
        dense.embedder.embed_queries(["api nie wstaje, w logu 'address already in use'"])[0]
        @ dense.embedder.embed_passages([best.chunk.text])[0]), abs=1e-3)
    assert len(hybrid.search("restart", 5)) == 5
    assert hybrid.search("", 3) == [] or all(hit.score < 0.5 for hit in hybrid.search("", 3))


RARE_TERM_PAGES = {
    "install": "## Installing libraries\nInstall a library with the package manager before "
               "you import it.",
    "venv": "## Virtual environments\nCreate a virtual environment, then install the "
            "libraries your project needs.",
    "upgrade": "## Upgrading packages\nUpgrade an installed library to its newest release "
               "with one command.",
    "render": "## Rendering engine\nThe renderer draws HTML with weasyprint before the "
              "document is saved.",
    "images": "## Images\nImages are resized to fit the page width.",
}


def test_a_rare_term_keeps_its_weight_when_the_other_words_are_in_another_language(
        tmp_path: Path) -> None:
    """One English page names the library; the Polish question's other words are in no page.
    Dense alone ranks that page below the generic install pages; the fusion keeps BM25's
    evidence (no gate drops a hit that matches only one word of the question)."""
    store = Store(tmp_path / "x.db")
    for name, text in RARE_TERM_PAGES.items():
        store.replace_document(parse_document(f"{name}.md", name, text), f"/d/{name}.md")
    bm25, dense = Bm25Retriever(store), DenseRetriever(store, get_embedder("use"))
    question = "Jak zainstalować bibliotekę weasyprint?"
    assert bm25.vocabulary_share(question) == pytest.approx(1 / 3)  # only the library's name
    assert dense.search(question, 1)[0].document.document_id != "DOC-RENDER"
    assert HybridRetriever(bm25, dense).search(question, 1)[0].document.document_id == (
        "DOC-RENDER")
    store.close()
