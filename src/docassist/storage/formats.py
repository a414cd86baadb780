"""Reading files of each supported format into text with `#` headings and front matter.

Every format ends up as the same markdown-like text, so one chunker (core.documents) serves
all of them: HTML headings (h1–h6), DOCX heading styles and PDF outline entries become `#`
lines, and the format's own metadata (HTML meta tags, DOCX core properties, PDF info)
becomes front matter.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from docassist.core.documents import TEMPLATED_MARKDOWN, split_front_matter
from docassist.core.limits import MAX_DOCUMENT_BYTES
from docassist.storage.limits import MAX_DOCUMENT_TEXT_CHARS, MAX_EXPANDED_BYTES

TEXT_SUFFIXES: Final = frozenset({".txt", ".md", ".markdown"})
HTML_SUFFIXES: Final = frozenset({".html", ".htm"})
SUPPORTED_SUFFIXES: Final = TEXT_SUFFIXES | HTML_SUFFIXES | {".pdf", ".docx", TEMPLATED_MARKDOWN}
_HTML_SKIP: Final = ("script", "style", "nav", "header", "footer", "noscript", "form")
_HTML_SKIP_CLASSES: Final = re.compile(r"sphinxsidebar|related|footer|navigation|headerlink")
_HTML_BLOCKS: Final = ("p", "li", "pre", "td", "th", "dt", "dd", "blockquote")


def _front_matter(values: dict[str, str | None]) -> str:
    lines = [f"{key}: {value}" for key, value in values.items() if value]
    return "---\n" + "\n".join(lines) + "\n---\n" if lines else ""


def read_text_file(data: bytes) -> str:
    if b"\x00" in data:
        raise ValueError("binary content")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ValueError(f"not UTF-8 ({error.reason} at byte {error.start})") from error


_ERB_LINK: Final = re.compile(r"""<%=\s*link_to\s*\(?\s*(["'])(?P<text>[^"']+)\1.*?%>""",
                               re.DOTALL)
_ERB_TAG: Final = re.compile(r"<%.*?%>", re.DOTALL)
_ERB_PAGE_DATA: Final = re.compile(r"<%=\s*current_page\.data\.(?P<key>\w+)\s*%>")
_EMPTY_HEADING: Final = re.compile(r"#{1,6}[ \t]*")


def read_templated_markdown(data: bytes) -> str:
    """A Middleman page: Markdown once its Ruby tags are gone. A `link_to "text", …` keeps
    its text and `current_page.data.KEY` renders the page's own front matter (Tech Docs
    Template pages head themselves `# <%= current_page.data.title %>`); other tags
    (partials, helpers, code) render what no file holds, so they go, and so does a heading
    they leave empty (it made a chunk holding only `#`)."""
    text = read_text_file(data)
    meta = split_front_matter(text)[0]

    def rendered(erb: str) -> str:
        erb = _ERB_PAGE_DATA.sub(lambda match: meta.get(match["key"].lower(), ""), erb)
        return _ERB_TAG.sub("", _ERB_LINK.sub(lambda match: match["text"], erb))

    return rendered("\n".join(line for line in text.split("\n") if not (
        "<%" in line and _EMPTY_HEADING.fullmatch(rendered(line)))))


def format_of(name: str) -> str:
    """The format a file name says, as READERS keys it: its suffix, lower case, except for
    templated Markdown, whose name ends in two (`.md.erb`)."""
    lowered = name.lower()
    if lowered.endswith(TEMPLATED_MARKDOWN):
        return TEMPLATED_MARKDOWN
    dot = lowered.rfind(".")
    return lowered[dot:] if dot > lowered.rfind("/") and dot > 0 else ""


def read_html(data: bytes) -> str:
    from bs4 import BeautifulSoup, Tag

    soup = BeautifulSoup(data, "html.parser")
    meta: dict[str, str | None] = {}
    if soup.title and soup.title.string:
        meta["title"] = soup.title.string.strip()
    for tag in soup.find_all("meta"):
        name = str(tag.get("name") or "")
        if name.startswith("docassist:"):
            meta[name.removeprefix("docassist:")] = str(tag.get("content") or "")
    language = soup.html.get("lang") if soup.html else None
    if language and "language" not in meta:
        meta["language"] = str(language)[:2]
    for tag in soup.find_all(_HTML_SKIP):
        tag.decompose()
    for tag in soup.find_all(class_=_HTML_SKIP_CLASSES):
        if isinstance(tag, Tag):
            tag.decompose()
    root = soup.body or soup
    lines: list[str] = []
    for element in root.find_all(["h1", "h2", "h3", "h4", "h5", "h6", *_HTML_BLOCKS]):
        text = " ".join(element.get_text(" ").split())
        if not text:
            continue
        if element.name[0] == "h" and element.name[1:].isdigit():
            lines.append(f"\n{'#' * int(element.name[1:])} {text}\n")
        elif not element.find_parent(_HTML_BLOCKS):  # nested blocks were read with the parent
            lines.append(text)
    return _front_matter(meta) + "\n".join(lines)


def check_unpacked_size(data: bytes) -> None:
    """Refuse a zip-based file (DOCX) whose members unpack beyond MAX_EXPANDED_BYTES, from the
    sizes its directory declares, before anything is inflated; the inflating reader stops
    at the declared size, so a directory that lies cannot expand further either."""
    # A broken zip raises BadZipFile, which read_document reports as an unreadable file.
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        unpacked = sum(member.file_size for member in archive.infolist())
    if unpacked > MAX_EXPANDED_BYTES:
        raise ValueError(f"unpacks to too much ({unpacked} bytes from {len(data)}, limit "
                         f"{MAX_EXPANDED_BYTES})")


def read_docx(data: bytes) -> str:
    import docx

    check_unpacked_size(data)
    document = docx.Document(io.BytesIO(data))
    properties = document.core_properties
    meta: dict[str, str | None] = {
        "title": properties.title or None,
        "owner": properties.author or None,
        "version": properties.version or None,
        "language": (properties.language or "")[:2] or None,
        "updated": properties.modified.date().isoformat() if properties.modified else None,
    }
    lines: list[str] = []
    for paragraph in document.paragraphs:
        text = paragraph.text.strip()
        if not text:
            continue
        style = paragraph.style.name if paragraph.style is not None else ""
        level = _docx_heading_level(style or "")
        lines.append(f"\n{'#' * level} {text}\n" if level else text)
    return _front_matter(meta) + "\n".join(lines)


def _docx_heading_level(style: str) -> int:
    if style == "Title":
        return 1
    match = re.fullmatch(r"Heading (\d)", style)
    return min(int(match.group(1)) + 1, 6) if match else 0


def read_pdf(data: bytes) -> str:
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(io.BytesIO(data))
        pages = _pdf_pages(reader)
        headings = _pdf_outline(reader)
        info = reader.metadata
    except TooMuchText:
        raise
    except (PdfReadError, ValueError, KeyError) as error:
        raise ValueError(f"unreadable PDF ({error})") from error
    meta: dict[str, str | None] = {
        "title": str(info.title) if info and info.title else None,
        "owner": str(info.author) if info and info.author else None,
    }
    lines: list[str] = []
    for number, text in enumerate(pages):
        titles = headings.get(number, [])
        if not titles and not headings:
            titles = [f"Page {number + 1}"]
        lines.extend(f"\n## {title}\n" for title in titles)
        lines.append(text)
    return _front_matter(meta) + "\n".join(lines)


def _pdf_pages(reader: Any) -> list[str]:
    """Each page's text, stopping as soon as the document's text passes the limit (a small
    PDF's compressed streams can expand to far more text than its size suggests)."""
    pages: list[str] = []
    total = 0
    for page in reader.pages:
        pages.append(page.extract_text() or "")
        total += len(pages[-1])
        if total > MAX_DOCUMENT_TEXT_CHARS:
            raise TooMuchText()
    return pages


class TooMuchText(ValueError):
    """A document whose text passes MAX_DOCUMENT_TEXT_CHARS: refused, not cut."""

    def __init__(self) -> None:
        super().__init__(f"too much text (more than {MAX_DOCUMENT_TEXT_CHARS} characters)")


def _pdf_outline(reader: Any) -> dict[int, list[str]]:
    """Outline (bookmark) titles by page index; PDFs without an outline give {}."""
    result: dict[int, list[str]] = {}

    def walk(entries: list[Any]) -> None:
        for entry in entries:
            if isinstance(entry, list):
                walk(entry)
                continue
            try:
                page = reader.get_destination_page_number(entry)
            except (KeyError, ValueError, TypeError):
                continue
            result.setdefault(page, []).append(str(entry.title).strip())

    walk(list(reader.outline))
    return result


READERS: Final[dict[str, Callable[[bytes], str]]] = {
    **dict.fromkeys(TEXT_SUFFIXES, read_text_file),
    **dict.fromkeys(HTML_SUFFIXES, read_html),
    TEMPLATED_MARKDOWN: read_templated_markdown,
    ".docx": read_docx,
    ".pdf": read_pdf,
}


def read_document(path: Path) -> tuple[str, bytes]:
    """The document as markdown-like text, and its raw bytes; ValueError says why not."""
    suffix = format_of(path.name)
    if suffix not in READERS:
        raise ValueError(f"unsupported format {suffix or '(none)'}")
    size = path.stat().st_size
    if size > MAX_DOCUMENT_BYTES:
        raise ValueError(f"too large ({size} bytes, limit {MAX_DOCUMENT_BYTES})")
    data = path.read_bytes()
    return read_bytes(data, suffix), data


def read_bytes(data: bytes, suffix: str) -> str:
    """A file's bytes (a file on disk, or one a source downloaded) as markdown-like text, by
    its name's suffix; ValueError says why not."""
    reader = READERS.get(suffix)
    if reader is None:
        raise ValueError(f"unsupported format {suffix or '(none)'}")
    try:
        text = reader(data)
    except ValueError:
        raise
    except Exception as error:  # third-party parsers raise their own types on broken files
        raise ValueError(f"unreadable {suffix} file ({error})") from error
    if not text.strip():
        raise ValueError("empty")
    if len(text) > MAX_DOCUMENT_TEXT_CHARS:
        raise TooMuchText()
    return text
