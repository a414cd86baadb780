"""Documents and questions: `index`, `docs`, `ask`, `chat`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Final

import typer
from rich.text import Text

from docassist.bot.layout import CitationMarkers, citations_json
from docassist.bot.terminal import ChatSession, render_result
from docassist.bot.terminal.chat import new_thread_key, styled
from docassist.cli.common import (
    IndexProgress,
    JsonOption,
    RecordOption,
    is_utf8,
    open_checked,
    print_notes,
    progress_bars,
    require_paths,
)
from docassist.cli.output import emit_json, err, fail, labelled, out
from docassist.cli.scopes import CollectionsOption, operator_audience
from docassist.cli.tables import Column, fitted_table
from docassist.core import i18n
from docassist.core.documents import DEFAULT_COLLECTION, NO_VERSION, DocumentInfo
from docassist.core.errors import DocAssistError
from docassist.core.messages import ChatMessage
from docassist.core.scopes import COLLECTION_PATTERN
from docassist.runtime import index_and_embed, interrupted_index, keep_warm
from docassist.storage.formats import SUPPORTED_SUFFIXES
from docassist.storage.indexer import catalog_path

app = typer.Typer()
FORMATS = ", ".join(sorted(suffix.lstrip(".") for suffix in SUPPORTED_SUFFIXES))
"""What `index` reads, as its help lists it (storage/formats.py decides)."""
DOCS_COLUMNS = (Column("id", "id"), Column("title", max_width=48), Column("version"),
                Column("collection"), Column("chunks"), Column("path", "optional", 60),
                Column("owner", "optional"),
                Column("updated", "optional"), Column("source", "optional"),
                Column("lang", "optional"), Column("indexed", "optional"))
"""`docs` for people: what is left out at a narrow width is in `docs --json`. The path
is the last optional column to go: a handbook's path ids end in a hash, and people look
a page up by its file."""


def shown_path(source_path: str) -> str:
    """A file's path as people type it here: relative to this folder when under it, `~/…`
    under the home folder (the catalog keeps it absolute; `docs --json` shows it so)."""
    path = Path(source_path)
    if not path.is_absolute():
        return source_path  # a source's own reference (a page id, a URL path)
    for base, prefix in ((Path.cwd(), ""), (Path.home(), "~/")):
        if path.is_relative_to(base):
            return prefix + str(path.relative_to(base))
    return source_path


@app.command()
def index(
    paths: Annotated[list[Path], typer.Argument(help=f"Files or folders ({FORMATS}).")],
    collection: Annotated[str | None, typer.Option(
        "--collection", help="Collection of these documents (who may search them: "
        "`docassist scopes`); documents in another one move here. Left out: each document "
        f"keeps its collection, new ones take their folder's ({DEFAULT_COLLECTION} "
        "for a new folder).")] = None,
    as_json: JsonOption = False,
) -> None:
    """Index documents into the catalog; unreadable files are skipped with a note. A folder
    is read inside its own root: links leading out of it are skipped and named."""
    if collection is not None and not COLLECTION_PATTERN.match(collection):
        raise fail(f"invalid collection name {collection!r} (use lower-case letters, digits, "
                   "- and _; at most 63)", as_json)
    require_paths(paths, as_json)
    runtime = open_checked(as_json)
    resumed = interrupted_index(runtime.store)
    if resumed is not None:
        err.print(i18n.text("index_run_resumed", runtime.settings.language,
                            path=", ".join(resumed)))
    try:
        with progress_bars() as progress:
            bars = IndexProgress(progress)
            report = index_and_embed(runtime, paths, bars.start, bars.file, bars.embedded,
                                     collection=collection)
    except DocAssistError as error:
        raise fail(str(error), as_json) from error
    print_notes(report)
    demo = demo_documents(runtime.store.documents(), runtime.settings.docs, paths)
    if demo:
        err.print(labelled("note:", i18n.text(
            "index_demo_kept", runtime.settings.language, count=len(demo),
            folder=runtime.settings.docs, ids=" ".join(demo))), soft_wrap=True)
    if report.embedded:
        err.print(f"embedded {report.embedded} chunks in {report.embed_seconds:.1f} s "
                  f"({report.chunks_per_s:.0f} chunks/s)")
    if as_json:
        emit_json({"indexed": report.indexed, "unchanged": report.unchanged,
                    "removed": report.removed, "pruned_chunks": report.pruned_chunks,
                    "moved": [{"document_id": m.document_id, "from": m.from_collection,
                               "to": m.to_collection} for m in report.moved],
                    "notes": report.notes, "resumed": resumed is not None,
                    "embedded_chunks": report.embedded,
                    "chunks_per_s": round(report.chunks_per_s, 1)})
    else:
        out.print(f"indexed {len(report.indexed)}, unchanged {len(report.unchanged)}, "
                  f"removed {len(report.removed)}" + _named(report.indexed), soft_wrap=True)
        for move in report.moved:
            out.print(f"moved {move.document_id} from collection {move.from_collection} to "
                      f"{move.to_collection}")
    if not (report.indexed or report.unchanged or report.removed):
        raise typer.Exit(code=1)


LISTED_IDS: Final = 10
"""Ids `index` names after its counts; past them, how many more (175 ids made one 12 KB
line). `--json` and `docs` list them all."""


def _named(ids: list[str]) -> str:
    if not ids:
        return ""
    more = f" and {len(ids) - LISTED_IDS} more (`docassist docs` lists them)" if len(
        ids) > LISTED_IDS else ""
    return f": {', '.join(ids[:LISTED_IDS])}{more}"


def demo_documents(documents: list[DocumentInfo], demo: Path, indexed: list[Path]) -> list[str]:
    """Ids of the demo corpus's documents in the catalog, when what was just indexed is not
    the demo itself: the first `chat` indexes it into the user's own database."""
    folder = catalog_path(demo)
    if any(catalog_path(path).is_relative_to(folder) for path in indexed):
        return []
    return [document.document_id for document in documents
            if Path(document.source_path).is_relative_to(folder)]


@app.command()
def remove(
    document_ids: Annotated[list[str] | None, typer.Argument(
        help="Ids of the documents to remove (as `docs` lists them).")] = None,
    collection: Annotated[str | None, typer.Option(
        "--collection", help="Remove every document of this collection.")] = None,
    as_json: JsonOption = False,
) -> None:
    """Take documents out of the catalog.

    They are no longer searched, answered from or listed; traces keep the passages they
    cited. A folder indexed again, or a source's next sync, brings its documents back."""
    if not document_ids and collection is None:
        raise fail("name the documents to remove, or --collection NAME", as_json)
    runtime = open_checked(as_json)
    catalog = {document.document_id: document for document in runtime.store.documents()}
    unknown = [value for value in document_ids or [] if value not in catalog]
    if unknown:
        raise fail(f"no such document: {', '.join(unknown)} (nothing removed)", as_json)
    chosen = list(dict.fromkeys(document_ids or []))
    if collection is not None:
        members = [key for key, document in catalog.items() if document.collection == collection]
        if not members:
            known = sorted({document.collection for document in catalog.values()})
            raise fail(f"no document is in collection {collection!r} (nothing removed); "
                       f"collections: {', '.join(known) or '-'}", as_json)
        chosen += [key for key in members if key not in chosen]
    for document_id in chosen:
        runtime.store.remove_document(document_id)
    if as_json:
        emit_json({"removed": chosen})
    else:
        out.print(f"removed {len(chosen)}: {', '.join(chosen)}")


@app.command()
def docs(as_json: JsonOption = False) -> None:
    """List the document catalog."""
    runtime = open_checked(as_json)
    documents = runtime.store.documents()
    if as_json:
        emit_json([document.model_dump() for document in documents])
        return
    if not documents:
        out.print(i18n.text("catalog_empty", runtime.settings.language))
        return
    rows = [[d.document_id, d.title, d.own_version or NO_VERSION, d.collection,
             str(d.chunk_count), shown_path(d.source_path), d.owner or "", d.updated or "",
             d.source or "", d.language or "", (d.indexed_at or "")[:16]] for d in documents]
    out.print(fitted_table(out, DOCS_COLUMNS, rows), crop=False)


@app.command()
def ask(
    text: Annotated[str, typer.Argument(help="The message.")],
    thread: Annotated[str | None, typer.Option(help="Continue this thread key.")] = None,
    as_json: JsonOption = False,
    debug: Annotated[bool, typer.Option(help="Show decision and tool status.")] = False,
    record: RecordOption = None,
    collections: CollectionsOption = None,
) -> None:
    """One turn; a new one-turn conversation unless --thread names one."""
    for name, value in (("TEXT", text), ("--thread", thread)):
        if value is not None and not is_utf8(value):
            raise fail(f"{name} is not valid UTF-8 text", as_json)
    runtime = open_checked(as_json, index_demo=True, record=record)
    audience = operator_audience(collections, runtime.store, as_json)
    message = ChatMessage(key=new_thread_key(thread), user="terminal", text=text,
                          audience=audience)
    streamed: list[str] = []
    markers = CitationMarkers()

    def show(sentence: str) -> None:
        streamed.append(sentence)
        if not as_json:
            out.print(styled(markers.apply(sentence)))

    try:
        result = runtime.engine.handle(message, on_partial=show)
    except DocAssistError as error:
        raise fail(str(error), as_json) from error
    assert result is not None  # no event id, so never a duplicate
    if as_json:
        emit_json({**result.model_dump(mode="json"), "citations": citations_json(result)})
    else:
        out.print(render_result(result, debug=debug, answer_shown=bool(streamed)))
    if result.status == "storage_unavailable":
        raise typer.Exit(code=1)  # the turn was not recorded: not a handled status


@app.command()
def chat(record: RecordOption = None, collections: CollectionsOption = None) -> None:
    """Terminal chat over the indexed documents (one session = one thread)."""
    runtime = open_checked(index_demo=True, record=record)
    audience = operator_audience(collections, runtime.store, False)
    keep_warm(runtime)
    session = ChatSession(runtime.engine, out, runtime.settings.language,
                          feedback_sink=runtime.store.record_feedback, audience=audience)
    try:
        session.run(lambda: out.input(Text("> ", style="bold")))
    except DocAssistError as error:
        raise fail(str(error), False) from error


