"""The `docassist` command. It parses arguments; what runs lives elsewhere (runtime.py,
server.py, the platform packages). stdout carries results (exactly one JSON document with
--json); progress, notes and errors go to stderr.

    common.py     options, progress bars, opening the runtime
    documents.py  index, docs, ask, chat
    servers.py    serve, slack, teams, teams-package
    evals.py      eval decisions|compare|answers|harvest|shadow|runs|retrieval|canary
    admin.py      doctor, traces export|purge, report, gaps
    (sources and sync: sources.py; scopes: scopes.py; db migrate|copy:
    db.py; gaps and eval canary: gaps.py; output streams: output.py)
"""

from __future__ import annotations

from typing import Annotated

import typer

from docassist import __version__
from docassist.cli import admin, documents, evals, servers
from docassist.cli.db import db_app
from docassist.cli.output import err, out
from docassist.cli.scopes import scopes_app
from docassist.cli.sources import sources_app, sync
from docassist.logs import LogLevelError, configure_logging

app = typer.Typer(help="DocAssist: answers procedure questions from documents, with citations.",
                  no_args_is_help=True, add_completion=False)
app.add_typer(documents.app)
app.add_typer(servers.app)
app.add_typer(admin.app)
app.add_typer(evals.eval_app, name="eval")
app.add_typer(admin.traces_app, name="traces")
app.add_typer(sources_app, name="sources")
app.add_typer(scopes_app, name="scopes")
app.add_typer(db_app, name="db")
syncing = typer.Typer()
syncing.command("sync")(sync)
app.add_typer(syncing)  # listed with the other commands, not before them


def _print_version(wanted: bool) -> None:
    if wanted:
        out.print(f"docassist {__version__}")
        raise typer.Exit()


@app.callback()
def _options(version: Annotated[bool, typer.Option(
        "--version", callback=_print_version, is_eager=True,
        help="Print the version and exit.")] = False) -> None:
    """DocAssist: answers procedure questions from documents, with citations."""


def main() -> None:
    try:
        configure_logging()
    except LogLevelError as error:  # before anything runs: nothing is opened or started
        err.print(f"error: {error}")
        raise SystemExit(2) from error
    app()
