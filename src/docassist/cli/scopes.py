"""`docassist scopes …` (who may search which collections) and the `--collections` option
of `ask`, `chat` and `eval answers` (the operator searches every collection unless narrowed).

The grammar is core.scope_commands', shared with the admin chat commands. A change made here
is logged with the operator's login name as `cli:NAME`.
"""

from __future__ import annotations

import getpass
from collections.abc import Iterable
from typing import Annotated

import typer

from docassist.cli.common import announce_database
from docassist.cli.output import emit_json, fail, out
from docassist.config import load_settings
from docassist.core.documents import DEFAULT_COLLECTION
from docassist.core.errors import DocAssistError
from docassist.core.scope_commands import run_scope_command
from docassist.core.scopes import OPERATOR, Audience
from docassist.storage.backends import open_store
from docassist.storage.exports import traced_collections
from docassist.storage.roles import Storage

scopes_app = typer.Typer(
    help="Which collections each Slack/Teams channel, user and group may search "
    "(unmapped: `default`), and which are shareable with externally shared channels.",
    invoke_without_command=True)

JsonOption = Annotated[bool, typer.Option("--json", help="Print exactly one JSON document.")]
CollectionsOption = Annotated[list[str] | None, typer.Option(
    "--collections", "--collection", help="Search only these collections (repeat it, or "
    "separate names by commas; `--collection`, as `index` spells it, works too); default: "
    "every collection.")]
AudienceOption = Annotated[str | None, typer.Option(
    "--audience", help="Only turns of this audience: operator, private, channel, shared, "
    "or more precise (channel:slack, channel:slack:C0123, private:teams).")]
CollectionFilterOption = Annotated[str | None, typer.Option(
    "--collection", help="Only turns that searched this collection.")]
SubjectArgument = Annotated[str, typer.Argument(
    help="slack:CHANNEL_ID, teams:CONVERSATION_ID, user:PLATFORM:USER_ID or "
    "group:PLATFORM:GROUP_ID")]
NamesArgument = Annotated[list[str], typer.Argument(help="Collection names.")]


def _operator() -> str:
    try:
        return f"cli:{getpass.getuser()}"
    except (KeyError, OSError):  # no login name (a container without a passwd entry)
        return "cli"


def _run(words: list[str], as_json: bool) -> None:
    try:
        settings = load_settings()
        announce_database(settings)
        store = open_store(settings.db)
    except DocAssistError as error:
        raise fail(str(error), as_json) from error
    try:
        result = run_scope_command(words, _operator(), store, settings.language)
    finally:
        store.close()
    if not result.ok:
        raise fail(result.text, as_json)
    if as_json:
        emit_json(result.listing)
    else:
        out.print(result.text, markup=False)


@scopes_app.callback()
def scopes(ctx: typer.Context, as_json: JsonOption = False) -> None:
    """List the mappings and shareable collections."""
    if ctx.invoked_subcommand is None:
        _run([], as_json)


@scopes_app.command("set")
def scopes_set(subject: SubjectArgument, names: NamesArgument,
               as_json: JsonOption = False) -> None:
    """Map a channel, user or group to collections (replacing its mapping)."""
    _run(["set", subject, *names], as_json)


@scopes_app.command("clear")
def scopes_clear(subject: SubjectArgument, as_json: JsonOption = False) -> None:
    """Remove a mapping: the channel or user searches `default` again."""
    _run(["clear", subject], as_json)


@scopes_app.command("share")
def scopes_share(names: NamesArgument, as_json: JsonOption = False) -> None:
    """Let externally shared channels be answered from these collections."""
    _run(["share", *names], as_json)


@scopes_app.command("unshare")
def scopes_unshare(names: NamesArgument, as_json: JsonOption = False) -> None:
    """Take collections back from externally shared channels."""
    _run(["unshare", *names], as_json)


def operator_audience(collections: list[str] | None, store: Storage,
                      as_json: bool) -> Audience:
    """The CLI's audience: every collection, or the named ones (each must exist)."""
    if not collections:
        return OPERATOR
    names = [name.strip() for value in collections for name in value.split(",")
             if name.strip()]
    require_known(names, store.collection_names(), named_collections(store), as_json)
    return OPERATOR.model_copy(update={"collections": tuple(dict.fromkeys(names))})


def named_collections(store: Storage) -> set[str]:
    """The collections an error names as known. `default` always exists (unmapped channels
    search it) but is named only when it holds documents: a handbook indexed into its own
    collection left an empty `default` in the list."""
    names = set(store.collection_names())
    if DEFAULT_COLLECTION not in set(store.chunk_collections().values()):
        names.discard(DEFAULT_COLLECTION)
    return names


def require_known(names: list[str], known: Iterable[str], named: Iterable[str],
                  as_json: bool) -> None:
    """A usage error (exit 2) naming every collection not in `known`, and the `named` ones: a
    misspelt name would otherwise select nothing and look like an answer."""
    unknown = [name for name in names if name not in set(known)]
    if unknown:
        listed = ", ".join(sorted(set(named))) or "none yet"
        raise fail(f"unknown collection: {', '.join(unknown)} (known: {listed})", as_json)


def traced_collection(collection: str | None, store: Storage, as_json: bool) -> None:
    """`--collection` of `traces export` and `report`: one the catalog knows, or one a
    recorded turn searched (its traces outlive its documents)."""
    if collection is not None:
        traced = traced_collections(store)
        require_known([collection], {*store.collection_names(), *traced},
                      {*named_collections(store), *traced}, as_json)
