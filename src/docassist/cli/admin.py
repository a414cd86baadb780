"""Operators' commands: `doctor`, `traces export|purge`, `report`."""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Final

import typer

from docassist.cli.common import JsonOption, announce_database, open_checked
from docassist.cli.gaps import gaps
from docassist.cli.output import emit_json, err, fail, out
from docassist.cli.scopes import AudienceOption, CollectionFilterOption, traced_collection
from docassist.cli.tables import Column, fitted_table
from docassist.config import load_settings
from docassist.core.errors import DocAssistError
from docassist.serving.doctor import run_checks
from docassist.storage.exports import (
    parse_age,
    parse_moment,
    purge_older_than,
    trace_rows,
    write_export,
    write_rows,
)

app = typer.Typer()
traces_app = typer.Typer(help="Export and purge the traces.", no_args_is_help=True)


DOCTOR_COLUMNS: Final = (Column("role", "id"), Column("backend", "id"), Column("ok"),
                         Column("latency ms"), Column("detail", max_width=60))
"""The backend column holds the database's path or URL: whole, as an id (it was cut)."""


@app.command()
def doctor(as_json: JsonOption = False) -> None:
    """Which backends answer, with their models and latency; exit 1 if any does not."""
    try:
        settings = load_settings()
    except DocAssistError as error:
        raise fail(str(error), as_json) from error
    announce_database(settings)
    checks = run_checks(settings)
    if as_json:
        emit_json({"ok": all(check.ok for check in checks),
                    "checks": [check.model_dump() for check in checks]})
    else:
        rows = [[check.role, check.spec, "✓" if check.ok else "✗",
                 f"{check.latency_ms:.0f}" if check.latency_ms is not None else "",
                 check.detail] for check in checks]
        out.print(fitted_table(out, DOCTOR_COLUMNS, rows), crop=False)
    if not all(check.ok for check in checks):
        raise typer.Exit(code=1)



STDOUT_PATH: Final = "-"
"""`--out -`: the export to stdout (a pipe), its count to stderr."""


class TraceFormat(StrEnum):
    jsonl = "jsonl"
    csv = "csv"


@traces_app.command("export")
def traces_export(
    out_path: Annotated[Path, typer.Option(
        "--out", help="File to write; `-` writes the export to stdout.")],
    format_: Annotated[TraceFormat, typer.Option("--format", help="jsonl or csv.")] = (
        TraceFormat.jsonl),
    since: Annotated[str | None, typer.Option(
        help="ISO date/time, or this long ago (7d, 12h, 30m); inclusive.")] = None,
    until: Annotated[str | None, typer.Option(
        help="ISO date/time, or this long ago (7d, 12h, 30m); exclusive.")] = None,
    conversation: Annotated[str | None, typer.Option(help="A conversation id.")] = None,
    audience: AudienceOption = None,
    collection: CollectionFilterOption = None,
    as_json: JsonOption = False,
) -> None:
    """Export turns (with their tool attempts) as JSONL or CSV ; columns in the docs."""
    try:
        now = datetime.now(UTC)  # one moment for both bounds
        start, end = parse_moment(since, "--since", now), parse_moment(until, "--until", now)
    except ValueError as error:  # before anything is opened: a bad option writes nothing
        raise fail(str(error), as_json) from error
    to_stdout = str(out_path) == STDOUT_PATH
    if to_stdout and as_json:  # stdout holds one JSON document, or the export: not both
        raise fail("--out - writes the export to stdout; leave out --json", as_json)
    runtime = open_checked(as_json)
    traced_collection(collection, runtime.store, as_json)
    rows = trace_rows(runtime.store, start, end, conversation, audience=audience,
                      collection=collection)
    if to_stdout:
        write_rows(rows, format_.value, sys.stdout)
        err.print(f"exported {len(rows)} turn(s) ({format_.value})")
        return
    try:
        write_export(rows, format_.value, out_path)
    except OSError as error:
        raise fail(f"cannot write {out_path}: {error.strerror or error}", as_json) from error
    if as_json:
        emit_json({"rows": len(rows), "format": format_.value, "out": str(out_path)})
    else:
        out.print(f"exported {len(rows)} turn(s) to {out_path} ({format_.value})")


@traces_app.command("purge")
def traces_purge(
    older_than: Annotated[str, typer.Option("--older-than", help="e.g. 90d, 12h, 30m")],
    as_json: JsonOption = False,
) -> None:
    """Erase every stored copy of user text older than the given age (see the privacy docs)."""
    try:
        age = parse_age(older_than)
    except ValueError as error:
        raise fail(str(error), as_json) from error
    runtime = open_checked(as_json)
    try:
        erased = purge_older_than(runtime.store, age)
    except DocAssistError as error:
        raise fail(str(error), as_json) from error
    if as_json:
        emit_json({"deleted_turns": erased.turns, "deleted_tool_calls": erased.tool_calls,
                    "deleted_shadow_decisions": erased.shadow_decisions,
                    "deleted_feedback": erased.feedback,
                    "deleted_inbox_events": erased.inbox_events,
                    "emptied_conversations": erased.conversations_emptied})
    else:
        out.print(f"deleted {erased.turns} turn(s), {erased.inbox_events} inbox event(s) and "
                  f"{erased.shadow_decisions} shadow record(s) older than {older_than}; "
                  f"emptied {erased.conversations_emptied} conversation(s) idle since then")


@app.command()
def report(
    out_path: Annotated[Path, typer.Option("--out", help="HTML file to write.")],
    audience: AudienceOption = None,
    collection: CollectionFilterOption = None,
    as_json: JsonOption = False,
) -> None:
    """One self-contained HTML dashboard of the traces and the latest eval runs."""
    from docassist.cli.report import render_report

    runtime = open_checked(as_json)
    traced_collection(collection, runtime.store, as_json)
    try:
        out_path.write_text(render_report(runtime.store, audience, collection),
                            encoding="utf-8")
    except OSError as error:
        raise fail(f"cannot write {out_path}: {error.strerror or error}", as_json) from error
    if as_json:
        emit_json({"out": str(out_path)})
    else:
        out.print(f"wrote {out_path}")


app.command("gaps")(gaps)  # gaps.py
