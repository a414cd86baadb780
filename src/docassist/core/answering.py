"""Answering from retrieved chunks: retrieval, the answer, and the citation check."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Iterable, Iterator
from typing import Final

from docassist.core import i18n
from docassist.core.limits import (
    MAX_ANSWER_QUOTES,
    MAX_PROCEDURE_STEPS,
    MIN_SHARED_WORDS,
    SNIPPET_CHARS,
    STEP_CHARS,
    STEP_SENTENCES,
)
from docassist.core.ports import Answerer, Catalog, Embedder, Retriever, SearchHit
from docassist.core.procedure import procedure_window
from docassist.core.state import RagResult, Source
from docassist.core.statuses import language_of
from docassist.core.text import sentences, stems

CITATION: Final = re.compile(r"\[([A-Z][A-Z0-9_]*(?:-[A-Z0-9_]+)*-[0-9a-f]{10}-\d{4})\]")
_CITATION_WITH_SPACE: Final = re.compile(r"[ \t]?" + CITATION.pattern)
CLOSEST_DOCUMENTS: Final = 3
NEAREST_SENTENCE_CHUNKS: Final = 2
"""Chunks whose sentences are embedded when words do not match (~10 sentences, ~70 ms)."""


def chunk_body(text: str) -> str:
    """The chunk text without its `file | version=X | Section` header line."""
    return text.split("\n", 1)[1] if "\n" in text else text


def to_source(hit: SearchHit) -> Source:
    body = " ".join(chunk_body(hit.chunk.text).split())
    snippet = body if len(body) <= SNIPPET_CHARS else body[: SNIPPET_CHARS - 1].rstrip() + "…"
    return Source(
        chunk_id=hit.chunk.chunk_id,
        document_id=hit.document.document_id,
        title=hit.document.title,
        version=hit.document.version,
        section=hit.chunk.section,
        score=round(hit.score, 4),
        snippet=snippet,
        url=hit.document.url,
        indexed_at=hit.document.indexed_at,
        collection=hit.document.collection,
    )


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

    cleaned = _CITATION_WITH_SPACE.sub(keep_or_drop, answer)
    cleaned = re.sub(r"[ \t]+\n", "\n", re.sub(r"[ \t]{2,}", " ", cleaned)).strip()
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
) -> RagResult:
    """Search, answer from what was found (or say nothing was), check every citation.

    With `on_partial` and an answerer that streams, checked sentences are released to it
    as they complete; the final text is checked again as a whole.
    """
    hits = retriever.search(question, top_k)
    kept = [hit for hit in hits if threshold is None or hit.score >= threshold]
    rag_id = uuid.uuid4().hex[:16]
    if not kept:
        answer = i18n.text("no_answer", language)
        closest = list(dict.fromkeys(f"{hit.document.title} ({hit.document.document_id})"
                                     for hit in hits))[:CLOSEST_DOCUMENTS]
        if closest:
            answer += " " + i18n.text("no_answer_closest", language, documents="; ".join(closest))
        return RagResult(
            rag_id=rag_id, status="no_answer", answer=answer, sources=[],
            retrieved_chunk_ids=[], retriever=retriever.name, top_k=top_k,
            similarity_threshold=threshold, closest_document_ids=list(dict.fromkeys(
                hit.document.document_id for hit in hits))[:CLOSEST_DOCUMENTS],
        )
    # A how-to question gets the whole run of steps of its best document, in order.
    window = procedure_window(question, kept, catalog.chunk)
    if window:
        in_window = {hit.chunk.chunk_id for hit in window}
        kept = window + [hit for hit in kept if hit.chunk.chunk_id not in in_window]
    retrieved_ids = {hit.chunk.chunk_id for hit in kept}
    if on_partial is not None and answerer.can_stream:
        deltas: list[str] = []

        def collect(source: Iterable[str]) -> Iterator[str]:
            for delta in source:
                deltas.append(delta)
                yield delta

        streamed = answerer.compose_stream(question, kept, language)
        for sentence in release_sentences(collect(streamed), retrieved_ids, drop_uncited=True):
            on_partial(sentence)
        draft = "".join(deltas)
    else:
        draft = answerer.compose(question, kept, language)
    answer, warnings = _checked_answer(draft, retrieved_ids, answerer, language)
    return RagResult(
        rag_id=rag_id,
        status="answered",
        answer=answer,
        sources=[to_source(hit) for hit in kept],
        retrieved_chunk_ids=[hit.chunk.chunk_id for hit in kept],
        warnings=warnings,
        retriever=retriever.name,
        top_k=top_k,
        similarity_threshold=threshold,
        closest_document_ids=list(dict.fromkeys(
            hit.document.document_id for hit in kept))[:CLOSEST_DOCUMENTS],
    )


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


class ExtractiveAnswerer:
    """The `rules` answerer: for a how-to question, the steps of the best document in order;
    otherwise the sentences of the best chunks that match the question."""

    backend = "rules"
    model: str | None = None
    can_stream = False

    def __init__(self, embedder: Embedder | None = None) -> None:
        self.embedder = embedder
        """When no sentence shares a word with the question (a Polish question over an
        English document), the sentences nearest to it in this embedding space are quoted."""

    def compose_stream(self, question: str, hits: list[SearchHit], language: str
                       ) -> Iterator[str]:
        """Not a streaming answerer (`can_stream` is False): the whole answer as one piece."""
        yield self.compose(question, hits, language)

    def compose(self, question: str, hits: list[SearchHit], language: str) -> str:
        by_id = {hit.chunk.chunk_id: hit.chunk for hit in hits}
        steps = procedure_window(question, hits, by_id.get)
        if steps:
            return compose_procedure(steps, language_of(language))
        return self._quotes(question, hits, language)

    def _quotes(self, question: str, hits: list[SearchHit], language: str) -> str:
        wanted = stems(question)
        scored: list[tuple[float, int, int, str, str]] = []
        best_overlap = 0
        for rank, hit in enumerate(hits):
            for position, sentence in enumerate(sentences(chunk_body(hit.chunk.text))):
                overlap = len(wanted & stems(sentence))
                best_overlap = max(best_overlap, overlap)
                # Earlier (better-ranked) chunks win ties; a sentence must share a word.
                if overlap:
                    scored.append((overlap - 0.5 * rank, rank, position, sentence,
                                   hit.chunk.chunk_id))
        # One shared word (often a name or a path part such as `tls`) says little about a
        # sentence; with an embedder, nearness in meaning says more, across languages too.
        if not scored or (best_overlap < MIN_SHARED_WORDS and self.embedder is not None):
            scored = self._nearest_sentences(question, hits)
        chosen = sorted(scored, key=lambda item: -item[0])[:MAX_ANSWER_QUOTES]
        chosen.sort(key=lambda item: (item[1], item[2]))
        intro = i18n.text("answer_intro", language_of(language))
        lines = [f"• {sentence} [{chunk_id}]" for _, _, _, sentence, chunk_id in chosen]
        return "\n".join([intro, *lines])


    def _nearest_sentences(self, question: str, hits: list[SearchHit]
                           ) -> list[tuple[float, int, int, str, str]]:
        candidates = [(rank, position, sentence, hit.chunk.chunk_id)
                      for rank, hit in enumerate(hits[:NEAREST_SENTENCE_CHUNKS])
                      for position, sentence in enumerate(sentences(chunk_body(hit.chunk.text)))]
        if self.embedder is None or not candidates:
            best = hits[0]
            return [(0.0, 0, i, s, best.chunk.chunk_id)
                    for i, s in enumerate(sentences(chunk_body(best.chunk.text))[:2])]
        vectors = self.embedder.embed_passages([sentence for _, _, sentence, _ in candidates])
        similarity = vectors @ self.embedder.embed_queries([question])[0]
        return [(float(score), rank, position, sentence, chunk_id)
                for score, (rank, position, sentence, chunk_id) in zip(similarity, candidates,
                                                                       strict=True)]


_LIST_NUMBER: Final = re.compile(r"^\d+[.)]$")


def _items(chunk_text: str) -> list[str]:
    """Sentences and list items of a chunk, as steps quote them."""
    items: list[str] = []
    for sentence in sentences(chunk_body(chunk_text)):
        # "1." cut off as a sentence rejoins its item; "On the VM run:" keeps its command.
        if items and (_LIST_NUMBER.match(items[-1])
                      or (items[-1].endswith(":") and sentence.startswith("`"))):
            items[-1] = f"{items[-1]} {sentence}"
        else:
            items.append(sentence)
    return items


def _step_text(chunk_text: str) -> str:
    picked: list[str] = []
    for sentence in _items(chunk_text):
        if picked and (len(picked) >= STEP_SENTENCES
                       or sum(map(len, picked)) + len(sentence) > STEP_CHARS):
            break
        picked.append(sentence)
    return " ".join(picked)


def compose_procedure(steps: list[SearchHit], language: i18n.Language) -> str:
    """Numbered steps, each cited: one per section, or the items of a one-section procedure."""
    intro = i18n.text("answer_procedure_intro", language, title=steps[0].document.title)
    if len(steps) == 1:
        chunk = steps[0].chunk
        items = _items(chunk.text)[:MAX_PROCEDURE_STEPS]
        lines = [f"{n}. {item} [{chunk.chunk_id}]" for n, item in enumerate(items, start=1)]
    else:
        lines = [f"{n}. {hit.chunk.section}: {_step_text(hit.chunk.text)} [{hit.chunk.chunk_id}]"
                 for n, hit in enumerate(steps, start=1)]
    return "\n".join([intro, *lines])
