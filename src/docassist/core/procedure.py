"""Procedures: for "how do I…" questions, the consecutive sections that carry the task out.

A procedure document is a run of sections, each a step ("Requesting a new certificate",
"Installing the certificate", "Reloading docassist-gateway"). Retrieval finds some of them,
not necessarily all, and not in order. For a how-to question we take the best-matching
document and choose, among its step sections, the consecutive window that covers the most
retrieved score (a section that was not retrieved costs a little), so the answer walks the
task in document order instead of quoting sentences picked across sections. When the
question names the document's own title, the document is the task: its steps from the first.

A step section gives instructions: a command in backticks, a list, or a numbered line. A
section about an alternative path ("Rollback", "Gdy usługa nie uruchamia się") may start a
procedure but never continues one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from typing import Final

from docassist.core.documents import Chunk, part_number, whole_section
from docassist.core.limits import MAX_PROCEDURE_STEPS
from docassist.core.ports import SearchHit
from docassist.core.text import stems

MISSING_SECTION_COST: Final = 0.1
"""Score a window loses for each of its sections retrieval did not find (about a third of a
typical hybrid score): a gap of one or two sections is bridged, a long detour is not."""

_HOW_TO: Final = re.compile(
    r"^\W*(?:(?:a|and|ok|okay|so|i)\W+)?(?:how\s+(?:do|can|should|would|to|does\s+one)\b|"
    r"what\s+(?:are\s+the\s+steps|is\s+the\s+procedure|do\s+i\s+do|should\s+i\s+do)\b|"
    r"steps\s+to\b|procedure\s+for\b|jak\s+(?!długo|dlugo|często|czesto|wiele)\w+|"
    r"w\s+jaki\s+sposób|co\s+(?:zrobić|zrobic|trzeba\s+zrobić|należy\s+zrobić|robić|robic)\b|"
    r"jakie\s+są\s+kroki|procedura)",
    re.IGNORECASE,
)
_INSTRUCTION: Final = re.compile(r"`[^`]+`|^\s*(?:[-*•]|\d+[.)])\s+\S", re.MULTILINE)
_ALTERNATIVE_PATH: Final = re.compile(
    r"\b(?:rollback|roll\s+back|wycofani\w*|revert\w*|troubleshoot\w*|fail\w*|nie\s+\w+\s+się|"
    r"gdy\b|if\b|problem\w*|not\s+ready|stuck|zgłoszeni\w*\s+problemu|lost|locked|revok\w*)",
    re.IGNORECASE,
)
_ORDINAL: Final = re.compile(r"^(?P<prefix>.+)-(?P<ordinal>\d{4})$")


def is_how_to(question: str) -> bool:
    """ "How do I renew…", "Jak odnowić…", "Co zrobić po…": a task to walk through, also
    after the context people put first in chat ("on a mac, how do I set up signing?")."""
    return any(_HOW_TO.match(part.strip()) for part in _CLAUSE.split(question))


_CLAUSE: Final = re.compile(r"[,:;]\s+|\s[-–—]\s")
"""Where a chat message's context ends and its question may begin."""
_SET_UP: Final = re.compile(
    r"\b(?:set\s*up|setup|install\w*|configure|get\s+started|skonfigur\w*|ustawi\w*|"
    r"zainstal\w*|instal\w*)\b", re.IGNORECASE)


def asks_to_set_up(question: str) -> bool:
    """ "How do I set up…", "jak skonfigurować…": the whole procedure, from its start."""
    return bool(_SET_UP.search(question))


def is_step(chunk: Chunk) -> bool:
    body = chunk.text.split("\n", 1)[1] if "\n" in chunk.text else chunk.text
    return bool(_INSTRUCTION.search(body))


def is_alternative_path(chunk: Chunk) -> bool:
    """A section for when things go another way ("Rollback", "Gdy usługa nie uruchamia
    się", "Troubleshooting")."""
    return bool(_ALTERNATIVE_PATH.search(chunk.section))


TITLE_COVERAGE: Final = 2 / 3
"""Share of the question's words a document title must hold for the document to *be* the
task ("How do I renew the TLS certificate?" and "TLS certificate renewal")."""


def _names_the_whole_document(question: str, title: str) -> bool:
    asked, named = stems(question), stems(title)
    return len(asked) >= 2 and len(asked & named) >= TITLE_COVERAGE * len(asked)


def _from_the_first_step(sections: list[SearchHit]) -> list[SearchHit]:
    """The document's steps from its first step section, until an alternative path."""
    steps: list[SearchHit] = []
    for section in sections:
        if not is_step(section.chunk):
            if steps:
                break
            continue
        if steps and (is_alternative_path(section.chunk)
                      or section.chunk.ordinal != steps[-1].chunk.ordinal + 1):
            break
        steps.append(section)
    return steps[:MAX_PROCEDURE_STEPS]


def best_document_hit(question: str, hits: list[SearchHit]) -> SearchHit:
    """The best hit of the best-matching document: one that declares a service the question
    names comes first, then the most retrieved score (several good sections beat one)."""
    totals: dict[str, float] = {}
    for hit in hits:
        totals[hit.document.document_id] = totals.get(hit.document.document_id, 0.0) + hit.score

    def rank(hit: SearchHit) -> tuple[bool, float, float]:
        named = any(re.search(rf"(?<![\w-]){re.escape(service)}(?![\w-])", question, re.I)
                    for service in hit.document.services)
        return named, totals[hit.document.document_id], hit.score

    return max(hits, key=rank)


def _sibling_id(chunk_id: str, ordinal: int) -> str | None:
    match = _ORDINAL.match(chunk_id)
    return f"{match.group('prefix')}-{ordinal:04d}" if match else None


def _siblings(chunk: Chunk, ordinals: Iterable[int], lookup: Callable[[str], Chunk | None]
              ) -> Iterator[Chunk]:
    """The chunks of `chunk`'s document at `ordinals` that `lookup` finds, in that order."""
    for ordinal in ordinals:
        chunk_id = _sibling_id(chunk.chunk_id, ordinal)
        found = lookup(chunk_id) if chunk_id else None
        if found is not None:
            yield found


def earlier_chunks(chunk: Chunk, lookup: Callable[[str], Chunk | None], limit: int
                   ) -> Iterator[Chunk]:
    """The chunks before `chunk` in its document, nearest first, at most `limit`."""
    return _siblings(chunk, range(chunk.ordinal - 1, max(chunk.ordinal - 1 - limit, -1), -1),
                     lookup)


def page_sections(top: SearchHit, hits: list[SearchHit],
                  chunk: Callable[[str], Chunk | None]) -> list[SearchHit]:
    """Every section of `top`'s page in document order, with its score among `hits`; a
    section retrieval did not return is looked up with `chunk` and carries score 0."""
    scores = {hit.chunk.chunk_id: hit.score for hit in hits
              if hit.document.document_id == top.document.document_id}
    return [SearchHit(found, top.document, scores.get(found.chunk_id, 0.0))
            for found in _siblings(top.chunk, range(top.document.chunk_count + 1), chunk)]


def procedure_window(
    question: str, hits: list[SearchHit], chunk: Callable[[str], Chunk | None]
) -> list[SearchHit]:
    """The steps of the best-matching document in order, or [] when this is no procedure.

    Sections retrieval did not return are looked up with `chunk` and carry score 0.
    """
    if not hits or not is_how_to(question):
        return []
    top = best_document_hit(question, hits)
    sections = page_sections(top, hits, chunk)
    if _names_the_whole_document(question, top.document.title):
        return _from_the_first_step(sections)
    best: tuple[float, int, int] | None = None
    for start, first in enumerate(sections):
        if not is_step(first.chunk):
            continue
        total = 0.0
        for end in range(start, min(start + MAX_PROCEDURE_STEPS, len(sections))):
            current = sections[end]
            if end > start and (not is_step(current.chunk)
                                or current.chunk.ordinal != sections[end - 1].chunk.ordinal + 1
                                or is_alternative_path(current.chunk)):
                break
            total += current.score if current.score > 0 else -MISSING_SECTION_COST
            retrieved = any(s.score > 0 for s in sections[start:end + 1])
            if retrieved and (best is None or total > best[0]):
                best = (total, start, end)
    if best is None or (best[1] == best[2] and sections[best[1]].score <= 0):
        return []
    return sections[best[1]:best[2] + 1]


def from_the_section_start(question: str, steps: list[SearchHit], page: list[SearchHit]
                           ) -> list[SearchHit]:
    """A set-up's steps from the start of the section they begin in: not from part 3 of a
    long section whose first parts retrieval missed (a new operator's Windows set-up began
    at "Test the key is visible"). `page` holds every section of the steps' page."""
    if not steps or not asks_to_set_up(question):
        return steps
    by_ordinal = {hit.chunk.ordinal: hit for hit in page
                  if hit.document.document_id == steps[0].document.document_id}
    first = steps[0]
    while (before := by_ordinal.get(first.chunk.ordinal - 1)) is not None and is_next_part(
            before, first):
        first = before
    earlier = [by_ordinal[n] for n in range(first.chunk.ordinal, steps[0].chunk.ordinal)]
    return [*earlier, *steps][:MAX_PROCEDURE_STEPS]


def is_next_part(before: SearchHit, part: SearchHit) -> bool:
    """Whether `part` is the part after `before` of the same long section."""
    return (part.document.document_id == before.document.document_id
            and part.chunk.ordinal == before.chunk.ordinal + 1
            and part_number(part.chunk.section) is not None
            and whole_section(part.chunk.section) == whole_section(before.chunk.section))
