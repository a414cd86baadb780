"""Where the CLI writes: results to stdout (with `--json`, exactly one JSON document), notes,
progress and errors to stderr; and the one shape of a failed command (exit 2)."""

from __future__ import annotations

import json
import logging
import os
import sys
from typing import Any, Final

import typer
from rich.console import Console
from rich.text import Text

from docassist.logs import json_logs

PIPED_WIDTH: Final = 10_000
"""stdout's width into a pipe or a file when COLUMNS names none: Rich's default of 80 cut
the commands in an answer in two and narrowed tables; a file is read by scrolling."""


def _stdout_width() -> int | None:
    """None (Rich's own reading: the terminal, or COLUMNS) unless stdout is piped."""
    return None if sys.stdout.isatty() or os.environ.get("COLUMNS") else PIPED_WIDTH


out = Console(markup=False, width=_stdout_width())
err = Console(stderr=True, markup=False)
"""Rich markup off on both: what we print holds users' text (paths, titles, questions,
install hints such as '.[dev]'), whose "[…]" Rich would read as a style and drop. A style
is given as Text (labelled, styled)."""


def labelled(label: str, text: str, style: str = "yellow") -> Text:
    """"note: …", "error: …": the label styled, the text exactly as written."""
    return Text.assemble((label, style), " ", text)


def emit_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, ensure_ascii=False, indent=2) + "\n")


def fail(message: str, as_json: bool) -> typer.Exit:
    if json_logs():  # stderr holds JSON lines only
        logging.getLogger("docassist.cli").error(message)
    else:
        err.print(labelled("error:", message, "red"), soft_wrap=True)  # one line, paths whole
    if as_json:
        emit_json({"error": message})
    return typer.Exit(code=2)
