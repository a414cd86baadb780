"""`docassist gaps` (what users asked that the documents do not answer well) and `docassist
eval canary` (labelled sets against the previous canary run). Neither indexes anything.

stdout carries results (exactly one JSON document with --json); errors go to stderr (exit 2);
`eval canary` exits 1 when it found regressions.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Final

import typer

from docassist.cli.common import open_checked
from docassist.cli.output import emit_json, err, fail, labelled, out
from docassist.cli.tables import Column, fitted_table
from docassist.core.gaps import Gap, GapGroup, group_gaps
from docassist.core.limits import GAP_DAYS
from docassist.evaluation.canary import CanaryReport, canary_sets, run_canary
from docassist.runtime import Runtime, canary_configuration
from docassist.storage.exports import parse_moment

JsonOption = Annotated[bool, typer.Option("--json", help="Print exactly one JSON document.")]
SinceOption = Annotated[str | None, typer.Option(
    "--since", help=f"From this ISO date or time, or this long ago (7d, 12h); default "
    f"{GAP_DAYS}d.")]




def since_time(value: str | None, now: datetime) -> str:
    """`--since` as the UTC ISO text traces store; ValueError names a bad value."""
    parsed = parse_moment(f"{GAP_DAYS}d" if value is None else value, "--since", now)
    assert parsed is not None
    return parsed


def gap_groups(runtime: Runtime, since: str) -> list[GapGroup]:
    return group_gaps([Gap.from_row(row) for row in runtime.store.gap_rows(since)],
                      runtime.store)


GAP_COLUMNS: Final = (Column("closest documents (owner)", "id"), Column("count"),
                      Column("kinds"), Column("examples", max_width=60))
"""`gaps` for people: the documents first, whole (people open them next)."""


HASHED_EXAMPLES_HINT: Final = (
    "Questions are kept as their sha256 only (privacy by default); set DOCASSIST_SAVE_RAW=true "
    "to keep the text of new ones (docs/traces-and-privacy.md).")
"""Said under a table whose examples are hashes: a new operator read them as a fault."""


def gaps(since: SinceOption = None, as_json: JsonOption = False) -> None:
    """Unanswered questions, thumbs-down votes and handoffs of a period, grouped by
    meaning, with the closest documents and their owners: where the documents need work."""
    try:
        start = since_time(since, datetime.now(UTC))
    except ValueError as error:  # before anything is opened: a bad option writes nothing
        raise fail(str(error), as_json) from error
    groups = gap_groups(open_checked(as_json), start)
    if as_json:
        emit_json({"since": start, "groups": [group.model_dump(mode="json")
                                              for group in groups]})
        return
    rows = [["\n".join(f"{d.document_id} ({d.owner or '-'})" for d in group.documents) or "-",
             str(group.count), ", ".join(f"{kind} {n}" for kind, n in group.kinds.items()),
             "\n".join(dict.fromkeys(e.text or f"sha256:{(e.sha256 or '')[:12]}"
                                     for e in group.examples))]
            for group in groups]
    out.print(fitted_table(out, GAP_COLUMNS, rows), crop=False)
    out.print(f"{sum(group.count for group in groups)} gap turn(s) in {len(groups)} group(s) "
              f"since {start}")
    if any(example.text is None for group in groups for example in group.examples):
        out.print(HASHED_EXAMPLES_HINT)


def eval_canary(as_json: JsonOption = False) -> None:
    """Run DOCASSIST_CANARY_SETS now and list the cases that passed in the previous canary
    run and fail now (exit 1 when there is one; the first run is the baseline)."""
    runtime = open_checked(as_json)
    if not runtime.store.documents():
        raise fail("the index is empty: index or sync documents before the canary runs",
                   as_json)
    settings = runtime.settings
    try:
        run_id, report = run_canary(runtime.store, runtime.engine,
                                    canary_sets(settings.canary_sets), Path.cwd(),
                                    settings.language, canary_configuration(runtime))
    except ValueError as error:
        raise fail(str(error), as_json) from error
    _show_canary(run_id, report, as_json)
    if report.regressions:
        raise typer.Exit(code=1)


def _show_canary(run_id: str, report: CanaryReport, as_json: bool) -> None:
    if as_json:
        emit_json({"run_id": run_id, **report.model_dump(mode="json")})
        return
    if report.baseline is None:
        err.print("first canary run: recorded as the baseline")
    for case in report.regressions:
        out.print(labelled("regression", f"{case.set} {case.id}", "red"))
    for case in report.fixed:
        out.print(f"fixed {case.set} {case.id}")
    out.print(f"{sum(case.passed for case in report.cases)}/{report.total} cases pass; "
              f"{len(report.regressions)} regression(s) against {report.baseline or '-'}; "
              f"run={run_id}")
