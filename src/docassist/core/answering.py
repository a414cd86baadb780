"""Answering from retrieved chunks: retrieval, the answer, and the citation check."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Iterable, Iterator
from typing import Final

from docassist.core import i18n, passages
from docassist.core.documents import CITATION, TEMPLATED_MARKDOWN
from docassist.core.learned import without_context
from docassist.core.limits import (
    MIN_SHARED_WORDS,
    PASSAGE_CHARS,
    SNIPPET_CHARS,
    STEP_CHARS,
)
from docassist.core.ports import Answerer, Catalog, Embedder, Retriever, SearchHit
from docassist.core.procedure import best_document_hit, is_step, procedure_window
from docassist.core.state import RagResult, Source
from docassist.core.statuses import language_of
from docassist.core.text import sentences, stems

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
    # A how-to question gets the whole run of steps of its best document, in order.
    window = procedure_window(question, kept, catalog.chunk)
    if window:
        # A step retrieval did not return carries its page's score (shown with the sources).
        best = max(hit.score for hit in window)
        window = [hit if hit.score > 0 else SearchHit(hit.chunk, hit.document, best)
                  for hit in window]
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


def _not_found(rag_id: str, hits: list[SearchHit], retriever: Retriever, top_k: int,
               threshold: float | None, language: i18n.Language) -> RagResult:
    """Nothing passes: said so, naming the closest pages only when they are plausibly
    related (as the retriever judges it, or else half the threshold at least); the trace
    keeps the closest pages either way."""
    related = [hit for hit in hits if (
        hit.related if hit.related is not None
        else threshold is None or hit.score >= CLOSEST_SHARE * threshold)]
    closest = list(dict.fromkeys(f"{hit.document.title} ({hit.document.document_id})"
                                 for hit in related))[:CLOSEST_DOCUMENTS]
    answer = i18n.text("no_answer", language)
    if closest:
        answer += " " + i18n.text("no_answer_closest", language, documents="; ".join(closest))
    return RagResult(
        rag_id=rag_id, status="no_answer", answer=answer, sources=[],
        retrieved_chunk_ids=[], retriever=retriever.name, top_k=top_k,
        similarity_threshold=threshold, closest_document_ids=list(dict.fromkeys(
            hit.document.document_id for hit in hits))[:CLOSEST_DOCUMENTS])


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
    """The `rules` answerer: the passage of the best page that answers, in its own words and
    order (core/passages.py) — for a how-to question its steps in order; for a how many /
    when / who question the line holding the fact first. Never sentences from several pages.
    """

    backend = "rules"
    model: str | None = None
    can_stream = False

    def __init__(self, embedder: Embedder | None = None,
                 catalog: Catalog | None = None) -> None:
        self.embedder = embedder
        """When no line shares a word with the question (a Polish question over an English
        page), the line nearest to it in this embedding space holds the fact."""
        self.catalog = catalog
        """Where relative links are looked up, to name the linked page (and its URL)."""

    def compose_stream(self, question: str, hits: list[SearchHit], language: str
                       ) -> Iterator[str]:
        """Not a streaming answerer (`can_stream` is False): the whole answer as one piece."""
        yield self.compose(question, hits, language)

    def compose(self, question: str, hits: list[SearchHit], language: str) -> str:
        by_id = {hit.chunk.chunk_id: hit.chunk for hit in hits}
        steps = procedure_window(question, hits, by_id.get)
        links = LinkTitles(self.catalog) if self.catalog is not None else None
        own = without_context(question)  # a follow-up's own words pick the section
        best = self._best_passage(own, hits)
        # Steps across sections answer a how-to, unless a prose section is headed by the
        # question itself ("Jak zgłosić incydent": that section answers, not the page's lists
        # of priorities), or a follow-up names the step it asks about ("Jak sprawdzić jej
        # stan?"); one step section is its own passage.
        names_a_step = own != question and _headed_by(own, best)
        if len(steps) > 1 and not names_a_step and (
                is_step(best.chunk) or not _headed_by(question, best)):
            return compose_procedure(steps, language_of(language), links)
        return self._passage(question, best, language_of(language), links)

    def _best_passage(self, question: str, hits: list[SearchHit]) -> SearchHit:
        """Of the best page's retrieved chunks, the one that covers the question most (a
        follow-up about expiry is answered from the section on expiry, not from the page's
        best-ranked one): the share of the question's words it holds plus, with an
        embedder, its nearness in meaning (across languages)."""
        page = [hit for hit in hits if hit.document.document_id == hits[0].document.document_id]
        if len(page) == 1:
            return page[0]
        wanted = stems(question)
        shared = [len(wanted & stems(f"{hit.chunk.section} {chunk_body(hit.chunk.text)}"))
                  for hit in page]
        # One shared word (a name such as `tls`) says little; a heading that names the
        # question's words says most ("Jak zgłosić incydent"); the retriever's order a bit.
        headed = [len(wanted & stems(hit.chunk.section)) / max(len(wanted), 1) for hit in page]
        scores = [(n / len(wanted) if n >= MIN_SHARED_WORDS else 0.0) + heading
                  + RANK_PRIOR / rank
                  for rank, (n, heading) in enumerate(zip(shared, headed, strict=True), 1)]
        if self.embedder is not None:  # the nearest sentence speaks for its chunk
            texts = [sentences(chunk_body(hit.chunk.text))[:PASSAGE_SENTENCES] or [""]
                     for hit in page]
            flat = [sentence for chunk in texts for sentence in chunk]
            nearness = self.embedder.embed_passages(flat) @ self.embedder.embed_queries(
                [question])[0]
            start = 0
            for position, chunk in enumerate(texts):
                scores[position] += float(nearness[start:start + len(chunk)].max())
                start += len(chunk)
        return page[scores.index(max(scores))]

    def _passage(self, question: str, hit: SearchHit, language: i18n.Language,
                 links: LinkTitles | None) -> str:
        lines = passage_lines(hit, links)
        cite = f" [{hit.chunk.chunk_id}]"
        intro = i18n.text("answer_passage_intro", language, title=hit.document.title,
                          section=section_name(hit))
        fact = self._fact(question, lines) if asks_for_a_fact(question) else None
        body = "\n".join(lines) + cite
        if fact is None or lines[0].startswith(fact):
            return f"{intro}\n{body}"
        return f"{fact}{cite}\n\n{intro}\n{body}"

    def _fact(self, question: str, lines: list[str]) -> str | None:
        """The sentence that holds what a how many / when / who question asks: the most of
        the question's words, else (another language) the nearest in meaning."""
        candidates = [sentence for line in lines
                      if not line.rstrip().endswith(":") and not line.startswith("```")
                      for sentence in sentences(line.lstrip("•0123456789. "))]
        if not candidates:
            return None
        wanted = stems(question)
        overlap = [len(wanted & stems(line)) for line in candidates]
        if max(overlap) >= MIN_SHARED_WORDS or self.embedder is None:
            return candidates[overlap.index(max(overlap))] if max(overlap) else None
        vectors = self.embedder.embed_passages(candidates)
        similarity = vectors @ self.embedder.embed_queries([question])[0]
        return candidates[int(similarity.argmax())]


_FACT_QUESTION: Final = re.compile(
    r"\b(?:how\s+(?:many|much|long|often|far|soon)|when|who|whom|which|what\s+time|"
    r"what\s+is\s+the\s+(?:limit|deadline|number|rate|address|email)|"
    r"ile|kiedy|kto|kogo|komu|jak\s+(?:długo|dlugo|często|czesto)|o\s+której|"
    r"do\s+kiedy|od\s+kiedy|który|która|które|jaki\s+jest|jaka\s+jest)\b",
    re.IGNORECASE)


RANK_PRIOR: Final = 0.05
"""What the retriever's order adds when choosing the page's passage (1st: this, 2nd: half)."""
HEADING_MATCH: Final = 0.5
"""A section whose heading holds this share of the question's words is what it asks about."""
PASSAGE_SENTENCES: Final = 12
"""Sentences of each candidate chunk compared with the question when choosing the passage."""


def _headed_by(question: str, hit: SearchHit) -> bool:
    wanted = stems(question)
    return bool(wanted) and len(wanted & stems(hit.chunk.section)) >= HEADING_MATCH * len(wanted)


def asks_for_a_fact(question: str) -> bool:
    """How many / how long / when / who (and their Polish forms): one line holds it."""
    return bool(_FACT_QUESTION.search(question))


def section_name(hit: SearchHit) -> str:
    return hit.chunk.section or hit.document.title


def passage_lines(hit: SearchHit, links: LinkTitles | None, limit: int = PASSAGE_CHARS
                  ) -> list[str]:
    """The chunk's passage in reply conventions, cut after whole lines at about `limit`
    characters (the cut is said: the source holds the rest)."""
    lines = passages.render(chunk_body(hit.chunk.text), hit.document.source_path,
                            links.title if links is not None else None).lines
    kept: list[str] = []
    for line in lines:
        if kept and sum(map(len, kept)) + len(line) > limit:
            kept.append("…")
            break
        kept.append(line)
    return kept or [" ".join(chunk_body(hit.chunk.text).split())[:limit]]


class LinkTitles:
    """Relative links of a page resolved to the catalog's pages by path (`../x.md`,
    `x/` for `x/index.md`, `x` for `x.md`, `x.html` for a Middleman page `x.html.md.erb`):
    their title and URL."""

    SUFFIXES: Final = ("", ".md", "/index.md", ".html.md", ".html", "/index.html.md",
                       TEMPLATED_MARKDOWN, f"/index.html{TEMPLATED_MARKDOWN}")

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self._by_path: dict[str, tuple[str, str | None]] | None = None

    def title(self, target: str) -> tuple[str, str | None] | None:
        if self._by_path is None:
            self._by_path = {d.source_path.replace("\\", "/"): (d.title, d.url)
                             for d in self.catalog.documents()}
        wanted = target.rstrip("/")
        for suffix in self.SUFFIXES:
            path = wanted + suffix
            if path in self._by_path:
                return self._by_path[path]
            found = [value for key, value in self._by_path.items()
                     if key.endswith("/" + path.lstrip("./"))]
            if len(found) == 1:
                return found[0]
        return None


def compose_procedure(steps: list[SearchHit], language: i18n.Language,
                      links: LinkTitles | None = None) -> str:
    """A procedure across sections: one numbered step per section, in order, each cited (a
    one-section procedure is its passage, lists as its own lists)."""
    intro = i18n.text("answer_procedure_intro", language, title=steps[0].document.title)
    numbered = []
    for n, hit in enumerate(steps, start=1):
        text = " ".join(line.lstrip("•0123456789. ") if line[:1] in "•0123456789" else line
                        for line in passage_lines(hit, links, STEP_CHARS))
        numbered.append(f"{n}. {hit.chunk.section}: {text} [{hit.chunk.chunk_id}]")
    return "\n".join([intro, *numbered])
