"""Tables for people, at any terminal width: an id is never cut or wrapped (people copy it
into the next command); the other columns give way. Optional columns are left out, last
first, while the table would not fit on one line per row; what stays wraps its text. Every
column is always in `--json`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

from rich.console import Console
from rich.table import Table

Role = Literal["id", "essential", "optional"]
UNBOUNDED_WIDTH: Final = 10_000
"""The width a table is measured at to learn how wide it is without any wrapping."""


@dataclass(frozen=True)
class Column:
    header: str
    role: Role = "essential"
    max_width: int | None = None
    """The most a free-text column takes in a wide terminal (the rest wraps)."""


def fitted_table(console: Console, columns: Sequence[Column],
                 rows: Sequence[Sequence[str]]) -> Table:
    """A table of `rows` (one cell per column) that fits `console`: ids whole, optional
    columns dropped from the right while the natural width exceeds the console's."""
    shown = list(range(len(columns)))
    table = _table(columns, rows, shown)
    while _natural_width(console, table) > console.width:
        optional = [index for index in shown if columns[index].role == "optional"]
        if not optional:
            break  # what is left wraps; ids are no_wrap, so they stay whole
        shown.remove(optional[-1])
        table = _table(columns, rows, shown)
    return table


def _table(columns: Sequence[Column], rows: Sequence[Sequence[str]],
           shown: list[int]) -> Table:
    table = Table()
    for index in shown:
        column = columns[index]
        if column.role == "id":  # never wrapped, never shortened: other columns shrink
            table.add_column(column.header, no_wrap=True, min_width=len(column.header))
        else:
            table.add_column(column.header, max_width=column.max_width)
    for row in rows:
        table.add_row(*(row[index] for index in shown))
    return table


def _natural_width(console: Console, table: Table) -> int:
    return console.measure(table, options=console.options.update_width(UNBOUNDED_WIDTH)).maximum
