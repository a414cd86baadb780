"""The PostgreSQL store's conversations and traces: turn commits (optimistic versions,
event dedupe), shadow records, evaluation runs, feedback, escalations, purge."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from typing import Any, Protocol

from docassist.core.errors import ConcurrentUpdateError, DuplicateEventError, StorageError
from docassist.core.messages import ConversationKey
from docassist.core.ports import StoredConversation
from docassist.core.results import TurnResult
from docassist.core.state import ConversationState
from docassist.core.trace import ShadowRecord, ToolCallRecord, TurnRecord, sha256_text
from docassist.storage.postgres.connection import Connection, Qmark, insert_sql, now_iso
from docassist.storage.privacy import Erasure, erase_before


class _Base(Protocol):
    def _transaction(self) -> Any: ...

    def _rows(self, sql: str, params: Any = ()) -> list[dict[str, Any]]: ...

    def _value(self, sql: str, params: Any = ()) -> Any: ...


class ConversationRows:
    """Conversations, traces and what hangs on them (mixed into PostgresStore)."""

    def load(self: _Base, key: ConversationKey) -> StoredConversation:
        rows = self._rows("SELECT state, version FROM conversations WHERE conversation_id = %s",
                          [key.conversation_id])
        if not rows:
            return StoredConversation(ConversationState(), 0)
        return StoredConversation(ConversationState.model_validate_json(rows[0]["state"]),
                                  int(rows[0]["version"]))

    def commit_turn(self: _Base, key: ConversationKey, state: ConversationState,
                    expected_version: int, turn: TurnRecord, tool_calls: list[ToolCallRecord],
                    result: TurnResult | None = None) -> int:
        """See ConversationStore.commit_turn. The version check is the write itself (an
        UPDATE guarded by the expected version, or an INSERT that finds no row), so two
        replicas committing one conversation cannot both win."""
        new_version = expected_version + 1
        with self._transaction() as connection:
            values = [state.model_dump_json(), new_version, state.generation, now_iso()]
            if expected_version == 0:
                cursor = connection.execute(
                    "INSERT INTO conversations (state, version, generation, updated_at, "
                    "conversation_id, platform, workspace, channel, thread) VALUES "
                    "(%s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                    [*values, key.conversation_id, key.platform, key.workspace, key.channel,
                     key.thread])
            else:
                cursor = connection.execute(
                    "UPDATE conversations SET state = %s, version = %s, generation = %s, "
                    "updated_at = %s WHERE conversation_id = %s AND version = %s",
                    [*values, key.conversation_id, expected_version])
            if cursor.rowcount != 1:
                current = connection.execute("SELECT version FROM conversations WHERE "
                                             "conversation_id = %s",
                                             [key.conversation_id]).fetchone()
                raise ConcurrentUpdateError(
                    f"conversation {key.conversation_id} is at version "
                    f"{current[0] if current else 0}, expected {expected_version}")
            if turn.event_id and connection.execute(
                    "INSERT INTO processed_events (platform, event_id, conversation_id, "
                    "created_at) VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING",
                    [turn.platform, turn.event_id, key.conversation_id, now_iso()]
                    ).rowcount != 1:
                raise DuplicateEventError(
                    f"event {turn.platform}/{turn.event_id} was already answered")
            connection.execute(*insert_sql("turns", _json_columns(turn.model_dump())))
            for call in tool_calls:
                connection.execute(*insert_sql("tool_calls", _json_columns(call.model_dump())))
            if result is not None and turn.event_id:
                connection.execute(
                    "UPDATE inbox SET status = 'answered', result = %s WHERE platform = %s "
                    "AND event_id = %s AND status = 'pending'",
                    [result.model_dump_json(), turn.platform, turn.event_id])
        return new_version

    def answer_place(self: _Base, result_id: str) -> tuple[str, str] | None:
        rows = self._rows("SELECT conversations.platform, conversations.channel FROM turns "
                          "JOIN conversations USING (conversation_id) WHERE "
                          "turns.result_id = %s", [result_id])
        return None if not rows else (str(rows[0]["platform"]), str(rows[0]["channel"]))

    def claim_arrival(self: _Base, platform: str, arrival_id: str) -> bool:
        """True for the first delivery of a request that is not a turn (a slash command by
        its trigger id); a replay finds it taken."""
        with self._transaction() as connection:
            return bool(connection.execute(
                "INSERT INTO processed_events (platform, event_id, conversation_id, created_at) "
                "VALUES (%s, %s, '', %s) ON CONFLICT DO NOTHING",
                [platform, arrival_id, now_iso()]).rowcount == 1)

    def event_seen(self: _Base, platform: str, event_id: str) -> bool:
        return self._value("SELECT 1 FROM processed_events WHERE platform = %s AND "
                           "event_id = %s", [platform, event_id]) is not None

    def record_shadow(self: _Base, record: ShadowRecord) -> None:
        with self._transaction() as connection:
            connection.execute(*insert_sql("shadow_decisions", record.model_dump()))

    def shadow_decisions(self: _Base) -> list[dict[str, Any]]:
        return self._rows("SELECT * FROM shadow_decisions ORDER BY created_at")

    def turns(self: _Base, conversation_id: str | None = None, since: str | None = None,
              until: str | None = None) -> list[dict[str, Any]]:
        """Assistant-trace rows, oldest first (insertion order within a millisecond)."""
        conditions: list[str] = []
        params: list[str] = []
        for condition, value in (("conversation_id = %s", conversation_id),
                                 ("created_at >= %s", since), ("created_at < %s", until)):
            if value is not None:
                conditions.append(condition)
                params.append(value)
        where = f"WHERE {' AND '.join(conditions)}" if conditions else ""
        rows = self._rows(f"SELECT * FROM turns {where} ORDER BY created_at, seq", params)
        for row in rows:
            del row["seq"]
        return rows

    def tool_calls(self: _Base, result_id: str | None = None) -> list[dict[str, Any]]:
        where, params = ("WHERE result_id = %s", [result_id]) if result_id else ("", [])
        return self._rows(f"SELECT * FROM tool_calls {where} ORDER BY id", params)

    def conversation_of_result(self: _Base, result_id: str) -> list[dict[str, Any]]:
        return self._rows(
            "SELECT c.platform, c.workspace, c.channel, c.thread FROM turns t "
            "JOIN conversations c ON c.conversation_id = t.conversation_id "
            "WHERE t.result_id = %s", [result_id])

    def save_eval_run(self: _Base, kind: str, source: str, report: Any) -> str:
        run_id = f"{kind}-{datetime.now(UTC):%Y%m%d-%H%M%S}-{uuid.uuid4().hex[:6]}"
        with self._transaction() as connection:
            connection.execute(*insert_sql("eval_runs", {
                "run_id": run_id, "kind": kind, "created_at": now_iso(), "source": source,
                "backend": report.backend, "model": report.model,
                "catalog_version": report.catalog_version, "total": report.total,
                "accuracy": report.accuracy, "report": report.model_dump_json()}))
        return run_id

    def eval_run(self: _Base, run_id: str) -> dict[str, Any] | None:
        rows = self._rows("SELECT * FROM eval_runs WHERE run_id = %s", [run_id])
        return rows[0] if rows else None

    def latest_eval_run(self: _Base, kind: str) -> dict[str, Any] | None:
        rows = self._rows("SELECT * FROM eval_runs WHERE kind = %s "
                          "ORDER BY created_at DESC, run_id DESC LIMIT 1", [kind])
        return rows[0] if rows else None

    def eval_runs(self: _Base) -> list[dict[str, Any]]:
        return self._rows("SELECT run_id, kind, created_at, source, backend, model, "
                          "catalog_version, total, accuracy FROM eval_runs ORDER BY created_at")

    def record_feedback(self: _Base, result_id: str, user: str, positive: bool) -> None:
        """One vote per user per answer: a later click replaces the earlier one."""
        with self._transaction() as connection:
            _require_turn(connection, result_id)
            connection.execute(
                "INSERT INTO feedback (result_id, user_sha256, value, created_at) "
                "VALUES (%s, %s, %s, %s) ON CONFLICT (result_id, user_sha256) DO UPDATE SET "
                "value = EXCLUDED.value, created_at = EXCLUDED.created_at",
                [result_id, sha256_text(user), 1 if positive else -1, now_iso()])

    def record_escalation(self: _Base, result_id: str, user: str) -> bool:
        with self._transaction() as connection:
            _require_turn(connection, result_id)
            cursor = connection.execute(
                "INSERT INTO escalations (result_id, user_sha256, created_at) "
                "VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
                [result_id, sha256_text(user), now_iso()])
            return bool(cursor.rowcount == 1)

    def withdraw_escalation(self: _Base, result_id: str) -> None:
        with self._transaction() as connection:
            connection.execute("DELETE FROM escalations WHERE result_id = %s", [result_id])

    def feedback(self: _Base) -> list[dict[str, Any]]:
        return self._rows("SELECT * FROM feedback ORDER BY id")

    def erase_before(self: _Base, cutoff: str) -> Erasure:
        """Every stored copy of user text written before `cutoff` (storage/privacy.py). Rows
        PostgreSQL deletes stay in their pages until VACUUM reclaims them (autovacuum does);
        docs/traces-and-privacy.md."""
        with self._transaction() as connection:
            return erase_before(Qmark(connection), cutoff, now_iso())


def _require_turn(connection: Connection, result_id: str) -> None:
    if connection.execute("SELECT 1 FROM turns WHERE result_id = %s",
                          [result_id]).fetchone() is None:
        raise StorageError(f"no turn with result id {result_id}")


def _json_columns(row: dict[str, Any]) -> dict[str, Any]:
    return {k: json.dumps(v, ensure_ascii=False) if isinstance(v, dict | list) else v
            for k, v in row.items()}
