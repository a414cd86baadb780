"""The `docassist` command. stdout carries results (exactly one JSON document with --json);
progress, notes and errors go to stderr."""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Annotated, TypeVar

import typer
from pydantic import ValidationError
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

from docassist.bot.terminal import ChatSession, render_result
from docassist.bot.terminal.chat import new_thread_key
from docassist.cli_db import db_app
from docassist.cli_output import emit_json, err, fail, out
from docassist.cli_sources import sources_app, start_source_work, sync
from docassist.config import Settings
from docassist.core import i18n
from docassist.core.answer_eval import evaluate_answers, harvest, load_answer_cases
from docassist.core.errors import DocAssistError
from docassist.core.evaluation import (
    DecisionReport,
    compare_runs,
    evaluate_decisions,
    load_cases,
    shadow_report,
)
from docassist.core.messages import ChatMessage, ConversationKey
from docassist.core.results import TurnResult
from docassist.core.retrieval_eval import (
    evaluate_retrieval,
    load_retrieval_cases,
    with_documents_by_path,
)
from docassist.core.turn import TurnEngine
from docassist.doctor import run_checks
from docassist.runtime import (
    Runtime,
    ensure_demo_index,
    index_and_embed,
    interrupted_index,
    keep_warm,
    needs_first_index,
    open_runtime,
    warm_up,
)
from docassist.storage import IndexReport, Store
from docassist.storage.baseline import Bm25sRetriever, bm25s_available
from docassist.storage.exports import (
    RetentionScheduler,
    parse_age,
    parse_time,
    purge_older_than,
    trace_rows,
    write_export,
)

app = typer.Typer(help="DocAssist: answers procedure questions from documents, with citations.",
                  no_args_is_help=True, add_completion=False)
eval_app = typer.Typer(help="Evaluate decisions on labelled cases.", no_args_is_help=True)
app.add_typer(eval_app, name="eval")
traces_app = typer.Typer(help="Export and purge the traces.", no_args_is_help=True)
app.add_typer(traces_app, name="traces")
app.add_typer(sources_app, name="sources")
app.add_typer(db_app, name="db")
app.command("sync")(sync)


JsonOption = Annotated[bool, typer.Option("--json", help="Print exactly one JSON document.")]
RecordOption = Annotated[
    Path | None,
    typer.Option("--record", help="Record every model call into this replay file "
                 "(use it later with DOCASSIST_MODEL=replay:FILE)."),
]


def _is_utf8(value: str) -> bool:
    """False for arguments whose bytes were not UTF-8 (Python keeps them as surrogates)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class _RateColumn(ProgressColumn):
    """Items per second of a task (chunks per second while embedding)."""

    def render(self, task: Task) -> Text:
        return Text(f"{task.speed:.0f}/s" if task.speed else "", style="progress.data.speed")


def _progress() -> Progress:
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    _RateColumn(), TimeRemainingColumn(), console=err, transient=True)


class _IndexProgress:
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


def _print_notes(report: IndexReport | None) -> None:
    for note in report.notes if report is not None else []:
        err.print(f"[yellow]note:[/yellow] {note}")


CaseT = TypeVar("CaseT")


def _read_cases(file: Path, loader: Callable[[list[str]], list[CaseT]], as_json: bool
                ) -> list[CaseT]:
    """Labelled cases from a JSONL file; an unreadable file or bad line is a clear error."""
    try:
        return loader(file.read_text(encoding="utf-8").splitlines())
    except (OSError, ValueError) as error:
        raise fail(f"{file}: {error}", as_json) from error


def _open(as_json: bool = False, *, index_demo: bool = False,
          record: Path | None = None) -> Runtime:
    """The runtime; with `index_demo` (only `chat` and `ask`), the first start indexes the
    demo corpus when no source is configured and the catalog is empty."""
    try:
        settings = Settings()
        runtime = open_runtime(settings, record_path=record)
        if index_demo and needs_first_index(runtime.store):
            started = runtime.store.documents()
            err.print(i18n.text("indexing_resumed" if started else "indexing_empty_catalog",
                                settings.language, path=settings.docs))
            with _progress() as progress:
                bars = _IndexProgress(progress)
                report = ensure_demo_index(runtime, bars.start, bars.file, bars.embedded)
            _print_notes(report)
    except DocAssistError as error:
        raise fail(str(error), as_json) from error
    except ValidationError as error:
        raise fail(f"invalid configuration: {error.errors()[0]['loc']}: "
                    f"{error.errors()[0]['msg']}", as_json) from error
    return runtime


@app.command()
def index(
    paths: Annotated[list[Path], typer.Argument(help="Files or folders (txt, md).")],
    as_json: JsonOption = False,
) -> None:
    """Index documents into the catalog; unreadable files are skipped with a note."""
    runtime = _open(as_json, index_demo=False)
    resumed = interrupted_index(runtime.store)
    if resumed is not None:
        err.print(i18n.text("index_run_resumed", runtime.settings.language,
                            path=", ".join(resumed)))
    try:
        with _progress() as progress:
            bars = _IndexProgress(progress)
            report = index_and_embed(runtime, paths, bars.start, bars.file, bars.embedded)
    except DocAssistError as error:
        raise fail(str(error), as_json) from error
    _print_notes(report)
    if report.embedded:
        err.print(f"embedded {report.embedded} chunks in {report.embed_seconds:.1f} s "
                  f"({report.chunks_per_s:.0f} chunks/s)")
    if as_json:
        emit_json({"indexed": report.indexed, "unchanged": report.unchanged,
                    "removed": report.removed, "pruned_chunks": report.pruned_chunks,
                    "notes": report.notes, "resumed": resumed is not None,
                    "embedded_chunks": report.embedded,
                    "chunks_per_s": round(report.chunks_per_s, 1)})
    else:
        out.print(f"indexed {len(report.indexed)}, unchanged {len(report.unchanged)}, "
                  f"removed {len(report.removed)}: {', '.join(report.indexed)}")
    if not (report.indexed or report.unchanged or report.removed):
        raise typer.Exit(code=1)


@app.command()
def docs(as_json: JsonOption = False) -> None:
    """List the document catalog."""
    runtime = _open(as_json)
    documents = runtime.store.documents()
    if as_json:
        emit_json([document.model_dump() for document in documents])
        return
    table = Table("id", "title", "version", "indexed", "source", "owner", "lang", "updated",
                  "chunks")
    for d in documents:
        table.add_row(d.document_id, d.title, d.version, (d.indexed_at or "")[:16],
                      d.source or "", d.owner or "", d.language or "", d.updated or "",
                      str(d.chunk_count))
    out.print(table)


@app.command()
def ask(
    text: Annotated[str, typer.Argument(help="The message.")],
    thread: Annotated[str | None, typer.Option(help="Continue this thread key.")] = None,
    as_json: JsonOption = False,
    debug: Annotated[bool, typer.Option(help="Show decision and tool status.")] = False,
    record: RecordOption = None,
) -> None:
    """One turn; a new one-turn conversation unless --thread names one."""
    for name, value in (("TEXT", text), ("--thread", thread)):
        if value is not None and not _is_utf8(value):
            raise fail(f"{name} is not valid UTF-8 text", as_json)
    runtime = _open(as_json, index_demo=True, record=record)
    message = ChatMessage(key=new_thread_key(thread), user="terminal", text=text)
    streamed: list[str] = []

    def show(sentence: str) -> None:
        streamed.append(sentence)
        if not as_json:
            out.print(sentence)

    try:
        result = runtime.engine.handle(message, on_partial=show)
    except DocAssistError as error:
        raise fail(str(error), as_json) from error
    assert result is not None  # no event id, so never a duplicate
    if as_json:
        emit_json(result.model_dump(mode="json"))
    else:
        out.print(render_result(result, debug=debug, answer_shown=bool(streamed)))
    if result.status == "storage_unavailable":
        raise typer.Exit(code=1)  # the turn was not recorded: not a handled status


@app.command()
def chat(record: RecordOption = None) -> None:
    """Terminal chat over the indexed documents (one session = one thread)."""
    runtime = _open(index_demo=True, record=record)
    keep_warm(runtime)
    session = ChatSession(runtime.engine, out, runtime.settings.language,
                          feedback_sink=runtime.store.record_feedback)
    try:
        session.run(lambda: out.input("[bold]> [/bold]"))
    except DocAssistError as error:
        raise fail(str(error), False) from error


@app.command()
def slack(
    http: Annotated[bool, typer.Option("--http", help="HTTP mode instead of Socket Mode.")] = False,
    port: Annotated[int, typer.Option(help="HTTP mode port.")] = 3000,
    host: Annotated[str, typer.Option(help="HTTP mode address.")] = "127.0.0.1",
) -> None:
    """Run the Slack app (Socket Mode by default; --http serves POST /slack/events)."""
    from docassist.bot.slack.app import SlackAdapter, SlackConfig
    from docassist.bot.slack.server import make_server
    from docassist.config import SlackSettings

    runtime = _open()
    try:
        slack_settings = SlackSettings()
    except ValidationError as error:
        missing = ", ".join(str(e["loc"][0]) for e in error.errors())
        raise fail(f"Slack configuration incomplete: {missing}", False) from error
    adapter = SlackAdapter(runtime.engine, runtime.store, SlackConfig(
        bot_token=slack_settings.bot_token.get_secret_value(),
        signing_secret=slack_settings.signing_secret.get_secret_value(),
        api_url=slack_settings.api_url, default_language=runtime.settings.language,
        admin_users=frozenset(u.strip() for u in slack_settings.admin_users.split(",")
                              if u.strip()),
        human_channel=runtime.settings.human_channel,
        private_channels=slack_settings.private(),
        per_user_per_minute=runtime.settings.rate_per_user,
        global_per_minute=runtime.settings.rate_global,
        inbox_workers=runtime.settings.turns_in_flight(),
        inbox_lease=runtime.settings.inbox_lease))
    if runtime.settings.trace_retention_days:
        RetentionScheduler(runtime.store, runtime.settings.trace_retention_days).start()
    start_source_work(runtime, "slack", adapter.stale_notes.post)
    warm_up(runtime)  # before the port opens: no event is acked behind a model load
    resumed = adapter.worker.resume()
    if resumed:
        err.print(f"resumed {resumed} unfinished event(s)")
    if http:
        server = make_server(adapter.app, host, port,
                             signing_secret=adapter.config.signing_secret)
        err.print(f"Slack HTTP mode on http://{host}:{server.server_address[1]}/slack/events")
        server.serve_forever()
        return
    if slack_settings.app_token is None:
        raise fail("Socket Mode needs SLACK_APP_TOKEN (or use --http)", False)
    from slack_bolt.adapter.socket_mode import SocketModeHandler

    handler = SocketModeHandler(adapter.app, slack_settings.app_token.get_secret_value())
    handler.start()  # type: ignore[no-untyped-call]


@app.command()
def teams(
    port: Annotated[int, typer.Option(help="Port of POST /api/messages (0 = any free).")] = 3978,
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
) -> None:
    """Run the Teams endpoint: POST /api/messages and GET /healthz."""
    import asyncio

    from docassist.bot.teams.app import TeamsAdapter, TeamsConfig
    from docassist.bot.teams.server import (
        ANONYMOUS_NOISE_LOGGER,
        ANONYMOUS_WARNING,
        TeamsCredentials,
        connections_for,
        make_app,
        serve,
    )
    from docassist.config import TeamsSettings

    try:
        teams_settings = TeamsSettings()
    except ValidationError as error:
        raise fail(f"invalid Teams configuration: {error}", False) from error
    missing = teams_settings.missing_credentials()
    if missing:
        raise fail("Teams configuration incomplete: " + ", ".join(missing) + " (or set "
                    "DOCASSIST_TEAMS_ANONYMOUS=true for local testing)", False)
    runtime = _open()
    credentials = None
    if not teams_settings.anonymous and teams_settings.app_password is not None:
        credentials = TeamsCredentials(teams_settings.app_id, teams_settings.tenant_id,
                                       teams_settings.app_password.get_secret_value())
    connections = connections_for(credentials)
    warm_up(runtime)  # before the port opens: no activity waits behind a model load
    adapter = TeamsAdapter(runtime.engine, runtime.store, TeamsConfig(
        app_id=teams_settings.app_id if credentials else "",
        human_channel=runtime.settings.human_channel,
        teams_human_channel=teams_settings.human_channel,
        default_language=runtime.settings.language, admin_users=teams_settings.admins(),
        per_user_per_minute=runtime.settings.rate_per_user,
        global_per_minute=runtime.settings.rate_global,
        inbox_workers=runtime.settings.turns_in_flight(),
        inbox_lease=runtime.settings.inbox_lease), connections)
    if teams_settings.anonymous:
        logging.getLogger("docassist.teams").warning(ANONYMOUS_WARNING)
        # Without an app id the SDK warns on every request; in anonymous mode that is expected.
        logging.getLogger(ANONYMOUS_NOISE_LOGGER).setLevel(logging.ERROR)
    if runtime.settings.trace_retention_days:
        RetentionScheduler(runtime.store, runtime.settings.trace_retention_days).start()
    start_source_work(runtime, "teams", adapter.stale_notes.post)

    def ready(bound: int) -> None:
        err.print(f"Teams endpoint on http://{host}:{bound}/api/messages")

    async def run() -> None:
        await serve(make_app(adapter, connections), host, port, ready,
                    asyncio.get_running_loop().create_future())

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(run())


@app.command("teams-package")
def teams_package(
    out: Annotated[Path, typer.Option(help="The zip to write.")] = Path("docassist-teams.zip"),
    bot_app_id: Annotated[str | None, typer.Option(
        help="The bot's Entra app id (default: DOCASSIST_TEAMS_APP_ID).")] = None,
    manifest: Annotated[Path | None, typer.Option(help="Manifest template.")] = None,
) -> None:
    """Build the Teams app package to sideload: manifest with ids filled in, plus icons."""
    from docassist.bot.teams.package import build_package
    from docassist.config import TeamsSettings, default_teams_manifest

    app_id = bot_app_id or TeamsSettings().app_id
    if not app_id:
        raise fail("give --bot-app-id or set DOCASSIST_TEAMS_APP_ID", False)
    try:
        build_package(manifest or default_teams_manifest(), out, app_id)
    except (ValueError, OSError) as error:
        raise fail(f"could not build the package: {error}", False) from error
    err.print(f"wrote {out}: upload it in Teams → Apps → Manage your apps → Upload an app")


@app.command()
def doctor(as_json: JsonOption = False) -> None:
    """Which backends answer, with their models and latency; exit 1 if any does not."""
    try:
        settings = Settings()
    except ValidationError as error:
        raise fail(f"invalid configuration: {error}", as_json) from error
    checks = run_checks(settings)
    if as_json:
        emit_json({"ok": all(check.ok for check in checks),
                    "checks": [check.model_dump() for check in checks]})
    else:
        table = Table("role", "backend", "ok", "latency ms", "detail")
        for check in checks:
            table.add_row(check.role, check.spec, "✓" if check.ok else "[red]✗[/red]",
                          f"{check.latency_ms:.0f}" if check.latency_ms is not None else "",
                          check.detail)
        out.print(table)
    if not all(check.ok for check in checks):
        raise typer.Exit(code=1)


@eval_app.command("decisions")
def eval_decisions(
    file: Annotated[Path, typer.Argument(help="JSONL cases (see samples/decisions_dev.jsonl).")],
    as_json: JsonOption = False,
    record: RecordOption = None,
    split: Annotated[str | None, typer.Option(
        help="Only cases of this split (held-out sets: tune, test).")] = None,
) -> None:
    """Accuracy of the configured selector on labelled decision cases."""
    runtime = _open(as_json, record=record)
    cases = [case for case in _read_cases(file, load_cases, as_json)
             if split is None or case.split == split]
    with _progress() as progress:
        task = progress.add_task("evaluating", total=len(cases))
        report = evaluate_decisions(
            cases,
            catalog=runtime.store,
            selector=runtime.engine.selector,
            tool_specs=runtime.engine.registry.specs(),
            default_language=runtime.settings.language,
            on_case=lambda _case: progress.advance(task),
        )
    run_id = runtime.store.save_eval_run("decisions", str(file), report)
    if as_json:
        emit_json({"run_id": run_id, **report.model_dump(mode="json", exclude_none=True)})
        return
    table = Table("id", "expected", "got", "ok")
    for case in report.cases:
        expected = f"{case.expected.status} {case.expected.action or ''}".strip()
        got = f"{case.got.status} {case.got.action or ''}".strip()
        table.add_row(case.id, expected, got, "✓" if case.ok else "[red]✗[/red]")
    out.print(table)
    errors = report.errors
    out.print(f"accuracy {report.accuracy:.1%} ({report.correct}/{report.total}), macro-F1 "
              f"{report.macro_f1:.3f}; unnecessary tool calls {errors.unnecessary_tool_calls}, "
              f"missed clarifications {errors.missed_clarifications}, unnecessary "
              f"clarifications {errors.unnecessary_clarifications}, wrong refusals "
              f"{errors.wrong_refusals}, tool hallucination rate "
              f"{errors.tool_hallucination_rate:.1%}")
    for group, scores in (("language", report.by_language), ("kind", report.by_kind)):
        for name, score in scores.items():
            out.print(f"{group} {name}: {score.accuracy:.1%} ({score.correct}/{score.total}), "
                      f"macro-F1 {score.macro_f1:.3f}")
    out.print(f"backend={report.backend} model={report.model} "
              f"catalog={report.catalog_version} run={run_id}")


@eval_app.command("compare")
def eval_compare(
    run_a: Annotated[str, typer.Argument(help="Earlier run id (see `eval runs`).")],
    run_b: Annotated[str, typer.Argument(help="Later run id.")],
    as_json: JsonOption = False,
) -> None:
    """What changed between two decision runs, case by case."""
    runtime = _open(as_json, index_demo=False)
    reports = []
    for run_id in (run_a, run_b):
        row = runtime.store.eval_run(run_id)
        if row is None or row["kind"] != "decisions":
            raise fail(f"no decisions run {run_id!r} (see `docassist eval runs`)", as_json)
        reports.append(DecisionReport.model_validate_json(row["report"]))
    comparison = compare_runs(run_a, reports[0], run_b, reports[1])
    if as_json:
        emit_json(comparison.model_dump(mode="json"))
        return
    out.print(f"accuracy {comparison.accuracy_a:.1%} → {comparison.accuracy_b:.1%}")
    table = Table("case", "change", "before", "after")
    for label, changes in (("fixed", comparison.fixed), ("broken", comparison.broken),
                           ("changed", comparison.changed)):
        for change in changes:
            table.add_row(change.id, label,
                          f"{change.before.status} {change.before.action or ''}"
                          if change.before else "",
                          f"{change.after.status} {change.after.action or ''}"
                          if change.after else "")
    out.print(table)


@eval_app.command("answers")
def eval_answers(
    file: Annotated[Path, typer.Argument(help="JSONL: id, question, expected_documents "
                                         "([] = should not be answered).")],
    as_json: JsonOption = False,
) -> None:
    """End to end: answered or not as expected, cited documents expected, citations valid."""
    runtime = _open(as_json)
    answer_cases = _read_cases(file, load_answer_cases, as_json)
    scratch = Store(":memory:")  # eval conversations stay out of the real traces
    engine = TurnEngine(store=scratch, catalog=runtime.store, retriever=runtime.engine.retriever,
                        selector=runtime.engine.selector, answerer=runtime.engine.answerer,
                        registry=runtime.engine.registry, options=runtime.engine.options)

    def run_turn(case_id: str, question: str) -> TurnResult:
        key = ConversationKey(platform="eval", workspace="answers", channel="eval",
                              thread=case_id)
        result = engine.handle(ChatMessage(key=key, user="eval", text=question))
        assert result is not None
        return result

    with _progress() as progress:
        task = progress.add_task("answering", total=len(answer_cases))
        report = evaluate_answers(answer_cases, run_turn,
                                  on_case=lambda: progress.advance(task))
    if as_json:
        emit_json(report.model_dump(mode="json"))
        return
    table = Table("id", "status", "expected", "cited", "ok")
    for case in report.cases:
        table.add_row(case.id, case.status, ", ".join(case.expected_documents) or "-",
                      ", ".join(case.cited_documents) or "-",
                      "✓" if case.answered_as_expected and case.cites_expected is not False
                      and case.citations_valid else "[red]✗[/red]")
    out.print(table)
    out.print(f"answered as expected {report.answered_as_expected:.1%}; cites an expected "
              f"document {report.cites_expected:.1%}; cites an expected section "
              f"{report.cites_expected_section:.1%} (of {report.section_cases} answered cases "
              f"with sections); invalid citations {report.invalid_citations}")


@eval_app.command("harvest")
def eval_harvest(
    out_path: Annotated[Path, typer.Option("--out", help="JSONL file of draft cases.")],
    as_json: JsonOption = False,
) -> None:
    """Draft cases from `no_answer` turns (and negative feedback, once collected)."""
    runtime = _open(as_json, index_demo=False)
    negative = {vote["result_id"] for vote in runtime.store.feedback() if vote["value"] < 0}
    drafts, missing_text = harvest(runtime.store.turns(), negative_result_ids=negative)
    try:
        with out_path.open("w", encoding="utf-8") as file:
            for draft in drafts:
                file.write(json.dumps(draft, ensure_ascii=False) + "\n")
    except OSError as error:
        raise fail(f"cannot write {out_path}: {error.strerror or error}", as_json) from error
    if missing_text:
        err.print(f"[yellow]note:[/yellow] text unavailable for {missing_text} of "
                  f"{len(drafts)} draft(s): traces keep hashes unless DOCASSIST_SAVE_RAW=true; "
                  "those drafts carry only ids, statuses and sources")
    if as_json:
        emit_json({"drafts": len(drafts), "text_unavailable": missing_text,
                    "out": str(out_path)})
    else:
        out.print(f"wrote {len(drafts)} draft case(s) to {out_path}")


@eval_app.command("shadow")
def eval_shadow(as_json: JsonOption = False) -> None:
    """Agreement of the shadow selector with the active one, and disagreements by kind."""
    runtime = _open(as_json, index_demo=False)
    report = shadow_report(runtime.store.shadow_decisions())
    if as_json:
        emit_json(report.model_dump(mode="json"))
        return
    out.print(f"{report.total} shadowed turns ({', '.join(report.candidates) or 'none'}); "
              f"agreement {report.agreement:.1%}; candidate errors {report.candidate_errors}")
    table = Table("active -> candidate", "turns")
    for kind, count in report.disagreements.items():
        table.add_row(kind, str(count))
    out.print(table)


@eval_app.command("runs")
def eval_runs(as_json: JsonOption = False) -> None:
    """Stored evaluation runs, oldest first."""
    runtime = _open(as_json, index_demo=False)
    runs = runtime.store.eval_runs()
    if as_json:
        emit_json(runs)
        return
    table = Table("run", "kind", "created", "backend", "model", "catalog", "total", "accuracy")
    for run in runs:
        table.add_row(run["run_id"], run["kind"], run["created_at"], run["backend"],
                      run["model"], run["catalog_version"], str(run["total"]),
                      f"{run['accuracy']:.1%}")
    out.print(table)


@eval_app.command("retrieval")
def eval_retrieval(
    file: Annotated[Path, typer.Argument(help="JSONL cases (see samples/retrieval_dev.jsonl).")],
    root: Annotated[Path | None, typer.Option(
        help="Corpus root that `expected_paths` are relative to (indexed beforehand).")] = None,
    split: Annotated[str | None, typer.Option(
        help="Only cases of this split (e.g. test: the held-out part).")] = None,
    as_json: JsonOption = False,
) -> None:
    """Recall@1/3/5 and MRR of every retriever (and of plain bm25s) on labelled questions."""
    runtime = _open(as_json)
    cases = _read_cases(file, load_retrieval_cases, as_json)
    if split is not None:
        cases = [case for case in cases if case.split == split]
    try:
        cases = with_documents_by_path(cases, _ids_by_path(runtime, root))
    except ValueError as error:
        raise fail(f"{file}: {error}", as_json) from error
    baselines = {"bm25s": Bm25sRetriever(runtime.store)} if bm25s_available() else {}
    if not baselines:
        err.print("bm25s is not installed (pip install -e '.[dev]'): the baseline is left out")
    with _progress() as progress:
        task = progress.add_task("evaluating",
                                 total=len(cases) * (len(runtime.retrievers) + len(baselines)))
        report = evaluate_retrieval(cases, runtime.retrievers, runtime.default_retriever,
                                    on_step=lambda: progress.advance(task), baselines=baselines)
    if as_json:
        emit_json(report.model_dump(mode="json"))
        return
    every = {**report.retrievers, **report.baselines}
    for group, scores_by_name in [("all", every), *report.groups.items()]:
        table = Table("retriever", "recall@1", "recall@3", "recall@5", "MRR", title=group)
        for name, scores in scores_by_name.items():
            label = f"{name} (default)" if name == report.default else name
            table.add_row(label, f"{scores.recall_at_1:.3f}", f"{scores.recall_at_3:.3f}",
                          f"{scores.recall_at_5:.3f}", f"{scores.mrr:.3f}")
        out.print(table)
    misses = [case.id for case in report.cases if case.ranks[report.default] is None]
    out.print(f"{report.total} questions; missed by {report.default}: {', '.join(misses) or '-'}")


def _ids_by_path(runtime: Runtime, root: Path | None) -> dict[str, str]:
    """Catalog ids by path relative to `root` (POSIX separators); none without a root."""
    if root is None:
        return {}
    base = root.resolve()
    ids: dict[str, str] = {}
    for document in runtime.store.documents():
        source = Path(document.source_path)
        if source.is_relative_to(base):
            ids[source.relative_to(base).as_posix()] = document.document_id
    return ids


class TraceFormat(StrEnum):
    jsonl = "jsonl"
    csv = "csv"


@traces_app.command("export")
def traces_export(
    out_path: Annotated[Path, typer.Option("--out", help="File to write.")],
    format_: Annotated[TraceFormat, typer.Option("--format", help="jsonl or csv.")] = (
        TraceFormat.jsonl),
    since: Annotated[str | None, typer.Option(help="ISO date/time, inclusive.")] = None,
    until: Annotated[str | None, typer.Option(help="ISO date/time, exclusive.")] = None,
    conversation: Annotated[str | None, typer.Option(help="A conversation id.")] = None,
    as_json: JsonOption = False,
) -> None:
    """Export turns (with their tool attempts) as JSONL or CSV; columns in README."""
    try:
        start, end = parse_time(since, "--since"), parse_time(until, "--until")
    except ValueError as error:
        raise fail(str(error), as_json) from error
    runtime = _open(as_json, index_demo=False)
    rows = trace_rows(runtime.store, start, end, conversation)
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
    """Erase every stored copy of user text older than the given age (README, Privacy)."""
    try:
        age = parse_age(older_than)
    except ValueError as error:
        raise fail(str(error), as_json) from error
    runtime = _open(as_json, index_demo=False)
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
    as_json: JsonOption = False,
) -> None:
    """One self-contained HTML dashboard of the traces and the latest eval runs."""
    from docassist.report import render_report

    runtime = _open(as_json, index_demo=False)
    try:
        out_path.write_text(render_report(runtime.store), encoding="utf-8")
    except OSError as error:
        raise fail(f"cannot write {out_path}: {error.strerror or error}", as_json) from error
    if as_json:
        emit_json({"out": str(out_path)})
    else:
        out.print(f"wrote {out_path}")


def main() -> None:
    app()

