"""The SQLite store's conversations: loading a state, turn commits (optimistic versions,
event dedupe, in a write it may share), arrivals claimed once, the turn rows read in their
order, the latest run of an evaluation kind, and the purge (mixed into Store;
postgres/conversations.py is its twin). What both write alike is in trace_rows.py and
feedback_rows.py."""

from __future__ import annotations

import json
import sqlite3
import threading
from contextlib import AbstractContextManager
from typing import Any, Protocol

from sqlite_utils import Database

from docassist.core.errors import ConcurrentUpdateError, DuplicateEventError
from docassist.core.messages import ConversationKey
from docassist.core.ports import StoredConversation
from docassist.core.results import TurnResult
from docassist.core.state import ConversationState
from docassist.core.trace import ToolCallRecord, TurnRecord
from docassist.storage.connection import insert_row, now_iso, upsert_row
from docassist.storage.privacy import Erasure, erase_before
from docassist.storage.shared_writes import SharesWrites


class _StoreParts(SharesWrites, Protocol):
    db: Database
    _lock: threading.RLock

    def _reading(self) -> AbstractContextManager[sqlite3.Connection]: ...

    def _transaction(self) -> AbstractContextManager[sqlite3.Connection]: ...


class ConversationRows:
    """Conversation states, turn commits and the purge (mixed into Store)."""

    def load(self: _StoreParts, key: ConversationKey) -> StoredConversation:
        with self._reading() as connection:
            row = connection.execute(
                "SELECT state, version FROM conversations WHERE conversation_id = ?",
                [key.conversation_id]).fetchone()
        if row is None:
            return StoredConversation(ConversationState(), 0)
        return StoredConversation(ConversationState.model_validate_json(row[0]), int(row[1]))

    def commit_turn(
        self: _StoreParts,
        key: ConversationKey,
        state: ConversationState,
        expected_version: int,
        turn: TurnRecord,
        tool_calls: list[ToolCallRecord],
        result: TurnResult | None = None,
    ) -> int:
        updated_at = now_iso()
        state_json = state.model_dump_json()
        turn_row = _json_columns(turn.model_dump())
        call_rows = [_json_columns(call.model_dump()) for call in tool_calls]
        result_json = result.model_dump_json() if result is not None else None

        def write(connection: sqlite3.Connection) -> int:
            row = connection.execute(
                "SELECT version FROM conversations WHERE conversation_id = ?",
                [key.conversation_id]).fetchone()
            current = int(row[0]) if row else 0
            if current != expected_version:
                raise ConcurrentUpdateError(
                    f"conversation {key.conversation_id} is at version {current}, "
                    f"expected {expected_version}")
            new_version = current + 1
            upsert_row(connection, "conversations", {
                "conversation_id": key.conversation_id,
                **key.model_dump(),
                "state": state_json,
                "version": new_version,
                "generation": state.generation,
                "updated_at": updated_at,
            })
            if turn.event_id:
                try:
                    insert_row(connection, "processed_events", {
                        "platform": turn.platform, "event_id": turn.event_id,
                        "conversation_id": key.conversation_id, "created_at": now_iso()})
                except sqlite3.IntegrityError as error:
                    raise DuplicateEventError(
                        f"event {turn.platform}/{turn.event_id} was already answered") from error
            insert_row(connection, "turns", turn_row)
            for call_row in call_rows:
                insert_row(connection, "tool_calls", call_row)
            if result_json is not None and turn.event_id:  # see ConversationStore.commit_turn
                connection.execute(
                    "UPDATE inbox SET status = 'answered', result = ? WHERE platform = ? "
                    "AND event_id = ? AND status = 'pending'",
                    [result_json, turn.platform, turn.event_id])
            return new_version

        return self._shared_write(write)

    def claim_arrival(self: _StoreParts, platform: str, arrival_id: str) -> bool:
        """True for the first delivery of a request that is not a turn (a slash command by
        its trigger id); a replay finds it taken."""
        with self._transaction() as connection:
            try:
                insert_row(connection, "processed_events", {
                    "platform": platform, "event_id": arrival_id, "conversation_id": "",
                    "created_at": now_iso()})
            except sqlite3.IntegrityError:
                return False
        return True

    def turns(self: _StoreParts, conversation_id: str | None = None, since: str | None = None,
              until: str | None = None) -> list[dict[str, Any]]:
        """Assistant-trace rows, oldest first; optionally of one conversation, and created at
        or after `since` and before `until` (ISO UTC text, as stored)."""
        conditions: list[str] = []
        params: list[str] = []
        for condition, value in (("conversation_id = ?", conversation_id),
                                 ("created_at >= ?", since), ("created_at < ?", until)):
            if value is not None:
                conditions.append(condition)
                params.append(value)
        where = f"WHERE {' AND '.join(conditions)}" if conditions else ""
        with self._lock:
            return list(self.db.query(
                f"SELECT * FROM turns {where} ORDER BY created_at, rowid", params))

    def latest_eval_run(self: _StoreParts, kind: str) -> dict[str, Any] | None:
        with self._lock:
            rows = list(self.db.query("SELECT * FROM eval_runs WHERE kind = ? "
                                      "ORDER BY created_at DESC, rowid DESC LIMIT 1", [kind]))
        return rows[0] if rows else None

    def erase_before(self: _StoreParts, cutoff: str) -> Erasure:
        """Every stored copy of user text written before `cutoff` (see privacy.py); then the
        WAL is checkpointed and truncated, so no older page version keeps it either (a
        reader in another process may hold the checkpoint back until the next one)."""
        with self._transaction() as connection:
            erased = erase_before(connection, cutoff, now_iso())
        with self._lock:
            self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return erased

def _json_columns(row: dict[str, Any]) -> dict[str, Any]:
    return {k: json.dumps(v, ensure_ascii=False) if isinstance(v, dict | list) else v
            for k, v in row.items()}
