"""The PostgreSQL store's conversations: loading a state, turn commits (optimistic versions,
event dedupe), arrivals claimed once, the turn rows read in their order, the latest run of an
evaluation kind, and the purge. What both stores write alike is in storage/trace_rows.py and
storage/feedback_rows.py."""

from __future__ import annotations

import json
from typing import Any, Protocol

from docassist.core.errors import ConcurrentUpdateError, DuplicateEventError
from docassist.core.messages import ConversationKey
from docassist.core.ports import StoredConversation
from docassist.core.results import TurnResult
from docassist.core.state import ConversationState
from docassist.core.trace import ToolCallRecord, TurnRecord
from docassist.storage.postgres.connection import Qmark, insert_sql, now_iso
from docassist.storage.privacy import Erasure, erase_before


class _Base(Protocol):
    def _transaction(self) -> Any: ...

    def _rows(self, sql: str, params: Any = ()) -> list[dict[str, Any]]: ...


class ConversationRows:
    """Conversation states, turn commits and the purge (mixed into PostgresStore)."""

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

    def claim_arrival(self: _Base, platform: str, arrival_id: str) -> bool:
        """True for the first delivery of a request that is not a turn (a slash command by
        its trigger id); a replay finds it taken."""
        with self._transaction() as connection:
            return bool(connection.execute(
                "INSERT INTO processed_events (platform, event_id, conversation_id, created_at) "
                "VALUES (%s, %s, '', %s) ON CONFLICT DO NOTHING",
                [platform, arrival_id, now_iso()]).rowcount == 1)

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

    def latest_eval_run(self: _Base, kind: str) -> dict[str, Any] | None:
        rows = self._rows("SELECT * FROM eval_runs WHERE kind = %s "
                          "ORDER BY created_at DESC, run_id DESC LIMIT 1", [kind])
        return rows[0] if rows else None

    def erase_before(self: _Base, cutoff: str) -> Erasure:
        """Every stored copy of user text written before `cutoff` (storage/privacy.py). Rows
        PostgreSQL deletes stay in their pages until VACUUM reclaims them (autovacuum does);
        docs/traces-and-privacy.md."""
        with self._transaction() as connection:
            return erase_before(Qmark(connection), cutoff, now_iso())


def _json_columns(row: dict[str, Any]) -> dict[str, Any]:
    return {k: json.dumps(v, ensure_ascii=False) if isinstance(v, dict | list) else v
            for k, v in row.items()}
