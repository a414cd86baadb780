"""The PostgreSQL store's part for `docassist gaps` and `docassist eval canary`: questions
kept as vectors and the gap turns of a period (the same SQL as storage/gap_rows.py, run with
PostgreSQL's placeholders), and the latest run of an evaluation kind."""

from __future__ import annotations

from typing import Any, Protocol

from psycopg.rows import dict_row

from docassist.core.ports import QuestionTrace
from docassist.storage.gap_rows import question_row, read_gap_rows
from docassist.storage.postgres.connection import upsert_sql


class _Base(Protocol):
    def _transaction(self) -> Any: ...

    def _rows(self, sql: str, params: Any = ()) -> list[dict[str, Any]]: ...


class GapRowsPg:
    """Question vectors, gap turns and the latest canary run (mixed into PostgresStore)."""

    def record_questions(self: _Base, traces: list[QuestionTrace]) -> None:
        with self._transaction() as connection:
            for trace in traces:
                connection.execute(*upsert_sql("question_vectors", question_row(trace),
                                               ["result_id"]))

    def gap_rows(self: _Base, since: str) -> list[dict[str, Any]]:
        """As the SQLite store's (GapLog): no_answer and handoff turns, 👎 with their
        reason, escalations; oldest first. Read in one transaction."""
        with self._transaction() as connection:
            def query(sql: str, params: list[Any]) -> list[dict[str, Any]]:
                with connection.cursor(row_factory=dict_row) as cursor:
                    cursor.execute(sql.replace("?", "%s"), params)
                    return list(cursor.fetchall())

            return read_gap_rows(query, since)

    def latest_eval_run(self: _Base, kind: str) -> dict[str, Any] | None:
        rows = self._rows("SELECT * FROM eval_runs WHERE kind = %s "
                          "ORDER BY created_at DESC, run_id DESC LIMIT 1", [kind])
        return rows[0] if rows else None
