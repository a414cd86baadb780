"""Answering from retrieved chunks: retrieval, the answer, and the citation check."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Iterable, Iterator
from typing import Final, NamedTuple

from docassist.core import i18n
from docassist.core.asked_facts import AskedFact, asked_fact, count_unstated, counted, states
from docassist.core.documents import CITATION, shown_section
from docassist.core.extractive import ExtractiveAnswerer
from docassist.core.fences import outside_code
from docassist.core.i18n.detection import feature_language
from docassist.core.learned import question_parts
from docassist.core.limits import MAX_SOURCES, SNIPPET_CHARS
from docassist.core.named_terms import named_terms, unmentioned
from docassist.core.passages import chunk_body
from docassist.core.ports import Answerer, Catalog, Retriever, SearchHit
from docassist.core.procedure import best_document_hit, page_sections, procedure_window
from docassist.core.state import RagResult, Source

_CITATION_WITH_SPACE: Final = re.compile(r"[ \t]?" + CITATION.pattern)
CLOSEST_DOCUMENTS: Final = 3
CLOSEST_SHARE: Final = 0.5
"""A page is named as close to an unanswered question when its score reaches this share of
the answer threshold (below, it is no help: "the closest documents" would mislead), unless
the retriever says apart from its score whether the page is related (`SearchHit.related`)."""
CONTINUING_SHARE: Final = 0.5
"""The share of the threshold a page the thread's last answer came from must reach."""
PAGE_DEPTH: Final = 20
"""Hits asked for: enough that the best page's other retrieved chunks come along."""
WHOLE_PAGE_SECTIONS: Final = 40
"""Sections of the page answered from that an answerer reading the whole page is given at
most (each is read, ~10 ms); a longer page gives it the retrieved sections only."""


def to_source(hit: SearchHit) -> Source:
    body = " ".join(chunk_body(hit.chunk.text).split())
    snippet = body if len(body) <= SNIPPET_CHARS else body[: SNIPPET_CHARS - 1].rstrip() + "…"
    return Source(
        chunk_id=hit.chunk.chunk_id,
        document_id=hit.document.document_id,
        title=hit.document.title,
        version=hit.document.version,
        section=shown_section(hit.chunk.section, hit.document.title),
        score=round(hit.score, 4),
        snippet=snippet,
        url=hit.document.url,
        indexed_at=hit.document.indexed_at,
        collection=hit.document.collection,
    )


def _tidy_spaces(text: str) -> str:
    """The spaces a dropped citation leaves; code keeps its own (YAML's indentation)."""
    return re.sub(r"[ \t]+\n", "\n", re.sub(r"[ \t]{2,}", " ", text))


def check_citations(answer: str, retrieved_ids: set[str]) -> tuple[str, list[str], list[str]]:
    """Remove citations of chunks that were not retrieved for this answer.

    Returns the cleaned answer, the valid cited ids (in order) and warnings.
    """
    warnings: list[str] = []
    cited: list[str] = []

    def keep_or_drop(match: re.Match[str]) -> str:
        chunk_id = match.group(1)
        if chunk_id in retrieved_ids:
            if chunk_id not in cited:
                cited.append(chunk_id)
            return match.group(0)
        warnings.append(f"removed_citation:{chunk_id}")
        return ""

    cleaned = outside_code(_CITATION_WITH_SPACE.sub(keep_or_drop, answer), _tidy_spaces).strip()
    if not cited:
        warnings.append("no_valid_citation")
    return cleaned, cited, warnings


def answer_question(
    question: str,
    *,
    retriever: Retriever,
    answerer: Answerer,
    top_k: int,
    threshold: float | None,
    language: i18n.Language,
    catalog: Catalog,
    on_partial: Callable[[str], None] | None = None,
    thread_pages: frozenset[str] = frozenset(),
) -> RagResult:
    """Search, answer from what was found (or say nothing was), check every citation.

    With `on_partial` and an answerer that streams, checked sentences are released to it
    as they complete; the final text is checked again as a whole. `thread_pages`: the pages
    the thread's last answer came from — a question that goes on about one of them (a
    follow-up) needs less evidence of its own (CONTINUING_SHARE of the threshold).
    """
    hits = retriever.search(question, max(top_k, PAGE_DEPTH))
    passing = [hit for hit in hits if threshold is None or hit.score >= threshold or (
        hit.document.document_id in thread_pages and hit.score >= CONTINUING_SHARE * threshold)]
    rag_id = uuid.uuid4().hex[:16]
    if not passing:
        return _not_found(rag_id, hits, retriever, top_k, threshold, language)
    # The answer comes from one page: the best that passes (a page declaring a service the
    # question names first, then the most retrieved score), with every chunk of it that was
    # retrieved (its procedure's steps, the passage that covers a follow-up).
    page = best_document_hit(question, passing).document.document_id
    kept = [hit for hit in hits if hit.document.document_id == page]
    found_by = _found_by(kept)
    # A how-to question gets the whole run of steps of its best document, in order.
    window = procedure_window(question, kept, catalog.chunk)
    if window:
        # A step retrieval did not return carries its page's score (shown with the sources).
        best = max(hit.score for hit in window)
        window = [hit if hit.score > 0 else SearchHit(hit.chunk, hit.document, best)
                  for hit in window]
        in_window = {hit.chunk.chunk_id for hit in window}
        kept = window + [hit for hit in kept if hit.chunk.chunk_id not in in_window]
    # An answerer that chooses the passage itself reads the page's other sections too (a
    # follow-up's section is often one retrieval ranked below other pages).
    given = kept
    if answerer.reads_whole_page and kept[0].document.chunk_count <= WHOLE_PAGE_SECTIONS:
        found = {hit.chunk.chunk_id for hit in kept}
        given = kept + [hit for hit in page_sections(kept[0], kept, catalog.chunk)
                        if hit.chunk.chunk_id not in found]
    lacking = _lacking(question, given, hits, catalog, language, retriever)
    if lacking is not None:
        return _refusal(rag_id, " ".join([i18n.text("no_answer", language), lacking.said]),
                        [kept[0], *hits], retriever, top_k, threshold,
                        [lacking.warning, *found_by])
    retrieved_ids = {hit.chunk.chunk_id for hit in given}
    draft = _draft(question, given, answerer, language, retrieved_ids, on_partial)
    answer, warnings = _checked_answer(draft, retrieved_ids, answerer, language)
    streamed = on_partial is not None and answerer.can_stream  # already shown: not taken back
    lacking = None if streamed else _unstated_in(answer, question, kept[0], language)
    if lacking is not None:
        return _refusal(rag_id, " ".join([i18n.text("no_answer", language), lacking.said]),
                        [kept[0], *hits], retriever, top_k, threshold,
                        [lacking.warning, *found_by])
    shown = _sources(answer, kept, given)
    return RagResult(
        rag_id=rag_id,
        status="answered",
        answer=answer,
        sources=[to_source(hit) for hit in shown],
        retrieved_chunk_ids=[hit.chunk.chunk_id for hit in shown],
        warnings=[*warnings, *found_by],
        retriever=retriever.name,
        top_k=top_k,
        similarity_threshold=threshold,
        closest_document_ids=list(dict.fromkeys(
            hit.document.document_id for hit in kept))[:CLOSEST_DOCUMENTS],
    )


def _found_by(kept: list[SearchHit]) -> list[str]:
    """The trace's note that the page was found by other words than the question's (the
    question glossed into Polish), once per way."""
    return [f"found_by:{how}" for how in dict.fromkeys(hit.found_by for hit in kept) if how]


def _draft(question: str, given: list[SearchHit], answerer: Answerer,
           language: i18n.Language, retrieved_ids: set[str],
           on_partial: Callable[[str], None] | None) -> str:
    """The answerer's text. With `on_partial` and an answerer that streams, each sentence is
    released as it completes, once its citations check out."""
    if on_partial is None or not answerer.can_stream:
        return answerer.compose(question, given, language)
    deltas: list[str] = []

    def collect(source: Iterable[str]) -> Iterator[str]:
        for delta in source:
            deltas.append(delta)
            yield delta

    streamed = answerer.compose_stream(question, given, language)
    for sentence in release_sentences(collect(streamed), retrieved_ids, drop_uncited=True):
        on_partial(sentence)
    return "".join(deltas)


def _sources(answer: str, kept: list[SearchHit], given: list[SearchHit]) -> list[SearchHit]:
    """Every section the answer quotes, then the page's best other retrieved ones, in
    retrieval order, MAX_SOURCES in all (a long page can fill every hit)."""
    cited = set(CITATION.findall(answer))
    listed = kept + [hit for hit in given[len(kept):] if hit.chunk.chunk_id in cited]
    uncited = [hit.chunk.chunk_id for hit in listed if hit.chunk.chunk_id not in cited]
    spare = max(0, MAX_SOURCES - (len(listed) - len(uncited)))
    keep = cited | set(uncited[:spare])
    return [hit for hit in listed if hit.chunk.chunk_id in keep]


def _not_found(rag_id: str, hits: list[SearchHit], retriever: Retriever, top_k: int,
               threshold: float | None, language: i18n.Language) -> RagResult:
    """Nothing passes: said so, naming the closest pages only when they are plausibly
    related (as the retriever judges it, or else half the threshold at least); the trace
    keeps the closest pages either way."""
    related = [hit for hit in hits if (
        hit.related if hit.related is not None
        else threshold is None or hit.score >= CLOSEST_SHARE * threshold)]
    closest = list(dict.fromkeys(_named(hit) for hit in related))[:CLOSEST_DOCUMENTS]
    answer = i18n.text("no_answer", language)
    if closest:
        answer += " " + i18n.text("no_answer_closest", language, documents="; ".join(closest))
    return _refusal(rag_id, answer, hits, retriever, top_k, threshold)


class Lacking(NamedTuple):
    """Why the best page, though it passed the threshold, does not answer: the trace's
    warning and the reply's sentence naming the page (it is related, so it is named)."""

    warning: str
    said: str


def _lacking(question: str, given: list[SearchHit], hits: list[SearchHit], catalog: Catalog,
             language: i18n.Language, retriever: Retriever) -> Lacking | None:
    """A page on the topic that states no fact of the kind asked ("how much…" on a page
    without an amount; "how many hero scenarios…" on a page that counts none), or never
    mentions a thing the question names while nothing else retrieved does either ("PostGIS"
    on the database page), does not answer the question. A name other retrieved pages hold
    is a word of the collection ("OTel"), not a missing thing."""
    page = given[0]
    fact = asked_fact(question)
    if fact is not None and not any(states(fact, chunk_body(hit.chunk.text), question)
                                    for hit in given):
        return _unstated(fact, page, language)
    asked = counted(question)
    whole = feature_language(question, "en")
    names = list(dict.fromkeys(name for part in question_parts(question)
                               for name in named_terms(part, whole)))
    if asked is None and not names:
        return None
    # Read only when the question counts or names something: the whole page with its
    # headings (a count anywhere on the page answers how many).
    sections = [page.document.title, *(hit.chunk.text for hit in
                                       page_sections(page, given, catalog.chunk))]
    if asked is not None and count_unstated(asked, sections):
        return _unstated(AskedFact.COUNT, page, language)
    if not names:
        return None
    absent = unmentioned(names, [*sections, *(hit.chunk.text for hit in hits)])
    # A name written in lower case is a rare word, not a capitalised one: a word of the
    # collection that the search for the question missed ("etcdctl" on another etcd page)
    # is no missing thing, so the documents are searched for it.
    absent = [name for name in absent if not name.islower() or unmentioned(
        [name], [hit.chunk.text for hit in retriever.search(name, NAME_SEARCH_DEPTH)])]
    if not absent:
        return None
    return Lacking(UNMENTIONED_WARNING, i18n.text(
        "no_answer_unmentioned", language, document=_named(page), names=", ".join(absent)))


def _unstated_in(answer: str, question: str, page: SearchHit, language: i18n.Language
                 ) -> Lacking | None:
    """Why the answer does not answer, when the passage chosen states no fact of the asked
    kind: the page may state one elsewhere ("every 5 minutes" under Compaction), but not
    where it speaks of the thing asked ("how long does a defrag take?"). On the tuning sets
    this refused 36 wrong answers and 23 answers from the right page that did not hold the
    fact (docs/evaluation-method.md)."""
    fact = asked_fact(question)
    if fact is None or states(fact, CITATION.sub("", answer), question):
        return None
    return _unstated(fact, page, language, said="no_answer_unstated_passage")


def _unstated(fact: AskedFact, page: SearchHit, language: i18n.Language,
              said: str = "no_answer_unstated") -> Lacking:
    """The refusal that names the page and the kind of fact it (or, with
    `said="no_answer_unstated_passage"`, its passage) does not state."""
    return Lacking(unstated_warning(fact), i18n.text(
        said, language, document=_named(page), fact=i18n.text(f"asked_fact_{fact}", language)))


def _refusal(rag_id: str, answer: str, hits: list[SearchHit], retriever: Retriever,
             top_k: int, threshold: float | None, warnings: list[str] | None = None
             ) -> RagResult:
    """A `no_answer` result; the trace keeps the closest pages, in `hits`' order."""
    return RagResult(
        rag_id=rag_id, status="no_answer", answer=answer, sources=[], retrieved_chunk_ids=[],
        warnings=warnings or [], retriever=retriever.name, top_k=top_k,
        similarity_threshold=threshold, closest_document_ids=list(dict.fromkeys(
            hit.document.document_id for hit in hits))[:CLOSEST_DOCUMENTS])


def _named(hit: SearchHit) -> str:
    """A page as a refusal names it: its title and id."""
    return f"{hit.document.title} ({hit.document.document_id})"


def unstated_warning(fact: AskedFact) -> str:
    """The trace's reason for a refusal whose page states no fact of the asked kind."""
    return f"unstated_{fact}"


NAME_SEARCH_DEPTH: Final = 5
"""The passages searched for a lower-case name the page does not mention: a word the documents
hold is in the few passages that rank first for it alone."""

UNMENTIONED_WARNING: Final = "unmentioned_name"
"""The trace's reason for a refusal whose page never mentions a name the question holds."""


_SENTENCE_END: Final = re.compile(
    r"(?<!\b\w)(?<!\b\w\w)(?<!\d)[.!?…](?:\s*\[[^\]\s]*\])*"
    r"(?=\s+[^\s\[])(?!\s+[a-ząćęłńóśźżа-яё`])|\n\s*\n")
"""Where a sentence ends: `.`, `!`, `?` (with the citations written right after it) before
space and more text that does not go on in lower case, or a blank line. Not after a number
or a word of one or two letters (`1.`, `np.`, `e.g.`): when unsure, two sentences stay one,
since a sentence is what a citation must support (see _checked_answer)."""


def _checked_answer(draft: str, retrieved_ids: set[str], answerer: Answerer,
                    language: i18n.Language) -> tuple[str, list[str]]:
    """The answer shown on every platform, and its warnings.

    Every citation outside the retrieved chunks is removed and flagged. A model's sentences
    without a valid citation are dropped (counted in `dropped_uncited_sentences:N`): what
    users see is what the documents support; when nothing supported is left, a note says
    so. The extractive answerer quotes chunks line by line with their ids: its answers
    only get the citation check.
    """
    warnings = check_citations(draft, retrieved_ids)[2]
    if answerer.backend == ExtractiveAnswerer.backend:
        answer = check_citations(draft, retrieved_ids)[0]
        if "no_valid_citation" in warnings:
            answer = f"{answer}\n\n{i18n.text('no_valid_citation', language)}"
        return answer, warnings
    kept, dropped = keep_cited_sentences(draft, retrieved_ids)
    if dropped:
        warnings.append(f"dropped_uncited_sentences:{dropped}")
    if "no_valid_citation" in warnings:
        return i18n.text("no_supported_answer", language), warnings
    return check_citations(kept, retrieved_ids)[0], warnings


def _supported(sentence: str, retrieved_ids: set[str]) -> bool:
    """A sentence cites a retrieved chunk, or only leads in to what follows (`Steps:`)."""
    return (any(match.group(1) in retrieved_ids for match in CITATION.finditer(sentence))
            or sentence.rstrip().endswith(":"))


def keep_cited_sentences(text: str, retrieved_ids: set[str]) -> tuple[str, int]:
    """`text` without its sentences that cite no retrieved chunk (layout kept); how many
    were dropped. The same sentences as release_sentences streams."""
    kept: list[str] = []
    dropped = 0
    start = 0
    for end in [match.end() for match in _SENTENCE_END.finditer(text)] + [len(text)]:
        sentence, start = text[start:end], end
        if _supported(sentence, retrieved_ids):
            kept.append(sentence)
        elif sentence.strip():
            dropped += 1
    return "".join(kept).strip(), dropped


def release_sentences(deltas: Iterable[str], retrieved_ids: set[str], *,
                      drop_uncited: bool = False) -> Iterator[str]:
    """Complete sentences from a stream of text deltas, each with its citations checked
    and surrounding space stripped; with `drop_uncited`, sentences that cite no retrieved
    chunk are not released (as the final answer drops them, see _checked_answer).

    A sentence ends as _SENTENCE_END says, or with the stream.
    """
    buffer = ""
    for delta in deltas:
        buffer += delta
        while (match := _SENTENCE_END.search(buffer)) is not None:
            sentence, buffer = buffer[: match.end()], buffer[match.end():]
            if drop_uncited and not _supported(sentence, retrieved_ids):
                continue
            cleaned = check_citations(sentence, retrieved_ids)[0]
            if cleaned:
                yield cleaned
    if drop_uncited and not _supported(buffer, retrieved_ids):
        return
    rest = check_citations(buffer, retrieved_ids)[0]
    if rest:
        yield rest
