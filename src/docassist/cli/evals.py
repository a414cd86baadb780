"""`docassist eval …`: decisions, answers and retrieval on labelled cases, stored runs."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Final, Protocol

import typer
from rich.table import Table
from rich.text import Text

from docassist.cli.common import (
    JsonOption,
    RecordOption,
    open_checked,
    progress_bars,
    read_cases,
    require_paths,
)
from docassist.cli.gaps import eval_canary
from docassist.cli.output import emit_json, err, fail, labelled, out
from docassist.cli.scopes import CollectionsOption, operator_audience
from docassist.cli.tables import Column, fitted_table
from docassist.core import i18n
from docassist.core.scoping import scoped
from docassist.evaluation.answers import (
    AnswerChange,
    AnswerReport,
    AnswerRunComparison,
    compare_answer_runs,
    evaluate_answers,
    harvest,
    load_answer_cases,
)
from docassist.evaluation.answers import with_documents_by_path as with_paths_as_ids
from docassist.evaluation.baseline import Bm25sRetriever, bm25s_available
from docassist.evaluation.canary import scratch_turns
from docassist.evaluation.decisions import (
    CaseChange,
    DecisionReport,
    RunComparison,
    compare_runs,
    evaluate_decisions,
    load_cases,
    shadow_report,
)
from docassist.evaluation.pages import DECISIONS_PAGE_HEADER, measured_on, write_block
from docassist.evaluation.retrieval import (
    RetrievalReport,
    evaluate_retrieval,
    load_retrieval_cases,
    measured,
    with_documents_by_path,
)
from docassist.runtime import Runtime

SetOption = Annotated[str | None, typer.Option(
    "--set", help="Only cases of this set (a held-out file holds several collections).")]
PageOption = Annotated[Path | None, typer.Option(
    help="Also write the figures into this documentation page (docs/evaluation.md), "
    "replacing this file's, set's and split's block.")]

eval_app = typer.Typer(help="Measure DocAssist on labelled cases (decisions, answers, "
                       "retrieval), compare and list runs, shadow, canary, harvest cases.",
                       no_args_is_help=True)


def runtime_with_documents(as_json: bool, record: Path | None = None) -> Runtime:
    """The runtime, refused (exit 2, nothing run or saved) while its catalog is empty: every
    case would be scored against nothing, and the figures would look like the product's."""
    runtime = open_checked(as_json, record=record)
    if not runtime.store.documents():
        raise fail(i18n.text("eval_catalog_empty", runtime.settings.language), as_json)
    return runtime


@eval_app.command("decisions")
def eval_decisions(
    file: Annotated[Path, typer.Argument(help="JSONL cases (see samples/decisions_dev.jsonl).")],
    as_json: JsonOption = False,
    record: RecordOption = None,
    split: Annotated[str | None, typer.Option(
        help="Only cases of this split (held-out sets: tune, test).")] = None,
    page: Annotated[Path | None, typer.Option(
        help="Also write the figures into this documentation page "
        "(docs/selector-evaluation.md), replacing this file's and split's block.")] = None,
) -> None:
    """Accuracy of the configured selector on labelled decision cases."""
    require_paths([file], as_json)
    runtime = runtime_with_documents(as_json, record)
    cases = [case for case in read_cases(file, load_cases, as_json)
             if split is None or case.split == split]
    with progress_bars() as progress:
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
    if page is not None:
        write_block(page, _block_key("decisions", file, None, split),
                    decisions_markdown(report, measured_on(file, page), split),
                    header=DECISIONS_PAGE_HEADER)
    if as_json:
        emit_json({"run_id": run_id, **report.model_dump(mode="json", exclude_none=True)})
        return
    table = Table("id", "expected", "got", "ok")
    for case in report.cases:
        expected = f"{case.expected.status} {case.expected.action or ''}".strip()
        got = f"{case.got.status} {case.got.action or ''}".strip()
        table.add_row(case.id, expected, got, "✓" if case.ok else Text("✗", style="red"))
    out.print(table)
    errors = report.errors
    out.print(f"accuracy {report.accuracy:.1%} ({report.correct}/{report.total}), macro-F1 "
              f"{report.macro_f1:.3f}; unnecessary tool calls {errors.unnecessary_tool_calls}, "
              f"missed clarifications {errors.missed_clarifications}, unnecessary "
              f"clarifications {errors.unnecessary_clarifications}, wrong refusals "
              f"{errors.wrong_refusals}, tool hallucination rate "
              f"{errors.tool_hallucination_rate:.1%}")
    for label, decision in report.by_decision.items():
        out.print(f"decision {label}: precision {decision.precision:.3f}, recall "
                  f"{decision.recall:.3f}, F1 {decision.f1:.3f} ({decision.correct} of "
                  f"{decision.total} expected, {decision.predicted} made)")
    for group, scores in (("language", report.by_language), ("kind", report.by_kind)):
        for name, score in scores.items():
            out.print(f"{group} {name}: {score.accuracy:.1%} ({score.correct}/{score.total}), "
                      f"macro-F1 {score.macro_f1:.3f}")
    out.print(f"backend={report.backend} model={report.model} "
              f"catalog={report.catalog_version} run={run_id}")


@eval_app.command("compare")
def eval_compare(
    run_a: Annotated[str, typer.Argument(help="Earlier run id (see `eval runs`).")],
    run_b: Annotated[str, typer.Argument(help="Later run id, of the same kind.")],
    as_json: JsonOption = False,
) -> None:
    """What changed between two decision runs, or two answer runs, case by case."""
    runtime = open_checked(as_json)
    rows = []
    for run_id in (run_a, run_b):
        row = runtime.store.eval_run(run_id)
        if row is None or row["kind"] not in COMPARED_KINDS:
            raise fail(f"no decisions or answers run {run_id!r} (see `docassist eval runs`)",
                       as_json)
        rows.append(row)
    if rows[0]["kind"] != rows[1]["kind"]:
        raise fail(f"{run_a!r} is from `eval {rows[0]['kind']}` and {run_b!r} from `eval "
                   f"{rows[1]['kind']}`: compare two runs of one kind", as_json)
    comparison = _compared(rows[0]["kind"], run_a, rows[0]["report"], run_b, rows[1]["report"])
    if as_json:
        emit_json(comparison.model_dump(mode="json"))
        return
    out.print(f"accuracy {comparison.accuracy_a:.1%} → {comparison.accuracy_b:.1%}")
    table = Table("case", "change", "before", "after")
    for label, changes in (("fixed", comparison.fixed), ("broken", comparison.broken),
                           ("changed", comparison.changed)):
        for change in changes:
            before, after = _shown_change(change)
            table.add_row(change.id, label, before, after)
    out.print(table)


COMPARED_KINDS: Final = ("decisions", "answers")


def _compared(kind: str, run_a: str, report_a: str, run_b: str, report_b: str
              ) -> RunComparison | AnswerRunComparison:
    if kind == "answers":
        return compare_answer_runs(run_a, AnswerReport.model_validate_json(report_a),
                                   run_b, AnswerReport.model_validate_json(report_b))
    return compare_runs(run_a, DecisionReport.model_validate_json(report_a),
                        run_b, DecisionReport.model_validate_json(report_b))


def _shown_change(change: CaseChange | AnswerChange) -> tuple[str, str]:
    """A change's before and after as the table shows them: a decision's status and
    action, an answer's verdict and page."""
    if isinstance(change, AnswerChange):
        return (f"{change.before} {change.page_before or ''}".strip(),
                f"{change.after} {change.page_after or ''}".strip())
    return (f"{change.before.status} {change.before.action or ''}" if change.before else "",
            f"{change.after.status} {change.after.action or ''}" if change.after else "")


@eval_app.command("answers")
def eval_answers(
    file: Annotated[Path, typer.Argument(help="JSONL: id, question, expected_documents or "
                                         "expected_paths ([] = should not be answered).")],
    as_json: JsonOption = False,
    collections: CollectionsOption = None,
    root: Annotated[Path | None, typer.Option(
        help="The indexed folder that `expected_paths` are relative to.")] = None,
    split: Annotated[str | None, typer.Option(
        help="Only cases of this split (held-out sets: tune, test).")] = None,
    set_name: SetOption = None,
    page: PageOption = None,
) -> None:
    """End to end: right page, wrong page, refused, unanswerable answered, per set and
    language; citations valid."""
    require_paths([file], as_json)
    if root is not None:
        require_paths([root], as_json, folders=True)
    runtime = runtime_with_documents(as_json)
    audience = operator_audience(collections, runtime.store, as_json)
    answer_cases = [case for case in read_cases(file, load_answer_cases, as_json)
                    if (split is None or case.split == split)
                    and (set_name is None or case.set == set_name)]
    try:
        answer_cases = with_paths_as_ids(answer_cases, _ids_by_path(runtime, root))
    except ValueError as error:
        raise fail(f"{file}: {error}", as_json) from error
    check_expected_indexed(answer_cases, runtime, file, as_json)
    run_turn = scratch_turns(runtime.engine, audience)  # eval turns stay out of the traces
    with progress_bars() as progress:
        task = progress.add_task("answering", total=len(answer_cases))
        report = evaluate_answers(answer_cases, run_turn,
                                  on_case=lambda: progress.advance(task))
    engine = runtime.engine
    report = report.model_copy(update={
        "backend": engine.answerer.backend, "model": engine.answerer.model or "",
        "retriever": engine.retriever.name, "catalog_version": engine.tool_catalog_version})
    run_id = runtime.store.save_eval_run("answers", str(file), report)
    if page is not None:
        write_block(page, _block_key("answers", file, set_name, split),
                    answers_markdown(report, measured_on(file, page), runtime, split))
    if as_json:
        emit_json({"run_id": run_id, **report.model_dump(mode="json")})
        return
    table = Table("id", "verdict", "section", "status", "expected", "cited")
    for case in report.cases:
        table.add_row(case.id, case.verdict, SECTION_MARKS[case.cites_expected_section],
                      case.status, ", ".join(case.expected_documents) or "-",
                      ", ".join(case.cited_documents) or "-")
    out.print(table)
    out.print(f"right {report.right:.1%} of answerable; wrong {report.wrong:.1%} of answers; "
              f"refused answerable {report.refused_answerable:.1%}; unanswerable answered "
              f"{report.unanswerable_answered:.1%}; section hit {report.section_hit_rate:.1%}; "
              f"invalid citations {report.invalid_citations}; run={run_id}")


SECTION_MARKS: Final[dict[bool | None, str]] = {True: "✓", False: "✗", None: "-"}
"""Whether an answer cites an expected section (`expected_sections`); "-": none labelled, or
not answered. A right page's wrong section read as "right" to a new operator."""


class _Expecting(Protocol):
    expected_documents: list[str]


def check_expected_indexed(cases: Sequence[_Expecting], runtime: Runtime, file: Path,
                           as_json: bool) -> None:
    """A set written over documents that are not indexed cannot score: none indexed is an
    error (exit 2, before the long run); some missing is a warning naming them. The demo's
    set over a handbook scored "right 0.0%" after 84 s, with no word why."""
    expected = {document for case in cases for document in case.expected_documents}
    missing = sorted(expected - {document.document_id for document in runtime.store.documents()})
    if not missing:
        return
    named = ", ".join(missing[:LISTED_MISSING]) + (", …" if len(missing) > LISTED_MISSING else "")
    if len(missing) == len(expected):
        raise fail(f"{file}: none of the {len(expected)} documents its cases expect is indexed "
                   f"({named}); index the documents the set was written over", as_json)
    err.print(labelled("warning:", f"{file}: {len(missing)} of the {len(expected)} documents "
                       f"its cases expect are not indexed ({named}); their cases cannot be "
                       "right"), soft_wrap=True)


LISTED_MISSING: Final = 5
"""Missing documents a warning names; the count says how many more."""


def _block_key(kind: str, file: Path, set_name: str | None, split: str | None) -> str:
    return f"{kind} {file.name} {set_name or 'all'} {split or 'all'}"


def retrieval_markdown(report: RetrievalReport, stamp: str, split: str | None) -> str:
    lines = [stamp, "", f"Split `{split or 'all'}`, {report.total} answerable questions; "
             f"default retriever `{report.default}`; `bm25s` is the plain library over the "
             "same chunks.", ""]
    every = {**report.retrievers, **report.baselines}
    for group, scores_by_name in [("all", every), *report.groups.items()]:
        lines += [f"**{group}**", "", "| retriever | recall@1 | recall@3 | recall@5 | MRR |",
                  "|---|---|---|---|---|"]
        for name, scores in scores_by_name.items():
            label = f"{name} (default)" if name == report.default else name
            lines.append(f"| {label} | {scores.recall_at_1:.3f} | {scores.recall_at_3:.3f} | "
                         f"{scores.recall_at_5:.3f} | {scores.mrr:.3f} |")
        lines.append("")
    return "\n".join(lines).rstrip()


def decisions_markdown(report: DecisionReport, stamp: str, split: str | None) -> str:
    errors = report.errors
    lines = [stamp, "",
             f"Split `{split or 'all'}`, {report.total} cases; selector `{report.model}` "
             f"(backend `{report.backend}`). Decision accuracy **{report.accuracy:.3f}** "
             f"({report.correct}/{report.total}), macro-F1 over decisions "
             f"{report.macro_f1:.3f}, tool-hallucination rate "
             f"{errors.tool_hallucination_rate:.3f} ({errors.tool_hallucinations} "
             f"{'tool' if errors.tool_hallucinations == 1 else 'tools'} where none fits).", "",
             "| decision | expected | made | precision | recall | F1 |",
             "|---|---|---|---|---|---|",
             *(f"| {label} | {s.total} | {s.predicted} | {s.precision:.3f} | {s.recall:.3f} | "
               f"{s.f1:.3f} |" for label, s in report.by_decision.items()), "",
             "| group | cases | accuracy |", "|---|---|---|",
             *(f"| {group} {name} | {score.total} | {score.accuracy:.3f} |"
               for group, scores in (("language", report.by_language),
                                     ("kind", report.by_kind))
               for name, score in scores.items())]
    return "\n".join(lines)


def answers_markdown(report: AnswerReport, stamp: str, runtime: Runtime,
                     split: str | None) -> str:
    settings = runtime.settings
    lines = [stamp, "",
             f"Split `{split or 'all'}`, {report.total} questions; model `{settings.model}`, "
             f"retriever `{runtime.default_retriever}`, embedder `{settings.embedder}`.", "",
             "| group | answerable | unanswerable | right | wrong | refused answerable | "
             "refused, right page named | named first | unanswerable answered | section hit |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    rows = list(report.groups.items())
    if report.overall is not None:
        rows.append(("all", report.overall))
    for name, scores in rows:
        lines.append(f"| {name} | {scores.answerable} | {scores.unanswerable} | "
                     f"{scores.right:.3f} | {scores.wrong:.3f} | {scores.refused_answerable:.3f} "
                     f"| {scores.refused_naming_expected:.3f} "
                     f"| {scores.refused_naming_expected_first:.3f} "
                     f"| {scores.unanswerable_answered:.3f} | {scores.section_hit_rate:.3f} |")
    return "\n".join(lines)


@eval_app.command("harvest")
def eval_harvest(
    out_path: Annotated[Path, typer.Option("--out", help="JSONL file of draft cases.")],
    as_json: JsonOption = False,
) -> None:
    """Draft cases from `no_answer` turns (and negative feedback, once collected)."""
    runtime = open_checked(as_json)
    negative = {vote["result_id"] for vote in runtime.store.feedback() if vote["value"] < 0}
    drafts, missing_text = harvest(runtime.store.turns(), negative_result_ids=negative)
    try:
        with out_path.open("w", encoding="utf-8") as file:
            for draft in drafts:
                file.write(json.dumps(draft, ensure_ascii=False) + "\n")
    except OSError as error:
        raise fail(f"cannot write {out_path}: {error.strerror or error}", as_json) from error
    if missing_text:
        err.print(labelled("note:", f"text unavailable for {missing_text} of {len(drafts)} "
                           "draft(s): traces keep hashes unless DOCASSIST_SAVE_RAW=true; "
                           "those drafts carry only ids, statuses and sources"))
    if as_json:
        emit_json({"drafts": len(drafts), "text_unavailable": missing_text,
                    "out": str(out_path)})
    else:
        out.print(f"wrote {len(drafts)} draft case(s) to {out_path}")


@eval_app.command("shadow")
def eval_shadow(as_json: JsonOption = False) -> None:
    """Agreement of the shadow selector with the active one, and disagreements by kind."""
    runtime = open_checked(as_json)
    report = shadow_report(runtime.store.shadow_decisions())
    if as_json:
        emit_json(report.model_dump(mode="json"))
        return
    if not report.total:  # "agreement 0.0%" read as a verdict on a selector never run
        configured = runtime.settings.shadow_model
        out.print("no shadowed turns yet: " + (
            f"{configured} is asked beside the active selector from the next turn served"
            if configured else "set DOCASSIST_SHADOW_MODEL to a candidate selection backend "
            "and serve some turns; its decisions are recorded, never executed"))
        return
    out.print(f"{report.total} shadowed turns ({', '.join(report.candidates) or 'none'}); "
              f"agreement {report.agreement:.1%}; candidate errors {report.candidate_errors}")
    table = Table("active -> candidate", "turns")
    for kind, count in report.disagreements.items():
        table.add_row(kind, str(count))
    out.print(table)


RUN_COLUMNS = (Column("run", "id"), Column("kind"), Column("total"), Column("accuracy"),
               Column("model", "optional"), Column("backend", "optional"),
               Column("created", "optional"), Column("catalog", "optional"))
"""`eval runs` for people (every field is in `--json`); the run id is what `eval compare`
takes, so it is never cut."""


@eval_app.command("runs")
def eval_runs(as_json: JsonOption = False) -> None:
    """Stored evaluation runs, oldest first."""
    runtime = open_checked(as_json)
    runs = runtime.store.eval_runs()
    if as_json:
        emit_json(runs)
        return
    rows = [[run["run_id"], run["kind"], str(run["total"]), f"{run['accuracy']:.1%}",
             run["model"], run["backend"], run["created_at"], run["catalog_version"]]
            for run in runs]
    out.print(fitted_table(out, RUN_COLUMNS, rows), crop=False)


@eval_app.command("retrieval")
def eval_retrieval(
    file: Annotated[Path, typer.Argument(help="JSONL cases (see samples/retrieval_dev.jsonl).")],
    root: Annotated[Path | None, typer.Option(
        help="Corpus root that `expected_paths` are relative to (indexed beforehand).")] = None,
    split: Annotated[str | None, typer.Option(
        help="Only cases of this split (e.g. test: the held-out part).")] = None,
    as_json: JsonOption = False,
    collections: CollectionsOption = None,
    set_name: SetOption = None,
    page: PageOption = None,
) -> None:
    """Recall@1/3/5 and MRR of every retriever (and of plain bm25s) on labelled questions."""
    require_paths([file], as_json)
    if root is not None:
        require_paths([root], as_json, folders=True)
    runtime = runtime_with_documents(as_json)
    scope = runtime.engine.scopes.scope_of(operator_audience(collections, runtime.store,
                                                             as_json))
    retrievers = {name: scoped(measured(retriever), scope)
                  for name, retriever in runtime.retrievers.items()}
    cases = [case for case in read_cases(file, load_retrieval_cases, as_json)
             if (split is None or case.split == split)
             and (set_name is None or case.set == set_name)]
    try:
        cases = with_documents_by_path(cases, _ids_by_path(runtime, root))
    except ValueError as error:
        raise fail(f"{file}: {error}", as_json) from error
    check_expected_indexed(cases, runtime, file, as_json)
    # The baseline ranks every chunk: it is left out of a narrowed run.
    baselines = ({"bm25s": Bm25sRetriever(runtime.store)}
                 if bm25s_available() and scope.everything else {})
    if not baselines and scope.everything:
        err.print("bm25s is not installed (pip install -e '.[dev]'): the baseline is left out")
    with progress_bars() as progress:
        task = progress.add_task("evaluating",
                                 total=len(cases) * (len(retrievers) + len(baselines)))
        report = evaluate_retrieval(cases, retrievers, runtime.default_retriever,
                                    on_step=lambda: progress.advance(task), baselines=baselines)
    if page is not None:
        write_block(page, _block_key("retrieval", file, set_name, split),
                    retrieval_markdown(report, measured_on(file, page), split))
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


eval_app.command("canary")(eval_canary)  # gaps.py: listed after the others
