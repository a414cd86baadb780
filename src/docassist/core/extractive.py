"""The `rules` answerer (ExtractiveAnswerer): which passage of the best page answers, and
how it is laid out as a passage or as a procedure's steps."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from typing import Final

from docassist.core import i18n, passages
from docassist.core.documents import (
    TEMPLATED_MARKDOWN,
    part_number,
    shown_section,
    whole_section,
)
from docassist.core.learned import without_context
from docassist.core.limits import MIN_SHARED_WORDS, PASSAGE_CHARS, STEP_CHARS
from docassist.core.passages import chunk_body, without_contents
from docassist.core.ports import Catalog, Embedder, PassageReader, SearchHit
from docassist.core.procedure import (
    asks_to_set_up,
    earlier_chunks,
    from_the_section_start,
    is_alternative_path,
    is_next_part,
    is_step,
    procedure_window,
)
from docassist.core.statuses import language_of
from docassist.core.text import sentences, stems


class ExtractiveAnswerer:
    """The `rules` answerer: the passage of the best page that answers, in its own words and
    order (core/passages.py) — for a how-to question its steps in order; for a how many /
    when / who question the line holding the fact first. Never sentences from several pages.
    """

    backend = "rules"
    model: str | None = None
    can_stream = False
    reads_whole_page = True

    def __init__(self, embedder: Embedder | None = None, catalog: Catalog | None = None,
                 reader: PassageReader | None = None) -> None:
        self.embedder = embedder
        """When no line shares a word with the question (a Polish question over an English
        page), the line nearest to it in this embedding space holds the fact."""
        self.catalog = catalog
        """Where relative links are looked up, to name the linked page (and its URL)."""
        self.reader = reader
        """Reads the question against each section of the page: the one it reads as
        answering weighs most. Without it (or on a page it cannot read) only the sections
        retrieval returned are considered."""

    def compose_stream(self, question: str, hits: list[SearchHit], language: str
                       ) -> Iterator[str]:
        """Not a streaming answerer (`can_stream` is False): the whole answer as one piece."""
        yield self.compose(question, hits, language)

    def compose(self, question: str, hits: list[SearchHit], language: str) -> str:
        # A procedure is chosen among the retrieved sections (the page's others carry 0).
        retrieved = [hit for hit in hits if hit.score > 0] or hits
        by_id = {hit.chunk.chunk_id: hit.chunk for hit in retrieved}
        steps = from_the_section_start(question, procedure_window(question, retrieved,
                                                                  by_id.get), hits)
        links = LinkTitles(self.catalog) if self.catalog is not None else None
        own = without_context(question)  # a follow-up's own words pick the section
        # "A co jeśli nie wstanie po restarcie?" after a procedure asks for its failure path:
        # the page's section for it, as a passage, though it may share no word with it.
        page = hits[0].document.document_id
        failure = [hit for hit in hits if hit.document.document_id == page
                   and is_alternative_path(hit.chunk)] if asks_what_if_not(own, question) else []
        if failure:
            return self._passage(question, self._best_passage(own, failure), hits,
                                 language_of(language), links)
        best = self._best_passage(own, hits)
        # Steps across sections answer a how-to, unless a prose section is headed by the
        # question itself ("Jak zgłosić incydent": that section answers, not the page's lists
        # of priorities), or a follow-up names the step it asks about ("Jak sprawdzić jej
        # stan?"); one step section is its own passage.
        names_a_step = own != question and self._headed_by(own, best)
        if len(steps) > 1 and not names_a_step and (
                is_step(best.chunk) or not self._headed_by(question, best)):
            return compose_procedure(steps, language_of(language), links)
        return self._passage(question, from_its_first_part(question, best, hits), hits,
                             language_of(language), links)

    def _best_passage(self, question: str, hits: list[SearchHit]) -> SearchHit:
        """Of the best page's sections, the one that covers the question most (a follow-up
        about expiry is answered from the section on expiry, not from the page's best-ranked
        one): the share of the question's words it holds plus, with an embedder, its
        nearness in meaning (across languages) plus, with a reader that reads every section,
        how well it reads as answering; retrieval's choice counts for a little."""
        page = [hit for hit in hits if hit.document.document_id == hits[0].document.document_id]
        if len(page) == 1:  # nothing to choose: nothing to read
            return page[0]
        # A table of contents reads as answering whatever the page covers: read without it.
        read = self.reader.read(question, [_without_contents(hit) for hit in page]
                                ) if self.reader is not None else []
        readings = [score for score in read if score is not None]
        if len(readings) < len(page):  # unread: the retrieved sections only, as retrieved
            page = [hit for hit in page if hit.score > 0] or page
            readings = [0.0] * len(page)
        if len(page) == 1:
            return page[0]
        wanted = stems(question)
        bodies = [without_contents(chunk_body(hit.chunk.text)) for hit in page]
        shared = [len(wanted & stems(f"{hit.chunk.section} {body}"))
                  for hit, body in zip(page, bodies, strict=True)]
        # One shared word (a name such as `tls`) says little; a heading that names the
        # question's words says most ("Jak zgłosić incydent"); the retriever's order a bit.
        headed = [len(wanted & self._heading(hit)) / max(len(wanted), 1) for hit in page]
        scores = [(n / len(wanted) if n >= MIN_SHARED_WORDS else 0.0) + heading
                  + RANK_PRIOR / rank + READ_WEIGHT * reading
                  + (RETRIEVED_PRIOR if hit.score > 0 else 0.0)
                  for rank, (n, heading, reading, hit)
                  in enumerate(zip(shared, headed, readings, page, strict=True), 1)]
        if self.embedder is not None:  # the nearest sentence speaks for its chunk
            texts = [sentences(body)[:PASSAGE_SENTENCES] or [""] for body in bodies]
            flat = [sentence for chunk in texts for sentence in chunk]
            nearness = self.embedder.embed_passages(flat) @ self.embedder.embed_queries(
                [question])[0]
            start = 0
            for position, chunk in enumerate(texts):
                scores[position] += float(nearness[start:start + len(chunk)].max())
                start += len(chunk)
        return page[scores.index(max(scores))]

    def _heading(self, hit: SearchHit) -> set[str]:
        """The section heading's words, and with a reader those of its English gloss: an
        English question is headed by a Polish page's "Jak zgłosić incydent" too."""
        words = stems(hit.chunk.section)
        return words | stems(self.reader.in_english(hit.chunk.section)) if self.reader else words

    def _headed_by(self, question: str, hit: SearchHit) -> bool:
        wanted = stems(question)
        return bool(wanted) and len(wanted & self._heading(hit)) >= HEADING_MATCH * len(wanted)

    def _passage(self, question: str, hit: SearchHit, hits: list[SearchHit],
                 language: i18n.Language, links: LinkTitles | None) -> str:
        lines = passage_lines(self._with_table_header(hit), links)
        cite = f" [{hit.chunk.chunk_id}]"
        intro = i18n.text("answer_passage_intro", language, title=hit.document.title,
                          section=section_name(hit))
        # The fact is one of the passage's own lines, never a header row put back (its column
        # names share a question's words more often than the row that answers).
        fact = (self._fact(question, passage_lines(hit, links)) if asks_for_a_fact(question)
                else None)
        body = "\n".join(lines) + cite + continuation(hit, hits, lines, links)
        if fact is None or lines[0].startswith(fact):
            return f"{intro}\n{body}"
        return f"{fact}{cite}\n\n{intro}\n{body}"

    def _with_table_header(self, hit: SearchHit) -> SearchHit:
        """A passage that opens inside a table, its header row put back: the rows of a long
        table cut across chunks say nothing without their column names."""
        header, _, body = hit.chunk.text.partition("\n")
        if self.catalog is None or not passages.continues_table(body):
            return hit
        for earlier in earlier_chunks(hit.chunk, self.catalog.chunk, TABLE_HEADER_LOOKBACK):
            if whole_section(earlier.section) != whole_section(hit.chunk.section):
                break
            columns = passages.table_header(chunk_body(earlier.text))
            if columns is not None:
                text = "\n".join([header, *columns, body])
                return replace(hit, chunk=hit.chunk.model_copy(update={"text": text}))
        return hit

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


_LEAD_IN: Final = re.compile(
    r":\s*$|\b(?:below|the\s+following|as\s+follows|poniżej|poniższ\w*|następując\w*)\b",
    re.IGNORECASE)


_WHAT_IF_NOT: Final = re.compile(
    r"^\W*(?:(?:and|but|so)\s+)?what\s+if\b.*\b(?:not|never|fails?|failed|breaks?|"
    r"doesn't|don't|won't|isn't|can't|cannot|didn't|stuck|down)\b|"
    r"^\W*(?:a\s+|i\s+)?(?:co\s+)?(?:jeśli|jeżeli|jesli|jezeli|gdy|kiedy)\b.*\bnie\b",
    re.IGNORECASE)


RANK_PRIOR: Final = 0.05
"""What the retriever's order adds when choosing the page's passage (1st: this, 2nd: half)."""
READ_WEIGHT: Final = 0.2
"""What each point of the reader's score (a logit, about -10..10) adds when choosing the
page's passage: reading it as answering (+5) outweighs sharing every question word (1)."""
RETRIEVED_PRIOR: Final = 0.2
"""What a section retrieval returned adds over the page's others (docs/evaluation-method.md:
both weights were chosen on three spent collections' right pages and checked on seven)."""
HEADING_MATCH: Final = 0.5
"""A section whose heading holds this share of the question's words is what it asks about."""
TABLE_HEADER_LOOKBACK: Final = 8
"""Earlier chunks of the section searched for the header row of a table a passage continues
(a table long enough to span more is read without it)."""
MIN_CONTINUATION_CHARS: Final = 160
"""Room a passage must still have for a section its lead-in announces to be added to it."""
PASSAGE_SENTENCES: Final = 12
"""Sentences of each candidate chunk compared with the question when choosing the passage."""


def _without_contents(hit: SearchHit) -> SearchHit:
    header, _, body = hit.chunk.text.partition("\n")
    kept = without_contents(body)
    return hit if kept == body else replace(
        hit, chunk=hit.chunk.model_copy(update={"text": f"{header}\n{kept}"}))


def asks_what_if_not(own: str, question: str) -> bool:
    """A follow-up (its own words differ from the question searched) asking what to do when
    something does not go as the answer said: "and what if it doesn't start?", "a co jeśli
    nie wstanie?"."""
    return own != question and bool(_WHAT_IF_NOT.search(own))


def asks_for_a_fact(question: str) -> bool:
    """How many / how long / when / who (and their Polish forms): one line holds it."""
    return bool(_FACT_QUESTION.search(question))


def section_name(hit: SearchHit) -> str:
    return shown_section(hit.chunk.section, hit.document.title) or hit.document.title


def passage_lines(hit: SearchHit, links: LinkTitles | None, limit: int = PASSAGE_CHARS,
                  shown_before: SearchHit | None = None) -> list[str]:
    """The chunk's passage in reply conventions, cut after whole lines at about `limit`
    characters (the cut is said: the source holds the rest). After `shown_before`, the
    previous part of the same section, it starts where that part ended."""
    body = chunk_body(hit.chunk.text)
    if shown_before is not None and is_next_part(shown_before, hit):
        body = passages.without_repeat(chunk_body(shown_before.chunk.text), body)
    lines = passages.render(body, hit.document.source_path,
                            links.title if links is not None else None).lines
    kept: list[str] = []
    for line in lines:
        if kept and sum(map(len, kept)) + len(line) > limit:
            kept.append("…")
            break
        kept.append(line)
    return kept or [" ".join(body.split())[:limit]]


def continuation(hit: SearchHit, hits: list[SearchHit], lines: list[str],
                 links: LinkTitles | None) -> str:
    """The sections a lead-in announces ("Below are some examples of checks…"), in the
    page's order, each named and cited, until the passage is full; else nothing. A new
    user got only the lead-in while the checks were in the sections after it."""
    if not leads_in(lines):
        return ""
    following = {other.chunk.ordinal: other for other in hits
                 if other.document.document_id == hit.document.document_id}
    room = PASSAGE_CHARS - sum(map(len, lines))
    parts: list[str] = []
    ordinal = hit.chunk.ordinal + 1
    before = hit
    while ordinal in following and room >= MIN_CONTINUATION_CHARS:
        after = following[ordinal]
        shown = passage_lines(after, links, room, before)
        before = after
        parts.append(f"\n\n{section_name(after)}:\n" + "\n".join(shown)
                     + f" [{after.chunk.chunk_id}]")
        room -= sum(map(len, shown))
        ordinal += 1
    return "".join(parts)


def from_its_first_part(question: str, hit: SearchHit, hits: list[SearchHit]) -> SearchHit:
    """A set-up question answered from a later part of a long section ("macOS (4/4)") is
    answered from the section's first part on: a new operator asking how to set up commit
    signing on a Mac was given its last steps, not the install."""
    part = part_number(hit.chunk.section)
    if part is None or part == 1 or not asks_to_set_up(question):
        return hit
    first = hit.chunk.ordinal - part + 1
    return next((other for other in hits if other.chunk.ordinal == first
                 and other.document.document_id == hit.document.document_id), hit)


def leads_in(lines: list[str]) -> bool:
    """Whether a passage ends by announcing what follows it ("Below are some examples…",
    "as follows:", "Poniżej…"); a passage cut short ("…") does not: its section goes on."""
    last = lines[-1] if lines else ""
    if last == "…" or last.startswith("```"):
        return False
    said = sentences(last)
    return bool(said) and bool(_LEAD_IN.search(said[-1]))


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
        lines = passage_lines(hit, links, STEP_CHARS, steps[n - 2] if n > 1 else None)
        # A step's words on its line; its code blocks after it, whole: joined into the line,
        # YAML lost its indentation and its fence was read as text.
        text = " ".join(line.lstrip("•0123456789. ") if line[:1] in "•0123456789" else line
                        for line in lines if not line.startswith("```"))
        numbered.append(f"{n}. {shown_section(hit.chunk.section, hit.document.title)}: {text} "
                        f"[{hit.chunk.chunk_id}]")
        numbered += [line for line in lines if line.startswith("```")]
    return "\n".join([intro, *numbered])
