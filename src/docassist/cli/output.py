"""Where the CLI writes: results to stdout (with `--json`, exactly one JSON document), notes,
progress and errors to stderr; and the one shape of a failed command (exit 2)."""

from __future__ import annotations

import json
import logging
import sys
from typing import Any

import typer
from rich.console import Console

from docassist.logs import json_logs

out = Console()
err = Console(stderr=True)


def emit_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, ensure_ascii=False, indent=2) + "\n")


def fail(message: str, as_json: bool) -> typer.Exit:
    if json_logs():  # stderr holds JSON lines only
        logging.getLogger("docassist.cli").error(message)
    else:
        err.print(f"[red]error:[/red] {message}", soft_wrap=True)  # one line, paths whole
    if as_json:
        emit_json({"error": message})
    return typer.Exit(code=2)
