"""What every command shares: options, progress bars, opening the runtime."""

from __future__ import annotations

import logging
import os
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, TypeVar

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from docassist.cli.output import err, fail, labelled
from docassist.config import FOLDER_DATABASE, Settings, load_settings, user_database
from docassist.core import i18n
from docassist.core.errors import DocAssistError
from docassist.core.ports import NULL_OBSERVER, Observer
from docassist.logs import json_logs
from docassist.runtime import Runtime, ensure_demo_index, needs_first_index, open_runtime
from docassist.storage import IndexReport

logger = logging.getLogger("docassist.cli")

JsonOption = Annotated[bool, typer.Option("--json", help="Print exactly one JSON document.")]
RecordOption = Annotated[
    Path | None,
    typer.Option("--record", help="Record every model call into this replay file "
                 "(use it later with DOCASSIST_MODEL=replay:FILE)."),
]


def is_utf8(value: str) -> bool:
    """False for arguments whose bytes were not UTF-8 (Python keeps them as surrogates)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def printable(path: Path) -> str:
    """A path as people can read it: bytes of its name that are not UTF-8 shown as \\xNN
    (printed as they are, they end in a codec error)."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def require_paths(paths: list[Path], as_json: bool, *, folders: bool = False) -> None:
    """A usage error (exit 2, before anything is opened) naming every path that does not
    exist (or, with `folders`, is no folder), and every path whose name is not UTF-8 text
    (stored or printed, it could only fail)."""
    wrong = [printable(path) for path in paths if not is_utf8(str(path))]
    if wrong:
        raise fail(f"{', '.join(wrong)}: the name is not valid UTF-8 text (rename it)",
                   as_json)
    missing = [str(path) for path in paths if not (path.is_dir() if folders else path.exists())]
    if missing:
        kind = "folder" if folders else "file or folder"
        raise fail(f"no such {kind}: {', '.join(missing)}", as_json)


class _RateColumn(ProgressColumn):
    """Items per second of a task (chunks per second while embedding)."""

    def render(self, task: Task) -> Text:
        return Text(f"{task.speed:.0f}/s" if task.speed else "", style="progress.data.speed")


def progress_bars() -> Progress:
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    _RateColumn(), TimeRemainingColumn(), console=err, transient=True)


class IndexProgress:
    """Callbacks for index_and_embed: a bar for files, then one for chunk embeddings."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.files = progress.add_task("indexing", total=None)
        self.embedding = progress.add_task("embedding", total=None, visible=False)
        self._embedding_started = False

    def start(self, total: int) -> None:
        if not self._embedding_started and self.progress.tasks[0].total is None:
            self.progress.update(self.files, total=total)
        else:
            self.progress.update(self.embedding, total=total, visible=True)
        self._embedding_started = True

    def file(self, path: Path) -> None:
        self.progress.update(self.files, advance=1, description=f"indexing {path.name}")

    def embedded(self, count: int) -> None:
        self.progress.update(self.embedding, advance=count)


def print_notes(report: IndexReport | None) -> None:
    for note in report.notes if report is not None else []:
        err.print(labelled("note:", note))


CaseT = TypeVar("CaseT")


def read_cases(file: Path, loader: Callable[[list[str]], list[CaseT]], as_json: bool
                ) -> list[CaseT]:
    """Labelled cases from a JSONL file; an unreadable file or bad line is a clear error."""
    try:
        return loader(file.read_text(encoding="utf-8").splitlines())
    except (OSError, ValueError) as error:
        raise fail(f"{file}: {error}", as_json) from error


DATABASE_COMPANIONS = ("-wal", "-shm")
"""SQLite's files beside a database that hold part of it until a checkpoint: moved with it."""


def announce_database(settings: Settings) -> None:
    """Say on stderr, when ./docassist.db (the old default) is still in use, where the
    database lives now and how to keep or move the old one. Every run says it until the user
    moves the file or sets DOCASSIST_DB: the folder's database is never dropped silently."""
    if not settings.uses_folder_database():
        return
    target = user_database()
    if target.exists():
        note = i18n.text("database_in_both", settings.language, path=shlex.quote(str(target)))
    else:
        files = [FOLDER_DATABASE.name] + [
            FOLDER_DATABASE.name + suffix for suffix in DATABASE_COMPANIONS
            if FOLDER_DATABASE.with_name(FOLDER_DATABASE.name + suffix).exists()]
        move = f"mkdir -p {shlex.quote(str(target.parent))} && mv {' '.join(files)} " \
               f"{shlex.quote(str(target.parent))}/"
        note = i18n.text("database_in_folder", settings.language, path=shlex.quote(str(target)),
                         move=move)
    if json_logs():  # stderr holds JSON lines only
        logger.warning(note)
    else:
        err.print(Text(note, style="yellow"), soft_wrap=True)  # commands stay copyable


def open_checked(as_json: bool = False, *, index_demo: bool = False,
                 record: Path | None = None, observer: Observer = NULL_OBSERVER,
                 announce: bool = True) -> Runtime:
    """The runtime from the environment; a bad setting is a clear error, not a traceback.
    With `index_demo` (only `chat` and `ask`), the first start indexes the demo corpus when
    no source is configured and the catalog is empty. `announce` says which database is in
    use when it is the working folder's (not in a server's turn processes: the server did)."""
    try:
        settings = load_settings()
        if announce:
            announce_database(settings)
        runtime = open_runtime(settings, record_path=record, observer=observer)
        if index_demo and needs_first_index(runtime.store):
            _first_index(runtime)
    except DocAssistError as error:
        raise fail(str(error), as_json) from error
    return runtime




def _first_index(runtime: Runtime) -> None:
    """The demo corpus on the first start: progress bars, or with JSON logs log lines (stderr
    then holds JSON only)."""
    settings = runtime.settings
    notice = i18n.text("indexing_resumed" if runtime.store.documents()
                       else "indexing_empty_catalog", settings.language, path=settings.docs)
    if json_logs():
        logger.info(notice)
        report = ensure_demo_index(runtime)
        for note in report.notes if report is not None else []:
            logger.warning(note)
        return
    err.print(notice)
    with progress_bars() as progress:
        bars = IndexProgress(progress)
        report = ensure_demo_index(runtime, bars.start, bars.file, bars.embedded)
    print_notes(report)
