"""An English question over Polish pages is also searched glossed into Polish
(storage/rerank.py, in_both_languages); nothing else is."""

from __future__ import annotations

from docassist.core.documents import Chunk, DocumentInfo
from docassist.core.i18n.detection import feature_language
from docassist.core.turn import TurnEngine
from docassist.models.embedders import get_embedder
from docassist.storage.judge import Judge
from docassist.storage.ranker_features import Candidate
from docassist.storage.reader import Reader
from docassist.storage.rerank import RankedRetriever, glossed_into_polish


def _candidate(text: str, number: int) -> Candidate:
    document = DocumentInfo(document_id=f"DOC-{number}", title=f"Page {number}", version="1",
                            source_path=f"page{number}.md", content_sha256="0" * 64,
                            chunk_count=1)
    chunk = Chunk(chunk_id=f"DOC-{number}-0001", document_id=document.document_id,
                  ordinal=1, section="Section", header="Section", text=f"Section\n{text}")
    return Candidate(chunk, document, 0.0, None, None)


ENGLISH = _candidate("Write a short message in the incidents channel, then fill in the form.", 1)
POLISH = _candidate("Zgłoszenie rozpocznij od krótkiej wiadomości na kanale #incydenty.", 2)
# Words Polish also has ("na", "go", "z", "w"), and no Polish letter.
LINKS = _candidate("go - na - z - w - go - na - z", 3)
# Polish to the word counts ("a", "no", "y"...), and an "ó" Polish writes too.
SPANISH = _candidate("Nota a los Trainers: no dudes en contactar con la comunidad; "
                     "Formación para instructor de las Carpentries", 4)


def test_an_english_question_is_glossed_into_polish_when_a_candidate_is_polish() -> None:
    assert glossed_into_polish("How do I report an incident?", [ENGLISH, POLISH]) == (
        "jak robi ja zgłosić an incydent ?")


def test_over_english_pages_alone_the_question_is_not_glossed() -> None:
    assert feature_language(LINKS.chunk.text, "en") == "pl"  # by its words alone
    assert glossed_into_polish("How do I report an incident?", [ENGLISH, LINKS]) is None


def test_a_spanish_passage_is_not_taken_for_a_polish_one() -> None:
    assert feature_language(SPANISH.chunk.text, "en") == "pl"
    assert glossed_into_polish("How do I report an incident?", [ENGLISH, SPANISH]) is None


def test_a_polish_question_is_not_glossed_into_english() -> None:
    assert glossed_into_polish("Jak zgłosić incydent?", [ENGLISH, POLISH]) is None


def test_a_question_the_glossary_changes_no_word_of_is_not_searched_twice() -> None:
    assert glossed_into_polish("docassist-api", [ENGLISH, POLISH]) is None


def _questions_read(engine: TurnEngine, question: str) -> set[str]:
    """The questions (as the reader reads them) a fresh reader read for one search."""
    shipped = engine.retriever
    assert isinstance(shipped, RankedRetriever)
    reader = Reader()
    RankedRetriever(shipped.bm25, shipped.dense, Judge(get_embedder("e5")), reader).search(
        question, 20)
    return {asked for asked, _ in reader.kept}


def test_a_question_answered_as_asked_is_read_once(ranked_engine: TurnEngine) -> None:
    """The demo holds Polish pages, but the TLS page answers as asked: no second reading."""
    assert _questions_read(ranked_engine, "How do I renew the TLS certificate?") == {
        "How do I renew the TLS certificate?"}


def test_a_question_no_page_answers_as_asked_is_read_glossed_too(
        ranked_engine: TurnEngine) -> None:
    assert len(_questions_read(ranked_engine, "How do I report an incident?")) == 2


def test_only_the_hits_of_the_glossed_question_say_how_they_were_found(
        ranked_engine: TurnEngine) -> None:
    hits = ranked_engine.retriever.search("How do I report an incident?", 10)
    glossed = {hit.document.document_id for hit in hits if hit.found_by == "glossed_into_polish"}
    assert "DOC-INCIDENT" in glossed
    assert all(hit.found_by is None for hit in hits if hit.document.document_id not in glossed)
    assert all(hit.found_by is None
               for hit in ranked_engine.retriever.search("How do I renew the TLS certificate?", 10))
