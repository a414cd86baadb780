"""The stores' conversations: loading a state, turn commits (optimistic versions, event
dedupe, in a write the store may share), arrivals claimed once, the turn rows read in their
order, the latest run of an evaluation kind, and the purge.

A mixin of both stores (written once over dialect.py). What both write of the trace besides
is in trace_rows.py and feedback_rows.py.
"""

from __future__ import annotations

import json
from typing import Any, Protocol

from docassist.core.errors import ConcurrentUpdateError, DuplicateEventError
from docassist.core.messages import ConversationKey
from docassist.core.ports import StoredConversation
from docassist.core.results import TurnResult
from docassist.core.state import ConversationState
from docassist.core.trace import ToolCallRecord, TurnRecord
from docassist.storage.connection import now_iso
from docassist.storage.dialect import SqlConnection, SqlStore
from docassist.storage.privacy import Erasure, erase_before


class ConversationRowsStore(SqlStore, Protocol):
    """What the conversation rows need of a store besides SqlStore."""

    def _drop_erased_pages(self) -> None:
        """After a purge: no older page version may keep the erased text (SQLite truncates
        its write-ahead log; PostgreSQL's autovacuum reclaims deleted rows, nothing to do)."""
        ...


class ConversationRows:
    """Conversation states, turn commits and the purge (mixed into Store and PostgresStore)."""

    def load(self: SqlStore, key: ConversationKey) -> StoredConversation:
        rows = self._read_apart("SELECT state, version FROM conversations "
                                "WHERE conversation_id = ?", [key.conversation_id])
        if not rows:
            return StoredConversation(ConversationState(), 0)
        return StoredConversation(ConversationState.model_validate_json(rows[0]["state"]),
                                  int(rows[0]["version"]))

    def commit_turn(self: SqlStore, key: ConversationKey, state: ConversationState,
                    expected_version: int, turn: TurnRecord, tool_calls: list[ToolCallRecord],
                    result: TurnResult | None = None) -> int:
        """See ConversationStore.commit_turn. The version check is the write itself (an
        UPDATE guarded by the expected version, or an INSERT that finds no row), so two
        replicas committing one conversation cannot both win."""
        dialect = self.dialect
        new_version = expected_version + 1
        values = [state.model_dump_json(), new_version, state.generation, now_iso()]
        turn_row = _json_columns(turn.model_dump())
        call_rows = [_json_columns(call.model_dump()) for call in tool_calls]
        result_json = result.model_dump_json() if result is not None else None

        def write(connection: SqlConnection) -> int:
            if expected_version == 0:
                cursor = connection.execute(dialect.insert_ignoring("conversations", [
                    "state", "version", "generation", "updated_at", "conversation_id",
                    "platform", "workspace", "channel", "thread"]),
                    [*values, key.conversation_id, key.platform, key.workspace, key.channel,
                     key.thread])
            else:
                cursor = connection.execute(
                    "UPDATE conversations SET state = ?, version = ?, generation = ?, "
                    "updated_at = ? WHERE conversation_id = ? AND version = ?",
                    [*values, key.conversation_id, expected_version])
            if cursor.rowcount != 1:
                current = connection.execute("SELECT version FROM conversations WHERE "
                                             "conversation_id = ?",
                                             [key.conversation_id]).fetchone()
                raise ConcurrentUpdateError(
                    f"conversation {key.conversation_id} is at version "
                    f"{current[0] if current else 0}, expected {expected_version}")
            if turn.event_id and not _first_arrival(connection, dialect.insert_ignoring(
                    "processed_events", _ARRIVAL_COLUMNS), turn.platform, turn.event_id,
                    key.conversation_id):
                raise DuplicateEventError(
                    f"event {turn.platform}/{turn.event_id} was already answered")
            connection.execute(*dialect.insert("turns", turn_row))
            for call_row in call_rows:
                connection.execute(*dialect.insert("tool_calls", call_row))
            if result_json is not None and turn.event_id:  # see ConversationStore.commit_turn
                connection.execute(
                    "UPDATE inbox SET status = 'answered', result = ? WHERE platform = ? "
                    "AND event_id = ? AND status = 'pending'",
                    [result_json, turn.platform, turn.event_id])
            return new_version

        return self._shared_write(write)

    def claim_arrival(self: SqlStore, platform: str, arrival_id: str) -> bool:
        """True for the first delivery of a request that is not a turn (a slash command by
        its trigger id); a replay finds it taken."""
        with self._write() as connection:
            return _first_arrival(connection, self.dialect.insert_ignoring(
                "processed_events", _ARRIVAL_COLUMNS), platform, arrival_id, "")

    def turns(self: SqlStore, conversation_id: str | None = None, since: str | None = None,
              until: str | None = None) -> list[dict[str, Any]]:
        """Assistant-trace rows, oldest first (insertion order within a millisecond);
        optionally of one conversation, and created at or after `since` and before `until`
        (ISO UTC text, as stored)."""
        conditions: list[str] = []
        params: list[str] = []
        for condition, value in (("conversation_id = ?", conversation_id),
                                 ("created_at >= ?", since), ("created_at < ?", until)):
            if value is not None:
                conditions.append(condition)
                params.append(value)
        where = f"WHERE {' AND '.join(conditions)}" if conditions else ""
        rows = self._read(f"SELECT * FROM turns {where} ORDER BY created_at, "
                          f"{self.dialect.insertion_order}", params)
        for row in rows:
            for column in self.dialect.private_columns:
                del row[column]
        return rows

    def latest_eval_run(self: SqlStore, kind: str) -> dict[str, Any] | None:
        rows = self._read("SELECT * FROM eval_runs WHERE kind = ? ORDER BY created_at DESC, "
                          f"{self.dialect.eval_run_order} DESC LIMIT 1", [kind])
        return rows[0] if rows else None

    def erase_before(self: ConversationRowsStore, cutoff: str) -> Erasure:
        """Every stored copy of user text written before `cutoff` (see privacy.py); then the
        store drops the page versions that still hold it (SQLite: the WAL is checkpointed
        and truncated; a reader in another process may hold that back until the next one.
        PostgreSQL: deleted rows stay in their pages until VACUUM reclaims them, as
        autovacuum does; docs/traces-and-privacy.md)."""
        with self._write() as connection:
            erased = erase_before(connection, cutoff, now_iso())
        self._drop_erased_pages()
        return erased


_ARRIVAL_COLUMNS = ["platform", "event_id", "conversation_id", "created_at"]


def _first_arrival(connection: SqlConnection, insert: str, platform: str, event_id: str,
                   conversation_id: str) -> bool:
    """A processed_events row for this event; False when one was stored already."""
    return connection.execute(insert, [platform, event_id, conversation_id,
                                       now_iso()]).rowcount == 1


def _json_columns(row: dict[str, Any]) -> dict[str, Any]:
    return {k: json.dumps(v, ensure_ascii=False) if isinstance(v, dict | list) else v
            for k, v in row.items()}
