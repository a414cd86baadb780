"""The stores' part for the trace as it is read back (turns' tool calls, shadow records,
votes, the conversation of an answer) and for evaluation runs.

A mixin of both stores (written once over dialect.py). Loading and committing a
conversation, the turn rows in their order and the purge are in conversation_rows.py.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from docassist.core.trace import ShadowRecord
from docassist.storage.connection import now_iso
from docassist.storage.dialect import SqlStore


class TraceRows:
    """The trace read back, shadow records and evaluation runs (mixed into Store and
    PostgresStore)."""

    def record_shadow(self: SqlStore, record: ShadowRecord) -> None:
        with self._write() as connection:
            connection.execute(*self.dialect.insert("shadow_decisions", record.model_dump()))

    def shadow_decisions(self: SqlStore) -> list[dict[str, Any]]:
        return self._read("SELECT * FROM shadow_decisions ORDER BY created_at")

    def answer_place(self: SqlStore, result_id: str) -> tuple[str, str] | None:
        rows = self._read_apart(
            "SELECT conversations.platform, conversations.channel FROM turns JOIN "
            "conversations USING (conversation_id) WHERE turns.result_id = ?", [result_id])
        return None if not rows else (str(rows[0]["platform"]), str(rows[0]["channel"]))

    def event_seen(self: SqlStore, platform: str, event_id: str) -> bool:
        return bool(self._read_apart(
            "SELECT 1 FROM processed_events WHERE platform = ? AND event_id = ?",
            [platform, event_id]))

    def conversation_of_result(self: SqlStore, result_id: str) -> list[dict[str, Any]]:
        """The conversation key columns of the turn with this result id (zero or one row)."""
        return self._read(
            "SELECT c.platform, c.workspace, c.channel, c.thread FROM turns t "
            "JOIN conversations c ON c.conversation_id = t.conversation_id "
            "WHERE t.result_id = ?", [result_id])

    def tool_calls(self: SqlStore, result_id: str | None = None) -> list[dict[str, Any]]:
        where, params = ("WHERE result_id = ?", [result_id]) if result_id else ("", [])
        return self._read(f"SELECT * FROM tool_calls {where} ORDER BY id", params)

    def feedback(self: SqlStore) -> list[dict[str, Any]]:
        return self._read("SELECT * FROM feedback ORDER BY id")

    def save_eval_run(self: SqlStore, kind: str, source: str, report: Any) -> str:
        """Store an evaluation report (a pydantic model); returns its run id."""
        run_id = f"{kind}-{datetime.now(UTC):%Y%m%d-%H%M%S}-{uuid.uuid4().hex[:6]}"
        with self._write() as connection:
            connection.execute(*self.dialect.insert("eval_runs", {
                "run_id": run_id, "kind": kind, "created_at": now_iso(), "source": source,
                "backend": report.backend, "model": report.model,
                "catalog_version": report.catalog_version, "total": report.total,
                "accuracy": report.accuracy, "report": report.model_dump_json()}))
        return run_id

    def eval_run(self: SqlStore, run_id: str) -> dict[str, Any] | None:
        rows = self._read("SELECT * FROM eval_runs WHERE run_id = ?", [run_id])
        return rows[0] if rows else None

    def eval_runs(self: SqlStore) -> list[dict[str, Any]]:
        return self._read("SELECT run_id, kind, created_at, source, backend, model, "
                          "catalog_version, total, accuracy FROM eval_runs ORDER BY created_at")
