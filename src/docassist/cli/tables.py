"""Tables for people, at any terminal width: an id is never cut or wrapped (people copy it
into the next command); the other columns give way. Optional columns are left out, last
first, while the table would not fit on one line per row; what stays wraps its text. When
even that would cut words (a real handbook's ids are 50 characters wide), each row is a
record instead: its id on a line, then its other columns as `name: value`. Every column is
always in `--json`.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

Role = Literal["id", "essential", "optional"]
LONG_WORD: Final = 16
"""A word longer than this may wrap mid-word rather than turn the table into records."""
RECORD_INDENT: Final = 2
"""A record's fields are indented this much under its id."""
UNBOUNDED_WIDTH: Final = 10_000
"""The width a table is measured at to learn how wide it is without any wrapping."""


@dataclass(frozen=True)
class Column:
    header: str
    role: Role = "essential"
    max_width: int | None = None
    """The most a free-text column takes in a wide terminal (the rest wraps)."""


def fitted_table(console: Console, columns: Sequence[Column],
                 rows: Sequence[Sequence[str]]) -> RenderableType:
    """A table of `rows` (one cell per column) that fits `console`: ids whole, optional
    columns dropped from the right while the natural width exceeds the console's; records
    when the rest cannot wrap without cutting a word. Print it with `crop=False`: a record's
    id line is never cut, even when longer than the terminal."""
    shown = list(range(len(columns)))
    table = _table(columns, rows, shown)
    while _natural_width(console, table) > console.width:
        optional = [index for index in shown if columns[index].role == "optional"]
        if not optional:
            break  # what is left wraps; ids are no_wrap, so they stay whole
        shown.remove(optional[-1])
        table = _table(columns, rows, shown)
    if _narrowest(columns, rows, shown) > console.width:  # Rich would cut words to "t…"
        return _records(columns, rows, console.width)
    return table


def _narrowest(columns: Sequence[Column], rows: Sequence[Sequence[str]],
               shown: list[int]) -> int:
    """The width the shown columns need without cutting a word (a long word counts up to
    LONG_WORD: a path wraps at any character anyway), borders and padding included."""
    width = 1
    for index in shown:
        words = [columns[index].header]
        words += [word for row in rows for word in (  # an id cell may hold one id a line
            row[index].split("\n") if columns[index].role == "id" else row[index].split())]
        needed = max(map(len, words))
        width += (needed if columns[index].role == "id" else min(needed, LONG_WORD)) + 3
    return width


def _records(columns: Sequence[Column], rows: Sequence[Sequence[str]], width: int
             ) -> Group:
    """Each row as its id alone on a line (whole, to copy), then every other non-empty
    column as `name: value`, indented: on one line when they fit, else one a line (wrapped,
    a new operator read "indexed:" at a line's end and its date at the next one's start)."""
    records: list[RenderableType] = []
    for row in rows:
        for column, cell in zip(columns, row, strict=True):
            if column.role == "id" and cell:  # never wrapped: a path longer than the line too
                records.extend(Text(line, style="bold", no_wrap=True, overflow="ignore")
                               for line in cell.split("\n"))
        fields = [f"{column.header}: {cell}" for column, cell in zip(columns, row, strict=True)
                  if column.role != "id" and cell]
        joined = " · ".join(fields)
        room = max(width - RECORD_INDENT, LONG_WORD)
        for field in [joined] if len(joined) <= room else fields:
            # Wrapped here, a long path filling each line: Rich would put it under its name.
            records.extend(Text(" " * RECORD_INDENT + line, no_wrap=True, overflow="ignore")
                           for line in textwrap.wrap(field, room, break_on_hyphens=False))
    return Group(*records)


def _table(columns: Sequence[Column], rows: Sequence[Sequence[str]],
           shown: list[int]) -> Table:
    table = Table()
    for index in shown:
        column = columns[index]
        if column.role == "id":  # never wrapped, never shortened: other columns shrink
            table.add_column(column.header, no_wrap=True, min_width=len(column.header))
        else:
            # A word longer than the column (a path) folds onto the next line, never "…".
            table.add_column(column.header, max_width=column.max_width, overflow="fold")
    for row in rows:
        table.add_row(*(row[index] for index in shown))
    return table


def _natural_width(console: Console, table: Table) -> int:
    return console.measure(table, options=console.options.update_width(UNBOUNDED_WIDTH)).maximum
