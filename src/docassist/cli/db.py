"""`docassist db migrate` and `docassist db copy --to URL`: the database itself.

stdout carries results (exactly one JSON document with --json); progress goes to stderr.
"""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from docassist.cli.common import announce_database
from docassist.cli.output import emit_json, err, fail, out
from docassist.config import Settings, load_settings
from docassist.core.errors import DocAssistError
from docassist.storage.backends import SQLITE, backend_of, migrate_database, shown
from docassist.storage.database import Store
from docassist.storage.postgres import PostgresStore
from docassist.storage.postgres.copy import copy_sqlite_to_postgres

db_app = typer.Typer(help="The database: migrate its schema, copy it to PostgreSQL.",
                     no_args_is_help=True)

JsonOption = Annotated[bool, typer.Option("--json", help="Print exactly one JSON document.")]


def _settings(as_json: bool) -> Settings:
    try:
        settings = load_settings()
    except DocAssistError as error:
        raise fail(str(error), as_json) from error
    announce_database(settings)
    return settings


@db_app.command("migrate")
def migrate(as_json: JsonOption = False) -> None:
    """Apply the schema migrations DOCASSIST_DB lacks (opening it does too; with several
    replicas on PostgreSQL, one waits for the other)."""
    settings = _settings(as_json)
    try:
        report = migrate_database(settings.db)
    except DocAssistError as error:
        raise fail(str(error), as_json) from error
    if as_json:
        emit_json(report.model_dump())
        return
    done = ", ".join(report.applied) if report.applied else "none (the schema is current)"
    out.print(f"{report.backend} {report.database}: applied {done}; "
              f"{report.known} migrations known")


@db_app.command("copy")
def copy(
    to: Annotated[str, typer.Option("--to", help="The PostgreSQL database to copy into: "
                                    "postgresql://USER@HOST:PORT/DB")],
    as_json: JsonOption = False,
) -> None:
    """Copy the SQLite database DOCASSIST_DB names into PostgreSQL, everything: catalog,
    chunks, vectors, conversations, traces, feedback, eval runs, sources, inbox. Rows already
    there are skipped, so running it again duplicates nothing."""
    settings = _settings(as_json)
    try:
        if backend_of(settings.db) != SQLITE:
            raise fail(f"DOCASSIST_DB must name the SQLite file to copy from, not "
                       f"{shown(settings.db)}", as_json)
        if backend_of(to) != "postgresql":
            raise fail(f"--to must be a postgresql:// URL, not {shown(to)}", as_json)
        source = Store(settings.db)
        try:
            target = PostgresStore(to)
            try:
                report = copy_sqlite_to_postgres(
                    source, target, on_kind=lambda kind: err.print(f"copying {kind}…"))
            finally:
                target.close()
        finally:
            source.close()
    except DocAssistError as error:
        raise fail(str(error), as_json) from error
    if as_json:
        emit_json(report.model_dump())
        return
    table = Table("kind", "in SQLite", "copied", "already there")
    for kind, count in report.kinds.items():
        table.add_row(kind, str(count.source), str(count.copied), str(count.already_there))
    out.print(table)
    out.print(f"copied {report.source} → {report.target}")
