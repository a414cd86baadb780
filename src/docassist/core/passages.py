"""A document's passage as an answer shows it: in its own words and order, lists as lists
(each item with its own number), a lead-in line as a line, code blocks kept, links as the
linked page's title (and URL when known), templating and HTML left out.

The reply conventions are bot/layout.py's: `• ` a point, `N. ` a numbered step, ``` a code
block, `**…**` emphasis; single `*`/`_` emphasis is removed (platforms disagree on it).
"""

from __future__ import annotations

import html
import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from docassist.core.fences import fence_after, outside_code
from docassist.core.limits import CHUNK_OVERLAP_CHARS

LinkTitle = Callable[[str], tuple[str, str | None] | None]
"""A relative link's target (resolved against the page's own path) → the linked page's title
and URL, or None when the catalog does not hold it."""

MIN_REPEAT_CHARS: Final = 20
"""A shorter shared start is taken for chance, not the overlap ("Run:" ending one part and
opening the next)."""
_BULLET: Final = re.compile(r"^(\s*)[-*+•]\s+(.*)$")
_ORDERED: Final = re.compile(r"^(\s*)(\d{1,3})[.)]\s+(.*)$")
_TABLE_RULE: Final = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")
_LIQUID_PAGE: Final = re.compile(r"\{%-?\s*page\s+[\"']([^\"']+)[\"']\s*-?%\}")
_LIQUID_CHANNEL: Final = re.compile(r"\{%-?\s*slack_channel\s+[\"']([^\"']+)[\"']\s*-?%\}")
_TEMPLATE: Final = re.compile(r"\{%.*?%\}|\{\{.*?\}\}|<%=?.*?%>", re.DOTALL)
_IMAGE: Final = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_LINK: Final = re.compile(r"\[([^\]]+)\]\(\s*([^)\s]*)(?:\s+\"[^\"]*\")?\s*\)")
_REFERENCE_LINK: Final = re.compile(r"(?<![\w\])`])\[([^\]]+)\]\[[^\]]*\]")
"""`[PRs][prs]`, `[service monitoring][]`: the label (the definition is often in another
chunk). Not after a word or a bracket: `rows[0][1]` is code."""
_REFERENCE_DEFINITION: Final = re.compile(r"^ {0,3}\[[^\]]+\]:\s*\S+")
"""`[prs]: https://…`, a reference link's definition: no words of the page's own."""
_HTML_LINK: Final = re.compile(r"<a\s[^>]*href=[\"']([^\"']+)[\"'][^>]*>(.*?)</a>",
                               re.IGNORECASE | re.DOTALL)
_HTML_TAG: Final = re.compile(
    r"</?(?:a|abbr|b|br|code|del|details|div|em|h[1-6]|hr|i|img|kbd|li|ol|p|pre|s|small|span|"
    r"strong|sub|summary|sup|table|tbody|td|th|thead|tr|u|ul)\b[^>]*>", re.IGNORECASE)
"""HTML tags a Markdown page may carry; other `<…>` text (`<!channel>`, `<https://…|x>`) is the
document's own words and is shown as written (renderers keep it inert)."""
_SINGLE_EMPHASIS: Final = re.compile(r"(?<![\w*])([*_])(?!\s)([^*_\n]+?)(?<!\s)\1(?![\w*])")
_UNDERSCORE_STRONG: Final = re.compile(r"__([^_\n]+)__")
_BLOCK_TAG: Final = re.compile(r"^\s*(?:\{%-?\s*(?:end)?\w+[^%]*%\}|<%.*?%>)\s*$", re.MULTILINE)
_ITEM: Final = re.compile(r"^\s*(?:• |\d+\. )")
_HTML_COMMENT: Final = re.compile(r"<!--.*?(?:-->|$)", re.DOTALL)
"""`<!-- markdownlint-disable MD013 -->`: a note to the page's tools, shown in answers. Outside
code only (a snippet of HTML may hold one); an unclosed one runs to the end of the body."""


_CONTENTS_ITEM: Final = re.compile(r"^[ \t]*(?:[-*+]|\d+[.)])[ \t]+\[[^\]]+\]\(#[^)]*\)[ \t]*$\n?",
                                   re.MULTILINE)
"""A table of contents' line: a list item that is only a link within the page."""


def without_contents(body: str) -> str:
    """`body` without a table of contents (list items that only link within the page): it
    names every section's heading, so it read as answering whatever the page covers, and a
    new operator was given it instead of the section it listed."""
    return outside_code(body, lambda text: _CONTENTS_ITEM.sub("", text))


def chunk_body(text: str) -> str:
    """The chunk text without its `file | version=X | Section` header line."""
    return text.split("\n", 1)[1] if "\n" in text else text


def without_repeat(before: str, body: str) -> str:
    """`body` without the start it repeats from the end of `before`: a long section's next
    part opens with the last lines of the part before it (the chunk overlap, so that a step
    cut in two is found whole), which a reply showing both parts said twice."""
    for size in range(min(len(before), len(body), CHUNK_OVERLAP_CHARS), MIN_REPEAT_CHARS - 1,
                      -1):
        if body[size:size + 1] in ("", "\n", " ") and before.endswith(body[:size]):
            return body[size:].lstrip()
    return body


def continues_table(body: str) -> bool:
    """Whether `body` opens with rows of a table whose header row is in an earlier chunk (a
    long table is cut between rows)."""
    lines = [line for line in body.split("\n") if line.strip()][:2]
    return bool(lines) and lines[0].lstrip().startswith("|") and not (
        len(lines) > 1 and _TABLE_RULE.match(lines[1]))


def table_header(body: str) -> list[str] | None:
    """The header row and rule of the last table `body` holds (None: it holds none)."""
    lines = body.split("\n")
    for at in range(len(lines) - 1, 0, -1):
        if _TABLE_RULE.match(lines[at]) and lines[at - 1].lstrip().startswith("|"):
            return [lines[at - 1], lines[at]]
    return None


@dataclass(frozen=True)
class Passage:
    """The passage's lines in reply conventions, ready to join with newlines."""

    lines: list[str]

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


def render(body: str, page_path: str = "", link_title: LinkTitle | None = None) -> Passage:
    """`body` (a chunk's text without its header line) in reply conventions."""
    lines: list[str] = []
    numbers: dict[int, int] = {}  # indentation → the next number of that ordered list
    code: list[str] | None = None
    indent = 0  # a fence inside a list item is indented: its block is shown flush left
    joins = False  # the line before was a paragraph's, which a soft-wrapped line continues
    fence = ""  # the open code block's marker
    for raw in _without_comments(_unwrapped(without_contents(body))).split("\n"):
        before, fence = fence, fence_after(raw, fence)
        if code is not None and not fence:
            code.append(raw.strip())
            lines.append("\n".join(code) if len(code) > 2 else "")  # an empty block: none
            code = None
            continue
        if code is not None:
            code.append(raw[min(indent, len(raw) - len(raw.lstrip())):])
            continue
        if fence and not before:
            code, indent, joins = [raw.strip()], len(raw) - len(raw.lstrip()), False
            continue
        if not raw.strip():
            joins = False
            continue  # a loose list's items are apart: its numbering goes on
        plain = _PLAIN.match(raw) is not None and not (_ORDERED.match(raw) or _BULLET.match(raw))
        if plain:
            numbers.clear()  # a paragraph ends the lists before it
        if joins and plain and lines and lines[-1]:  # one paragraph, as Markdown shows it
            lines[-1] = f"{lines[-1]} {inline(raw, page_path, link_title)}"
        else:
            lines.append(_line(raw, numbers, page_path, link_title, lines))
        joins = plain and not _HARD_BREAK.search(raw)
    if code is not None and len(code) > 1:  # unclosed: closed here, nothing after it is code
        lines.append("\n".join([*code, "```"]))  # (a chunk cut after "```sh" shows none)
    return Passage([line for line in lines if line])


def _without_comments(body: str) -> str:
    """HTML comments taken out of the text outside code fences."""
    return outside_code(body, lambda text: _HTML_COMMENT.sub("", text))


def _unwrapped(body: str) -> str:
    """Liquid/ERB tags alone on a line (`{% alert %}` … `{% endalert %}`) left out."""
    return _BLOCK_TAG.sub("", body)


_PLAIN: Final = re.compile(r"^[^\s|>#<]")
"""A paragraph's line: not indented (an item's continuation), not a table row, a quote, a
heading or HTML."""
_HARD_BREAK: Final = re.compile(r"(?: {2,}|\\)$")
"""A line Markdown ends with a line break: the next one is not joined to it."""
_CODE_SPAN: Final = re.compile(r"(`[^`]*`)")
_TASK_BOX: Final = re.compile(r"^\[([ xX])\]\s+")
TASK_MARKS: Final = ("☐", "☑")
"""A task list's boxes (`- [ ] item`, `- [x] item`): open, done; "[ ]" read as markup."""


def _line(raw: str, numbers: dict[int, int], page_path: str, link_title: LinkTitle | None,
          done: list[str]) -> str:
    if _TABLE_RULE.match(raw) or _REFERENCE_DEFINITION.match(raw):
        return ""
    ordered = _ORDERED.match(raw)
    bullet = _BULLET.match(raw)
    if ordered:
        depth = len(ordered.group(1).expandtabs(4))
        for deeper in [d for d in numbers if d > depth]:
            del numbers[deeper]
        # A list starts at its first item's number, as Markdown shows it: "2." after a code
        # block that ended the list of step 1 is step 2, not a new step 1.
        number = numbers.get(depth, int(ordered.group(2)))
        numbers[depth] = number + 1
        text = inline(ordered.group(3), page_path, link_title)
        return f"{'  ' * min(depth // 2, 2)}{number}. {text}"
    if bullet:
        depth = len(bullet.group(1).expandtabs(4))
        box = _TASK_BOX.match(bullet.group(2))
        mark = TASK_MARKS[box.group(1) != " "] if box else "•"
        item = bullet.group(2)[box.end():] if box else bullet.group(2)
        return f"{'  ' * min(depth // 2, 2)}{mark} {inline(item, page_path, link_title)}"
    text = inline(raw.strip().lstrip(">").strip(), page_path, link_title)
    if raw.strip().startswith("|"):
        cells = [cell.strip() for cell in text.strip("|").split("|")]
        return " — ".join(cell for cell in cells if cell)
    if raw[:1] in (" ", "\t") and done and _ITEM.match(done[-1]):
        done[-1] = f"{done[-1]} {text}"  # an item's wrapped continuation
        return ""
    return text


def inline(text: str, page_path: str = "", link_title: LinkTitle | None = None) -> str:
    """One line's markup as plain reply text."""
    text = _LIQUID_CHANNEL.sub(lambda m: f"#{m.group(1)}", text)
    text = _LIQUID_PAGE.sub(lambda m: m.group(1), text)
    text = _TEMPLATE.sub("", text)
    text = _IMAGE.sub(lambda m: m.group(1), text)
    text = _HTML_LINK.sub(lambda m: _link(
        _HTML_TAG.sub("", m.group(2)), m.group(1), page_path, link_title,
        f"{_HTML_TAG.sub('', m.group(2))} ({m.group(1)})"), text)
    text = _HTML_TAG.sub("", text)
    text = _LINK.sub(lambda m: _link(m.group(1), m.group(2), page_path, link_title,
                                     m.group(0)), text)
    text = _REFERENCE_LINK.sub(lambda m: m.group(1), text)
    text = _UNDERSCORE_STRONG.sub(r"**\1**", text)
    text = _SINGLE_EMPHASIS.sub(r"\2", text)
    # Entities ("3&ndash;8 people") as the characters they name; in a code span they are code.
    text = "".join(part if part.startswith("`") else html.unescape(part)
                   for part in _CODE_SPAN.split(text))
    return re.sub(r"[ \t]{2,}", " ", text).strip()


def _link(label: str, target: str, page_path: str, link_title: LinkTitle | None,
          written: str) -> str:
    """A link as the reply shows it: an absolute one as written (renderers keep it inert),
    one within the page as its words, a relative one as the linked page's title."""
    label = label.strip()
    if target.startswith(("http://", "https://")):
        return written
    if target.startswith(("mailto:", "#")) or not target:
        return label.removeprefix("mailto:")
    if link_title is None:
        return label
    path = target.split("#", 1)[0]
    resolved = posixpath.normpath(posixpath.join(posixpath.dirname(page_path), path)) \
        if not path.startswith("/") else path.lstrip("/")
    found = link_title(resolved)
    if found is None:
        return label
    title, url = found
    named = label if label.casefold() == title.casefold() else f"{label} (“{title}”"
    if named == label:
        return f"{label} ({url})" if url else label
    return f"{named}, {url})" if url else f"{named})"
