"""Documents and chunks: front matter, heading-based chunking, stable ids. No I/O here."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Final
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator

from docassist.core.fences import fence_after
from docassist.core.limits import (
    CHUNK_MAX_CHARS,
    CHUNK_OVERLAP_CHARS,
    CHUNK_TARGET_CHARS,
    MAX_DOCUMENT_ID_CHARS,
)
from docassist.core.text import sentences

KNOWN_FRONT_MATTER_KEYS: Final = frozenset(
    {"id", "title", "version", "owner", "language", "updated", "url", "services"}
)
DEFAULT_COLLECTION: Final = "default"
CHUNKING_VERSION: Final = 5
"""How documents are cut into chunks; a document stored with another (or none: before this
existed) is parsed again by the next `index` or sync even when its bytes did not change.
2: long sections are cut between blocks and lines, keeping lists and paragraphs (issue 40).
3: a `# comment` line inside a fenced code block is code, not a heading (it cut the block
off its section and named a section after the comment).
4: fences are read one way everywhere (core/fences.py): "```make test```" on a line is inline
code, and "```python" inside an open block does not close it (16 of the 5,163 pages of
samples/ are cut differently).
5: a Setext heading (a one-line paragraph underlined with `===` or `---`) is a heading, as
CommonMark reads it; before, its line was text and the underline a rule in the section
above it."""
NO_VERSION: Final = "—"
"""Shown to people for a document without a version of its own."""
VERSION_HASH_CHARS: Final = 10
"""A document without a version of its own is versioned by this many hex digits of its
content hash (which every chunk id carries too)."""
DOCUMENT_ID_PATTERN: Final = re.compile(r"^[A-Z][A-Z0-9]*(?:[-_][A-Z0-9]+)*$")
CITATION: Final = re.compile(r"\[([A-Z][A-Z0-9_]*(?:-[A-Z0-9_]+)*-[0-9a-f]{10}-\d{4})\]")
"""A chunk id cited in an answer's text (`[DOC-X-0123456789-0001]`); group 1 is the id."""
_HEADING: Final = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_SETEXT_UNDERLINE: Final = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_NOT_A_PARAGRAPH: Final = re.compile(r"^(?: {4}|\t| {0,3}(?:[#>|<*+-]|\d+[.)]|```|~~~))")
"""A line that starts a list item, a quote, a table, HTML, a heading, a fence or indented code:
it is no paragraph, so a `---` under it is a rule or a list's dash, not its underline."""
_FRONT_MATTER_LINE: Final = re.compile(r"^([A-Za-z_][\w-]*)\s*:\s*(.*)$")
_SERVICE_NAME: Final = re.compile(r"\b[a-z][a-z0-9]*(?:-[a-z0-9]+)+\b")
_SERVICE_CONTEXT: Final = re.compile(
    r"\b(?:usług\w*|serwis\w*|services?|daemon|systemctl(?:\s+\w+)?|journalctl\s+-u|unit)\s*$",
    re.IGNORECASE,
)
_USED_AS_VERB: Final = re.compile(
    r"^\s+(?:their|its|our|your|the|a|an|this|these|those|them|it)\b", re.IGNORECASE)
""""Some services dual-host their DNS": a hyphenated word after "services" that takes an
object is a verb, not a service (a new operator was asked about "the dual-host service")."""


def redact_url(url: str) -> str:
    """The URL without `user:password@` (every output that shows a stored URL uses it)."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc="***@" + parts.netloc.rsplit("@", 1)[1]))


class DocumentInfo(BaseModel):
    """A catalog entry: one version of one document."""

    model_config = ConfigDict(extra="forbid")

    document_id: str
    title: str
    version: str
    owner: str | None = None
    language: str | None = None
    updated: str | None = None
    url: str | None = None
    source_path: str
    content_sha256: str
    chunk_count: int = 0
    services: list[str] = Field(default_factory=list)
    extra: dict[str, str] = Field(default_factory=dict)
    collection: str = DEFAULT_COLLECTION
    """The collection the document's source puts it in (issue 22 scopes searches by it)."""
    source: str | None = None
    """The configured source that indexed it; None for `docassist index PATH`."""
    indexed_at: str | None = None
    """When this version was stored (set by the store)."""
    chunking: int | None = None
    """The CHUNKING_VERSION its chunks were cut with (None: stored before there was one)."""

    @property
    def own_version(self) -> str | None:
        """The version the document declares; None when `version` only holds the content
        hash (people are shown "—" rather than a hash; JSON keeps `version` as it is)."""
        return own_version(self.version, self.content_sha256[:VERSION_HASH_CHARS])

    @property
    def chunked_current(self) -> bool:
        return self.chunking == CHUNKING_VERSION

    @field_validator("url")
    @classmethod
    def _no_credentials(cls, value: str | None) -> str | None:
        """A page crawled from a URL with `user:password@` (refused since; stored before)
        never shows the password, in chat or in the catalog."""
        return redact_url(value) if value else value


class Chunk(BaseModel):
    model_config = ConfigDict(extra="forbid")

    chunk_id: str
    document_id: str
    ordinal: int
    section: str
    header: str
    text: str


@dataclass(frozen=True)
class ChunkSizes:
    """How long sections are cut: above `max_chars`, windows of about `target_chars`
    that repeat about `overlap_chars` of the previous window."""

    max_chars: int = CHUNK_MAX_CHARS
    target_chars: int = CHUNK_TARGET_CHARS
    overlap_chars: int = CHUNK_OVERLAP_CHARS


@dataclass(frozen=True)
class ParsedDocument:
    info: DocumentInfo
    chunks: list[Chunk]
    declared_id: bool = False
    """True when the document names its own id (front matter), rather than getting one."""


def is_document_id(value: str) -> bool:
    """True for strings shaped like a catalog id (never a path, never free text)."""
    return len(value) <= MAX_DOCUMENT_ID_CHARS and bool(DOCUMENT_ID_PATTERN.match(value))


def document_id_from_stem(stem: str) -> str:
    """`DOC-` + the upper-case file stem with anything but letters and digits turned to `-`."""
    cleaned = re.sub(r"[^A-Z0-9]+", "-", stem.upper()).strip("-") or "UNTITLED"
    return f"DOC-{cleaned}"[:MAX_DOCUMENT_ID_CHARS]


TEMPLATED_MARKDOWN: Final = ".md.erb"
"""How the name of a Markdown page with Ruby (ERB) tags ends: the pages of the GOV.UK Tech
Docs Template and other Middleman sites (`guide.html.md.erb`), which many internal
handbooks are."""


def page_stem(name: str) -> str:
    """A file name without its extension; a templated Markdown page (`guide.html.md.erb`)
    without all of them, so its id and title are those of the page it renders."""
    if not name.lower().endswith(TEMPLATED_MARKDOWN):
        return PurePosixPath(name).stem
    stem = name[: -len(TEMPLATED_MARKDOWN)]
    return stem[: -len(".html")] if stem.lower().endswith(".html") else stem


def document_id_from_path(relative: PurePosixPath) -> str:
    """The id of a file at `relative` (to the indexed folder) without a front-matter id: a file
    directly in the folder keeps `DOC-<STEM>`; a nested one adds its folders, upper-cased and
    joined with `_` (`ru/guides/generate-pdf.md` → `DOC-RU_GUIDES_GENERATE-PDF`). Too long for
    an id, it is cut and ends in the path's hash, so two long paths still differ."""
    parts = [_id_part(folder) for folder in relative.parent.parts if _id_part(folder)]
    if not parts:
        return document_id_from_stem(page_stem(relative.name))
    whole = "DOC-" + "_".join([*parts, _id_part(page_stem(relative.name)) or "UNTITLED"])
    if len(whole) <= MAX_DOCUMENT_ID_CHARS:
        return whole
    cut = whole[: MAX_DOCUMENT_ID_CHARS - len(PATH_HASH_SUFFIX_EXAMPLE)].rstrip("-_")
    return f"{cut}-{path_hash(relative)}"


PATH_HASH_SUFFIX_EXAMPLE: Final = "-ABCDEF"


def path_hash(relative: PurePosixPath) -> str:
    """First 6 hex digits of the SHA-256 of the path, upper-cased: what tells apart two paths
    whose ids would be the same."""
    return hashlib.sha256(str(relative).encode("utf-8")).hexdigest()[:6].upper()


def _id_part(name: str) -> str:
    return re.sub(r"[^A-Z0-9]+", "-", name.upper()).strip("-")


def chunk_id(document_id: str, content_sha256: str, ordinal: int) -> str:
    return f"{document_id}-{content_sha256[:VERSION_HASH_CHARS]}-{ordinal:04d}"


_PART: Final = " ({}/{})"
"""A long section's chunks are labelled with their part: "Reception desks (2/3)"."""
_PART_LABEL: Final = re.compile(r" \((\d+)/\d+\)$")


_PAGE_TITLE_TAG: Final = re.compile(r"<%=\s*current_page\.data\.title\s*%>")
_TEMPLATE_TAG: Final = re.compile(r"<%.*?%>")


def shown_section(label: str, title: str) -> str:
    """A section label as people read it. A heading that is template code (Middleman sites
    head plain `.md` pages `# <%= current_page.data.title %>`) shows as the page's title,
    other tags as nothing. Search reads the label as indexed: the ranker was fitted on
    training handbooks whose headings carry the tag (docs/evaluation-method.md, stop 76)."""
    if "<%" not in label:
        return label
    rendered = _TEMPLATE_TAG.sub("", _PAGE_TITLE_TAG.sub(title, label)).strip()
    return rendered if whole_section(rendered).strip() else title


def whole_section(label: str) -> str:
    """A chunk's section label without the part a long section's chunks carry."""
    return _PART_LABEL.sub("", label)


def part_number(label: str) -> int | None:
    """Which part of a long section a chunk's label names ("macOS (2/4)" → 2); None for a
    section in one chunk."""
    part = _PART_LABEL.search(label)
    return int(part.group(1)) if part else None


def own_version(version: str, content_hash: str) -> str | None:
    """`version` unless it is the content-hash fallback (`content_hash`: its first
    VERSION_HASH_CHARS hex digits, as chunk ids carry them)."""
    return None if version == content_hash else version


def hash_of_chunk(chunk_id_value: str) -> str:
    """The content-hash part a chunk id names (`DOC-X-0123456789-0001` → `0123456789`)."""
    parts = chunk_id_value.rsplit("-", 2)
    return parts[1] if len(parts) == 3 else ""


def document_of_chunk(chunk_id_value: str) -> str:
    """The document id a chunk id names (`DOC-X-0123456789-0001` → `DOC-X`)."""
    return chunk_id_value.rsplit("-", 2)[0]


def split_front_matter(text: str) -> tuple[dict[str, str], str]:
    """Front matter between two `---` lines at the top, as strings; the rest is the body."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return {}, text
    for end, line in enumerate(lines[1:], start=1):
        if line.strip() == "---":
            meta: dict[str, str] = {}
            for entry in lines[1:end]:
                match = _FRONT_MATTER_LINE.match(entry.strip())
                if match:
                    meta[match.group(1).lower()] = match.group(2).strip().strip("\"'")
            return meta, "\n".join(lines[end + 1 :])
    return {}, text


def find_service_names(text: str) -> set[str]:
    """Hyphenated names that the text uses as services (`usługa docassist-api`, `systemctl …`)."""
    names: set[str] = set()
    for match in _SERVICE_NAME.finditer(text):
        before = text[max(0, match.start() - 40) : match.start()]
        after = text[match.end() : match.end() + 12]
        if _SERVICE_CONTEXT.search(before) and not _USED_AS_VERB.match(after):
            names.add(match.group(0))
    return names


def parse_document(
    file_name: str,
    stem: str,
    raw: str,
    *,
    content_sha256: str | None = None,
    sizes: ChunkSizes = ChunkSizes(),
    default_id: str | None = None,
) -> ParsedDocument:
    """Split one document into its catalog entry and chunks: by headings, then by size.

    `content_sha256` is the hash of the file's bytes (defaults to the text's); it names the
    version in every chunk id. Without a front-matter id, the id is `default_id` (the indexer
    derives it from the path) or else `DOC-` + the stem.
    """
    content_sha256 = content_sha256 or hashlib.sha256(raw.encode("utf-8")).hexdigest()
    meta, body = split_front_matter(raw)
    sections = _sections(body)
    first_heading = next((title for title, level, _ in sections if level == 1), None)
    declared = meta.get("id", "").strip().upper()
    document_id = declared or default_id or document_id_from_stem(stem)
    title = meta.get("title") or first_heading or stem
    version = meta.get("version") or content_sha256[:VERSION_HASH_CHARS]
    chunks: list[Chunk] = []
    for section, _level, section_body in sections:
        windows = split_by_size(section_body.strip(), sizes.max_chars, sizes.target_chars,
                                sizes.overlap_chars)
        for number, window in enumerate(windows, start=1):
            part = _PART.format(number, len(windows)) if len(windows) > 1 else ""
            label = f"{section}{part}"
            ordinal = len(chunks) + 1
            header = f"{file_name} | version={version} | {label}"
            chunks.append(
                Chunk(
                    chunk_id=chunk_id(document_id, content_sha256, ordinal),
                    document_id=document_id,
                    ordinal=ordinal,
                    section=label,
                    header=header,
                    text=f"{header}\n{window}",
                )
            )
    services = {name.strip() for name in meta.get("services", "").split(",") if name.strip()}
    info = DocumentInfo(
        document_id=document_id,
        title=title,
        version=version,
        owner=meta.get("owner") or None,
        language=meta.get("language") or None,
        updated=meta.get("updated") or None,
        url=meta.get("url") or None,
        source_path=file_name,
        content_sha256=content_sha256,
        chunk_count=len(chunks),
        services=sorted(services | find_service_names(body)),
        extra={k: v for k, v in meta.items() if k not in KNOWN_FRONT_MATTER_KEYS},
        chunking=CHUNKING_VERSION,
    )
    return ParsedDocument(info=info, chunks=chunks, declared_id=bool(declared))


def split_by_size(text: str, max_chars: int, target_chars: int, overlap_chars: int) -> list[str]:
    """`text` whole when short, else windows of about `target_chars` that repeat about
    `overlap_chars` of the previous window, cut between blocks (paragraphs, lists, code),
    then between lines, then between sentences: a list's items stay lines of their own."""
    if not text:
        return []
    if len(text) <= max_chars:
        return [text]
    units = _units(text, target_chars)
    windows: list[str] = []
    current: list[tuple[str, str]] = []
    for unit in units:
        if current and len(_joined([*current, unit])) > target_chars:
            windows.append(_joined(current))
            overlap: list[tuple[str, str]] = []
            for previous in reversed(current):
                if len(_joined([previous, *overlap])) > overlap_chars:
                    break
                overlap.insert(0, previous)
            current = overlap
        current.append(unit)
    if current and (not windows or _joined(current) not in windows[-1]):
        windows.append(_joined(current))
    return windows


def _units(text: str, limit: int) -> list[tuple[str, str]]:
    """(separator before it, text) pieces no longer than `limit`: blocks, else their lines,
    else sentences; a fenced code block is cut only by lines."""
    units: list[tuple[str, str]] = []
    for block in _blocks(text):
        if len(block) <= limit:
            units.append(("\n\n", block))
            continue
        for number, line in enumerate(block.split("\n")):
            separator = "\n\n" if number == 0 else "\n"
            pieces = [line] if len(line) <= limit else [
                piece for sentence in sentences(line) for piece in _hard_split(sentence, limit)]
            units.extend((separator if i == 0 else " ", piece) for i, piece in enumerate(pieces))
    return units


def _blocks(text: str) -> list[str]:
    """Paragraphs, lists and fenced code blocks (blank lines inside a fence stay in it)."""
    blocks: list[str] = []
    current: list[str] = []
    fence = ""
    for line in text.split("\n"):
        fence = fence_after(line, fence)
        if not line.strip() and not fence:
            if current:
                blocks.append("\n".join(current))
                current = []
            continue
        current.append(line)
    if current:
        blocks.append("\n".join(current))
    return blocks


def _joined(units: list[tuple[str, str]]) -> str:
    return "".join(separator + piece for separator, piece in units).lstrip()


def _hard_split(text: str, limit: int) -> list[str]:
    """A run-on "sentence" (a PDF page without punctuation) cut at word boundaries."""
    if len(text) <= limit:
        return [text]
    pieces: list[str] = []
    current = ""
    for word in text.split():
        if current and len(current) + 1 + len(word) > limit:
            pieces.append(current)
            current = word
        else:
            current = f"{current} {word}" if current else word
    return [*pieces, current] if current else pieces


def _underlines(line: str, above: list[str]) -> bool:
    """Whether `line` underlines the paragraph line before it (a Setext heading). Only a
    one-line paragraph is read so: a longer one under `---` is rarer than a rule after text
    written without a blank line."""
    return bool(_SETEXT_UNDERLINE.match(line) and above and above[-1].strip()
                and not _NOT_A_PARAGRAPH.match(above[-1])
                and (len(above) == 1 or not above[-2].strip()))


def _sections(body: str) -> list[tuple[str, int, str]]:
    """(heading, level, text under it) in order; text before any heading goes under `""`."""
    sections: list[tuple[str, int, list[str]]] = [("", 0, [])]
    fence = ""  # the open code fence's marker: a `# comment` inside it is code, not a heading
    for line in body.splitlines():
        fence = fence_after(line, fence)
        match = None if fence else _HEADING.match(line)  # a closing fence is no heading
        above = sections[-1][2]
        if match:
            sections.append((match.group(2).strip(), len(match.group(1)), []))
        elif not fence and _underlines(line, above):
            sections.append((above.pop().strip(), 1 if "=" in line else 2, []))
        else:
            above.append(line)
    result: list[tuple[str, int, str]] = []
    for heading, level, lines in sections:
        result.append((heading, level, "\n".join(lines)))
    first_title = next((heading for heading, level, _ in result if level == 1), "")
    # Untitled text before the first heading belongs to the document title.
    return [
        (heading or first_title or "Intro", level, text) for heading, level, text in result
    ]
