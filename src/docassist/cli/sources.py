"""`docassist sources`, `sources add KIND` and `sync`: configured document sources.

None of them indexes the demo corpus (first-start indexing belongs to `chat` and `ask`).
stdout carries results (exactly one JSON document with --json); progress goes to stderr.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError
from rich.progress import Progress, SpinnerColumn, TextColumn

from docassist.cli.common import open_checked, require_paths
from docassist.cli.output import emit_json, err, fail, labelled, out
from docassist.cli.tables import Column, fitted_table
from docassist.core.documents import DEFAULT_COLLECTION
from docassist.core.errors import DocAssistError
from docassist.core.sources import ConfluenceDeployment, Source, SourceStatus, SyncOutcome
from docassist.runtime import sync_and_embed

sources_app = typer.Typer(help="Document sources (folders, web sites, Confluence, SharePoint) "
                          "and their sync state.",
                          invoke_without_command=True)
add_app = typer.Typer(help="Configure a new source (then run `docassist sync`).",
                      no_args_is_help=True)
sources_app.add_typer(add_app, name="add")


JsonOption = Annotated[bool, typer.Option("--json", help="Print exactly one JSON document.")]
CollectionOption = Annotated[str, typer.Option("--collection",
                                               help="Collection of its documents.")]


SOURCE_COLUMNS = (Column("name", "id"), Column("kind"), Column("collection"),
                  Column("documents"), Column("last success"), Column("last error", max_width=48),
                  Column("next run", "optional"))




def status_json(status: SourceStatus) -> dict[str, Any]:
    return {"name": status.name, "kind": str(status.kind), "collection": status.collection,
            "documents": status.documents, "last_success": status.last_success,
            "last_error": status.last_error, "next_run": status.next_run,
            "last_run": status.last_run, "last_started": status.last_started}


@sources_app.callback()
def sources(ctx: typer.Context, as_json: JsonOption = False) -> None:
    """Every source with its documents, last success, last error and next run."""
    if ctx.invoked_subcommand is not None:
        return
    statuses = open_checked(as_json).store.source_statuses()
    if as_json:
        emit_json({"sources": [status_json(status) for status in statuses]})
        return
    rows = [[s.name, str(s.kind), s.collection, str(s.documents), s.last_success or "never",
             s.last_error or "", s.next_run or ""] for s in statuses]
    out.print(fitted_table(out, SOURCE_COLUMNS, rows) if statuses
              else "no sources: add one with `docassist sources add`", crop=False)


def _add(source_values: dict[str, Any], as_json: bool) -> None:
    try:
        source = Source.model_validate(source_values)
        source.check_settings()
    except ValidationError as error:
        first = error.errors()[0]
        raise fail(f"invalid source: {'.'.join(map(str, first['loc']))}: {first['msg']}",
                    as_json) from error
    runtime = open_checked(as_json)
    try:
        runtime.store.add_source(source)
    except DocAssistError as error:
        raise fail(str(error), as_json) from error
    if as_json:
        emit_json({"source": source.model_dump(mode="json")})
    else:
        out.print(f"added {source.kind} source {source.name}; run `docassist sync "
                  f"{source.name}`")


@add_app.command("web")
def add_web(
    name: Annotated[str, typer.Argument(help="Source name (lower case, digits, - and _).")],
    url: Annotated[str, typer.Option("--url", help="A sitemap (…/sitemap.xml) or a start "
                                     "page whose same-site links are followed.")],
    collection: CollectionOption = DEFAULT_COLLECTION,
    auth_env: Annotated[str | None, typer.Option(
        "--auth-env", help="Environment variable holding an Authorization header value "
        "(its name is stored, never the value; sent to the URL's own origin only).")] = None,
    allow_host: Annotated[list[str] | None, typer.Option(
        "--allow-host", help="Another host (host or host:port) the sync may fetch from, "
        "e.g. where the site redirects; repeat for more. No credentials go there.")] = None,
    as_json: JsonOption = False,
) -> None:
    """A web site, by sitemap or start page. Only the URL's origin (scheme, host, port) is
    fetched, plus an upgrade to https and the hosts named with --allow-host."""
    settings: dict[str, Any] = {"url": url, **({"auth_env": auth_env} if auth_env else {})}
    if allow_host:
        settings["allow_hosts"] = allow_host
    _add({"name": name, "kind": "web", "collection": collection, "settings": settings},
         as_json)


@add_app.command("folder")
def add_folder(
    name: Annotated[str, typer.Argument(help="Source name (lower case, digits, - and _).")],
    path: Annotated[Path, typer.Option("--path", help="The folder to index.")],
    collection: CollectionOption = DEFAULT_COLLECTION,
    as_json: JsonOption = False,
) -> None:
    """A folder on this machine (what `docassist index PATH` indexes)."""
    require_paths([path], as_json, folders=True)
    _add({"name": name, "kind": "folder", "collection": collection,
          "settings": {"path": str(path.resolve())}}, as_json)


@add_app.command("confluence")
def add_confluence(
    name: Annotated[str, typer.Argument(help="Source name (lower case, digits, - and _).")],
    url: Annotated[str, typer.Option("--url", help="The site's base URL (Cloud: "
                                     "https://SITE.atlassian.net/wiki).")],
    space: Annotated[list[str], typer.Option("--space", help="A space key; repeat for more.")],
    collection: CollectionOption = DEFAULT_COLLECTION,
    deployment: Annotated[ConfluenceDeployment | None, typer.Option(
        "--deployment", help="cloud or datacenter (default: cloud for *.atlassian.net)."
    )] = None,
    as_json: JsonOption = False,
) -> None:
    """Confluence spaces (Cloud or Data Center); credentials from DOCASSIST_CONFLUENCE_*."""
    settings: dict[str, Any] = {"url": url, "spaces": space}
    if deployment is not None:
        settings["deployment"] = str(deployment)
    _add({"name": name, "kind": "confluence", "collection": collection, "settings": settings},
         as_json)


@add_app.command("sharepoint")
def add_sharepoint(
    name: Annotated[str, typer.Argument(help="Source name (lower case, digits, - and _).")],
    site: Annotated[str, typer.Option("--site", help="Site URL (https://TENANT.sharepoint.com/"
                                      "sites/NAME), HOST:/sites/NAME or a site id.")],
    drive: Annotated[str | None, typer.Option(
        "--drive", help="Document library name or drive id (default: the site's library)."
    )] = None,
    collection: CollectionOption = DEFAULT_COLLECTION,
    as_json: JsonOption = False,
) -> None:
    """A SharePoint document library or OneDrive via Microsoft Graph (app-only, from
    DOCASSIST_GRAPH_*)."""
    settings = {"site": site, **({"drive": drive} if drive else {})}
    _add({"name": name, "kind": "sharepoint", "collection": collection, "settings": settings},
         as_json)


def sync(
    name: Annotated[str | None, typer.Argument(help="One source; all when left out.")] = None,
    as_json: JsonOption = False,
) -> None:
    """Sync sources once (incremental); exit 1 when any source failed, and says which."""
    runtime = open_checked(as_json)
    progress = Progress(SpinnerColumn(), TextColumn("{task.description}"),
                        TextColumn("{task.completed} item(s)"), console=err, transient=True)
    try:
        with progress:
            task = progress.add_task("syncing", total=None)

            def advance(item: str) -> None:
                progress.update(task, advance=1, description=f"syncing {item[-60:]}")

            outcomes = sync_and_embed(runtime, name, on_item=advance)
    except DocAssistError as error:
        raise fail(str(error), as_json) from error
    _report(outcomes, as_json)
    if any(not outcome.ok for outcome in outcomes):
        raise typer.Exit(code=1)


def _report(outcomes: list[SyncOutcome], as_json: bool) -> None:
    for outcome in outcomes:
        for note in outcome.notes:
            err.print(labelled("note:", f"{outcome.name}: {note}"))
        if outcome.error:
            err.print(labelled("failed:", f"{outcome.name}: {outcome.error}", "red"))
    if as_json:
        emit_json({"sources": [outcome.as_json() for outcome in outcomes]})
        return
    for o in outcomes:
        counts = ", ".join(f"{key} {value}" for key, value in o.counts().items())
        skipped = f", skipped {len(o.skipped)} (see the notes)" if o.skipped else ""
        out.print(f"{o.name} ({o.kind}): {counts}{skipped}" + (" — FAILED" if o.error else ""))
    if not outcomes:
        out.print("no sources: add one with `docassist sources add`")

