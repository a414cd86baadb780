"""What "inside a fenced code block" means, for every reader of Markdown in core.

A line of three or more backticks or tildes opens a block (an info string may follow). Only
the same character, at least as many and nothing after, closes it: a "```" line inside a
"````" block is code, and so is "```python" inside a "```" block. A block never closed runs
to the end. A line such as "```make test```" is inline code, not a fence: what follows
backticks that open a block holds no backtick (CommonMark). Cutting pages into sections and
blocks, rendering a passage, tidying an answer and laying a reply out for chat all read
fences this one way.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

_FENCE_MARK: Final = re.compile(r"^\s*(`{3,}|~{3,})")


def _marker(line: str) -> tuple[str, str] | None:
    """(the fence's marker, what follows it on the line), or None for any other line."""
    mark = _FENCE_MARK.match(line)
    if mark is None:
        return None
    rest = line[mark.end():].strip()
    return None if mark.group(1)[0] == "`" and "`" in rest else (mark.group(1), rest)


def fence_after(line: str, fence: str) -> str:
    """The open block's marker after `line`, given the marker before it ("" outside code)."""
    marker = _marker(line)
    if marker is None:
        return fence
    mark, rest = marker
    if not fence:
        return mark
    closes = mark[0] == fence[0] and len(mark) >= len(fence) and not rest
    return "" if closes else fence


def outside_code(text: str, change: Callable[[str], str]) -> str:
    """`text` with `change` applied to all but its fenced code blocks, which stay as written
    (their spaces and comments are the code's). Fence lines belong to their block."""
    parts: list[str] = []
    run: list[str] = []
    in_code = False
    fence = ""
    for line in text.splitlines(keepends=True):
        after = fence_after(line, fence)
        code = bool(fence or after)  # an opening line, a block's line, or its closing line
        if code != in_code and run:
            parts.append("".join(run) if in_code else change("".join(run)))
            run = []
        in_code, fence = code, after
        run.append(line)
    if run:
        parts.append("".join(run) if in_code else change("".join(run)))
    return "".join(parts)
