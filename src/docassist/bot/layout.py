"""Reply text → a small neutral layout that the Slack and Teams renderers share.

Replies are plain text with a few conventions: a line starting with `•`, `-` or `*` is a
point, `1.` or `1)` a numbered step, ``` or ~~~ fences hold a code block (read as
core/fences.py reads them), backticks an inline command, `**…**` emphasis and `[CHUNK-ID]` a
citation, which chat shows as a numbered marker resolved in the sources block (see
`citation_numbers`). Each renderer writes these in its platform's own terms (Block Kit
mrkdwn, Adaptive Card runs) and treats every piece of text as data: what a document or a
user wrote never becomes platform markup, so nothing here unescapes or passes text through.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final, Literal

from docassist.core.documents import CITATION
from docassist.core.fences import fence_after
from docassist.core.results import TurnResult
from docassist.core.state import Source

SpanKind = Literal["text", "code", "strong", "cite"]
BlockKind = Literal["line", "point", "step", "code"]

_POINT: Final = re.compile(r"^\s*[•*-]\s+(.*)$")
_STEP: Final = re.compile(r"^\s*(\d{1,3})[.)]\s+(.*)$")
_CONTINUATION: Final = re.compile(r"^\s{2,}\S")
_INLINE: Final = re.compile(r"(`+)([^`\n]+)\1|\*\*([^*\n]+)\*\*|" + CITATION.pattern)
"""Inline code between runs of as many backticks (```make test``` too), strong text, a
citation."""


@dataclass(frozen=True)
class Span:
    kind: SpanKind
    text: str
    """What is shown (a citation's marker number, or its chunk id when not numbered)."""
    target: str = ""
    """A citation's chunk id."""


Numbers = Mapping[str, int]
"""Cited chunk id → its marker number."""


def citation_numbers(answer: str) -> dict[str, int]:
    """Each cited chunk id's marker, numbered in order of first citation. In chat a path id
    (`DOC-DEPARTMENTS_PEOPLE-OPS_TOOLS_FAQ-…-0004`) beside every sentence drowns the text it
    backs; `[1]` there and the id once, with its title, in the sources block keep both
    readable, and the exact id is still one glance away."""
    return {chunk_id: number for number, chunk_id
            in enumerate(dict.fromkeys(CITATION.findall(answer)), start=1)}


def cited_sources(result: TurnResult) -> list[tuple[int, Source]]:
    """The answer's cited sources in marker order, each with its number."""
    by_id = {source.chunk_id: source for source in result.sources}
    return [(number, by_id[chunk_id])
            for chunk_id, number in citation_numbers(result.answer).items()
            if chunk_id in by_id]


def citations_json(result: TurnResult) -> list[dict[str, object]]:
    """`ask --json`'s `citations`: what each marker in chat stands for."""
    return [{"marker": number, "chunk_id": source.chunk_id,
             "document_id": source.document_id, "title": source.title,
             "section": source.section, "url": source.url}
            for number, source in cited_sources(result)]


class CitationMarkers:
    """Numbers citations in text that arrives in pieces (a streamed answer): a chunk id
    keeps the number of its first citation, as `citation_numbers` gives over the whole."""

    def __init__(self) -> None:
        self.numbers: dict[str, int] = {}

    def apply(self, text: str) -> str:
        def marker(match: re.Match[str]) -> str:
            number = self.numbers.setdefault(match.group(1), len(self.numbers) + 1)
            return f"[{number}]"
        return CITATION.sub(marker, text)


@dataclass
class Block:
    """One line of a reply as people should see it: a line of prose, a point, a numbered
    step or a code block. `gap` marks a blank line before it (a new paragraph)."""

    kind: BlockKind
    spans: list[Span] = field(default_factory=list)
    number: int | None = None
    gap: bool = False

    @property
    def text(self) -> str:
        """The block's words without markers, as a person reads them (for sizing)."""
        return "".join(f"[{s.text}]" if s.kind == "cite" else s.text for s in self.spans)


def spans(text: str, numbers: Numbers | None = None) -> list[Span]:
    """Inline pieces of one line: text, `code`, **strong** and [citations] (shown as their
    number when `numbers` has one)."""
    found: list[Span] = []
    position = 0
    for match in _INLINE.finditer(text):
        if match.start() > position:
            found.append(Span("text", text[position:match.start()]))
        _, code, strong, cite = match.groups()
        if code is not None:
            found.append(Span("code", code))
        elif strong is not None:
            found.append(Span("strong", strong))
        else:
            shown = str(numbers[cite]) if numbers and cite in numbers else cite
            found.append(Span("cite", shown, target=cite))
        position = match.end()
    if position < len(text):
        found.append(Span("text", text[position:]))
    return found


def parse(text: str, numbers: Numbers | None = None) -> list[Block]:
    """The blocks of a reply, in order; nothing of the text is dropped but markers.
    Citations with a number in `numbers` are shown as that number."""
    blocks: list[Block] = []
    gap = False
    code: list[str] = []
    fence = ""  # the open block's marker ("" outside code)
    for raw in text.replace("\r\n", "\n").split("\n"):
        opened, fence = fence, fence_after(raw, fence)
        if opened and fence:  # inside a fenced block: verbatim until the closing fence
            code.append(raw)
            continue
        if opened:
            blocks.append(Block("code", [Span("code", "\n".join(code))], gap=gap))
            code, gap = [], False
            continue
        if fence:
            continue
        if not raw.strip():
            gap = bool(blocks)
            continue
        if blocks and not gap and blocks[-1].kind in ("point", "step") \
                and _CONTINUATION.match(raw):
            blocks[-1].spans.extend(spans(" " + raw.strip(), numbers))
            continue
        blocks.append(_line_block(raw, gap, numbers))
        gap = False
    if fence:  # an unclosed fence still shows its lines
        blocks.append(Block("code", [Span("code", "\n".join(code))], gap=gap))
    return blocks


def _line_block(raw: str, gap: bool, numbers: Numbers | None) -> Block:
    if step := _STEP.match(raw):
        return Block("step", spans(step.group(2).strip(), numbers), int(step.group(1)), gap)
    if point := _POINT.match(raw):
        return Block("point", spans(point.group(1).strip(), numbers), gap=gap)
    return Block("line", spans(raw.strip(), numbers), gap=gap)


def pack(sizes: list[int], limit: int, separator: int = 1) -> list[range]:
    """Consecutive groups of items whose sizes (plus a separator between items) fit within
    `limit`; an item larger than the limit gets a group of its own."""
    groups: list[range] = []
    start, used = 0, 0
    for index, size in enumerate(sizes):
        extra = size if index == start else used + separator + size
        if index > start and extra > limit:
            groups.append(range(start, index))
            start, used = index, size
        else:
            used = extra
    if sizes:
        groups.append(range(start, len(sizes)))
    return groups


def web_url(url: str | None) -> str | None:
    """A catalog url that may become a link: http(s) only, nothing else is linked."""
    if url and re.match(r"^https?://[^\s]+$", url, re.IGNORECASE):
        return url
    return None
