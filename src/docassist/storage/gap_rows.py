"""The stores' part for `docassist gaps`: questions kept as vectors, and the gap turns of a
period with their votes and escalations.

A mixin of both stores (written once over dialect.py). Without save_raw a question is kept
as its embedding (int8 codes, as the chunk vectors) and the ids of the closest documents,
never as text; rows go with the turn's trace on purge (privacy.py).
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

from docassist.core.ports import QuestionTrace
from docassist.core.statuses import GAP_STATUSES
from docassist.storage.dialect import Query, SqlStore
from docassist.storage.vectors import decode_vector, encode_vector


def question_row(trace: QuestionTrace) -> dict[str, Any]:
    """A question_vectors row: the int8 encoding of chunk vectors, document ids as JSON."""
    vector = trace.vector
    return {"result_id": trace.result_id, "created_at": trace.created_at,
            "embedder": trace.embedder,
            "dimensions": len(vector) if vector is not None else None,
            "vector": encode_vector(vector) if vector is not None else None,
            "document_ids": json.dumps(trace.document_ids), "question": trace.question}


class GapRows:
    """Question vectors and the gap turns read back (mixed into Store and PostgresStore)."""

    def record_questions(self: SqlStore, traces: list[QuestionTrace]) -> None:
        rows = [question_row(trace) for trace in traces]
        if not rows:
            return
        sql = self.dialect.upsert("question_vectors", list(rows[0]), ["result_id"])
        values = [list(row.values()) for row in rows]
        self._shared_write(lambda connection: connection.executemany(sql, values))

    def gap_rows(self: SqlStore, since: str) -> list[dict[str, Any]]:
        """Every turn since `since` that is a gap: status no_answer or handoff, a 👎 (with
        its reason, one of core.feedback's words; never the user's text), or an escalation;
        oldest first. Its reads are made together (dialect.SqlStore._reads)."""
        with self._reads() as query:
            return read_gap_rows(query, since)


def read_gap_rows(query: Query, since: str) -> list[dict[str, Any]]:
    """The gap turns since `since`, as `GapLog.gap_rows` returns them, on either store."""
    kinds, reasons = _gap_kinds(query, since)
    if not kinds:
        return []
    marks = ", ".join("?" * len(kinds))
    turns = list(query(
        "SELECT t.result_id, t.created_at, t.platform, t.standalone_sha256, "
        "t.question_sha256, t.raw, q.dimensions, q.vector, q.document_ids, q.question "
        "FROM turns t LEFT JOIN question_vectors q ON q.result_id = t.result_id "
        f"WHERE t.result_id IN ({marks}) ORDER BY t.created_at", list(kinds)))
    return [_gap_row(row, kinds[row["result_id"]], reasons[row["result_id"]])
            for row in turns]


def _gap_kinds(query: Query, since: str) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    kinds: dict[str, list[str]] = defaultdict(list)
    reasons: dict[str, list[str]] = defaultdict(list)
    statuses = sorted(GAP_STATUSES)
    for row in query(
            "SELECT result_id, status FROM turns WHERE created_at >= ? AND status IN "
            f"({', '.join('?' * len(statuses))})", [since, *statuses]):
        kinds[row["result_id"]].append(row["status"])
    for row in query("SELECT result_id, reason FROM feedback "
                        "WHERE value < 0 AND created_at >= ?", [since]):
        if "thumbs_down" not in kinds[row["result_id"]]:
            kinds[row["result_id"]].append("thumbs_down")
        if row["reason"]:
            reasons[row["result_id"]].append(str(row["reason"]))
    for row in query("SELECT result_id FROM escalations WHERE created_at >= ?", [since]):
        kinds[row["result_id"]].append("escalation")
    return kinds, reasons


def _gap_row(row: dict[str, Any], kinds: list[str], reasons: list[str]) -> dict[str, Any]:
    raw = json.loads(row["raw"]) if row["raw"] else {}
    vector = (decode_vector(bytes(row["vector"]), row["dimensions"])
              if row["vector"] is not None else None)
    return {
        "result_id": row["result_id"], "created_at": row["created_at"],
        "platform": row["platform"], "kinds": kinds, "reasons": reasons,
        "question": row["question"] or raw.get("standalone_question") or raw.get("question"),
        "question_sha256": row["standalone_sha256"] or row["question_sha256"],
        "vector": vector, "document_ids": json.loads(row["document_ids"] or "[]"),
    }
