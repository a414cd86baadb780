"""`docassist report`: one self-contained HTML dashboard (inline SVG, no external requests)."""

from __future__ import annotations

import html
import json
import statistics
from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from docassist.core.documents import document_of_chunk
from docassist.core.gaps import Gap, GapGroup, group_gaps
from docassist.core.limits import GAP_DAYS
from docassist.core.sources import SourceStatus, health
from docassist.evaluation.canary import CanaryReport
from docassist.evaluation.decisions import DecisionReport
from docassist.storage.exports import scoped_turns
from docassist.storage.roles import ReportRows

BAR_WIDTH: Final = 420
ROW_HEIGHT: Final = 22
LATEST_RUNS: Final = 3
TOP_DOCUMENTS: Final = 10
TOP_GAPS: Final = 10


def _days_ago(days: int) -> str:
    return (datetime.now(UTC) - timedelta(days=days)).isoformat(timespec="milliseconds")


def _bars(title: str, counts: list[tuple[str, int]], chart_id: str) -> str:
    """A horizontal bar chart as inline SVG (labels left, values right)."""
    if not counts:
        return f'<section><h2>{html.escape(title)}</h2><p class="empty">no data</p></section>'
    peak = max(value for _, value in counts) or 1
    height = ROW_HEIGHT * len(counts) + 4
    rows = []
    for index, (label, value) in enumerate(counts):
        y = index * ROW_HEIGHT + 2
        width = max(2, round(BAR_WIDTH * value / peak))
        rows.append(
            f'<text x="0" y="{y + 15}" class="label">{html.escape(label)}</text>'
            f'<rect x="200" y="{y + 3}" width="{width}" height="{ROW_HEIGHT - 6}" rx="3"/>'
            f'<text x="{205 + width}" y="{y + 15}" class="value">{value}</text>')
    return (f'<section><h2>{html.escape(title)}</h2><svg id="{chart_id}" role="img" '
            f'aria-label="{html.escape(title)}" width="{200 + BAR_WIDTH + 60}" '
            f'height="{height}">{"".join(rows)}</svg></section>')


def _percentile(values: list[float], fraction: float) -> float:
    if not values:
        return 0.0
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[round(fraction * 100) - 1]



def _confusion_table(report: DecisionReport) -> str:
    labels = sorted({*report.confusion, *(g for row in report.confusion.values() for g in row)})
    head = "".join(f"<th>{html.escape(label)}</th>" for label in labels)
    body = []
    for expected in labels:
        row = report.confusion.get(expected, {})
        cells = "".join(
            f'<td class="{"hit" if got == expected and row.get(got) else ""}">'
            f'{row.get(got, "")}</td>' for got in labels)
        body.append(f"<tr><th>{html.escape(expected)}</th>{cells}</tr>")
    return (f'<table class="confusion"><tr><th>expected ↓ got →</th>{head}</tr>'
            f'{"".join(body)}</table>')


def _sources_table(statuses: list[SourceStatus], now: datetime) -> str:
    """Every source with its health; stale and failing ones stand out (never silent)."""
    if not statuses:
        return '<p class="empty">no sources configured</p>'
    rows = []
    for status in statuses:
        state = health(status, now)
        cells = [status.name, str(status.kind), status.collection, str(status.documents),
                 status.last_success or "never", status.next_run or "",
                 status.last_error or ""]
        rows.append(f'<tr class="{state}" id="source-{html.escape(status.name)}">'
                    f'<td>{html.escape(str(state))}</td>'
                    + "".join(f"<td>{html.escape(cell)}</td>" for cell in cells) + "</tr>")
    head = "".join(f"<th>{name}</th>" for name in (
        "health", "source", "kind", "collection", "documents", "last success", "next run",
        "last error"))
    return f'<table class="sources"><tr>{head}</tr>{"".join(rows)}</table>'


def _gaps_table(groups: list[GapGroup]) -> str:
    """The biggest gap groups of the last GAP_DAYS days: what the documents miss, and whom
    to ask (the closest documents' owners)."""
    if not groups:
        return '<p class="empty" id="gaps">no gaps</p>'
    rows = []
    for group in groups[:TOP_GAPS]:
        kinds = ", ".join(f"{kind} {count}" for kind, count in group.kinds.items())
        documents = "; ".join(f"{d.document_id} ({d.owner or 'no owner'})"
                              for d in group.documents) or "none close"
        examples = " · ".join(example.text or f"sha256:{(example.sha256 or '')[:12]}"
                              for example in group.examples)
        rows.append("<tr>" + "".join(f"<td>{html.escape(cell)}</td>" for cell in (
            str(group.count), kinds, documents, examples, ", ".join(group.reasons)))
            + "</tr>")
    head = "".join(f"<th>{name}</th>" for name in (
        "questions", "kinds", "closest documents (owner)", "examples", "reasons"))
    return f'<table class="gaps" id="gaps"><tr>{head}</tr>{"".join(rows)}</table>'


def _canary_html(store: ReportRows) -> str:
    """The latest canary run and its regressions (cases that passed in the run before)."""
    row = store.latest_eval_run("canary")
    if row is None:
        return '<p class="empty" id="canary">no canary run</p>'
    report = CanaryReport.model_validate_json(row["report"])
    items = "".join(f"<li>{html.escape(case.set)}: {html.escape(case.id)}</li>"
                    for case in report.regressions)
    summary = (f'{html.escape(row["run_id"])}: {len(report.regressions)} regression(s) '
               f'against {html.escape(report.baseline or "nothing (baseline)")}')
    return f'<div id="canary"><p>{summary}</p><ul class="regressions">{items}</ul></div>'


def _gaps(store: ReportRows, turns: list[dict[str, Any]], scoped: bool) -> list[GapGroup]:
    """The gap groups of the last GAP_DAYS days; of the report's turns only when scoped."""
    kept = {turn["result_id"] for turn in turns}
    rows = [row for row in store.gap_rows(_days_ago(GAP_DAYS))
            if not scoped or row["result_id"] in kept]
    return group_gaps(map(Gap.from_row, rows), store)


def gather(store: ReportRows, audience: str | None = None,
           collection: str | None = None) -> dict[str, Any]:
    turns = scoped_turns(store.turns(), audience, collection)
    cited: Counter[str] = Counter()
    for turn in turns:
        if turn["status"] == "answered":
            chunk_ids = json.loads(turn["source_ids"] or "[]")
            cited.update({document_of_chunk(chunk) for chunk in chunk_ids})
    durations = sorted(float(turn["duration_ms"]) for turn in turns)
    runs = [row for row in store.eval_runs() if row["kind"] == "decisions"][-LATEST_RUNS:]
    votes = [int(vote["value"]) for vote in store.feedback()]
    return {
        "turns": len(turns),
        "per_day": sorted(Counter(turn["created_at"][:10] for turn in turns).items()),
        "statuses": Counter(turn["status"] for turn in turns).most_common(),
        "tool_statuses": Counter(turn["tool_status"] for turn in turns
                                 if turn["tool_status"]).most_common(),
        "p50": _percentile(durations, 0.5),
        "p95": _percentile(durations, 0.95),
        "unanswered": sum(1 for turn in turns if turn["status"] == "no_answer"),
        "positive": sum(1 for vote in votes if vote > 0),
        "negative": sum(1 for vote in votes if vote < 0),
        "reasons": Counter(str(vote["reason"]) for vote in store.feedback()
                           if vote.get("reason")).most_common(),
        "cited": cited.most_common(TOP_DOCUMENTS),
        "sources": store.source_statuses(),
        "gaps": _gaps(store, turns, scoped=audience is not None or collection is not None),
        "runs": [(row, DecisionReport.model_validate_json(
            (store.eval_run(row["run_id"]) or {})["report"])) for row in runs],
    }


def render_report(store: ReportRows, audience: str | None = None,
                  collection: str | None = None) -> str:
    """The dashboard; with `audience` or `collection`, of those turns only (see
    storage.exports.scoped_turns)."""
    data = gather(store, audience, collection)
    cards = [("turns", str(data["turns"])), ("unanswered", str(data["unanswered"])),
             ("p50 latency", f"{data['p50']:.0f} ms"), ("p95 latency", f"{data['p95']:.0f} ms"),
             ("feedback", f"{data['positive']} up / {data['negative']} down"
                           if data["positive"] + data["negative"] else "none yet")]
    card_html = "".join(
        f'<div class="card"><div class="number" id="card-{html.escape(name.split()[0])}">'
        f'{html.escape(value)}</div><div>{html.escape(name)}</div></div>'
        for name, value in cards)
    runs_html = "".join(
        f'<section><h3>{html.escape(row["run_id"])}</h3><p>{html.escape(row["backend"])}:'
        f'{html.escape(row["model"])} · catalog {html.escape(row["catalog_version"])} · '
        f'accuracy {report.accuracy:.1%} · macro-F1 {report.macro_f1:.3f}</p>'
        f'{_confusion_table(report)}</section>'
        for row, report in reversed(data["runs"])) or '<p class="empty">no eval runs</p>'
    generated = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>DocAssist report</title>
<style>
body {{ font: 14px system-ui, sans-serif; margin: 24px; color: #111; }}
.cards {{ display: flex; gap: 12px; flex-wrap: wrap; }}
.card {{ border: 1px solid #ddd; border-radius: 8px; padding: 12px 16px; min-width: 120px; }}
.number {{ font-size: 24px; font-weight: 600; }}
svg rect {{ fill: #2563eb; }} svg .label, svg .value {{ font-size: 12px; }}
table.confusion {{ border-collapse: collapse; }}
table.confusion td, table.confusion th {{ border: 1px solid #ddd; padding: 4px 8px; }}
td.hit {{ background: #dcfce7; }} .empty {{ color: #777; }}
table.sources, table.gaps {{ border-collapse: collapse; }}
table.sources td, table.sources th, table.gaps td, table.gaps th {{
  border: 1px solid #ddd; padding: 4px 8px; }}
ul.regressions li {{ color: #b91c1c; }}
tr.failing {{ background: #fee2e2; }} tr.stale {{ background: #fef9c3; }}
</style></head><body>
<h1>DocAssist report</h1><p>Generated {generated}.</p>
<div class="cards">{card_html}</div>
{_bars("Turns per day", data["per_day"], "chart-days")}
{_bars("Turn status", data["statuses"], "chart-status")}
{_bars("Tool status", data["tool_statuses"], "chart-tools")}
{_bars("Most-cited documents", data["cited"], "chart-cited")}
{_bars("Why answers did not help", data["reasons"], "chart-reasons")}
<h2>Document sources</h2>{_sources_table(data["sources"], datetime.now(UTC))}
<h2>Top gaps (last {GAP_DAYS} days)</h2>{_gaps_table(data["gaps"])}
<h2>Canary</h2>{_canary_html(store)}
<h2>Latest evaluation runs</h2>{runs_html}
</body></html>
"""
