"""Erasing user text: an answered inbox event keeps ids and hashes only, and a purge removes
every stored copy of user text older than a cutoff.

Where user text lives (docs/traces-and-privacy.md): the inbox (`message`: the event as
received, with the raw text and user id; `result`: the reply, which repeats the question),
the conversation state (`history`, the last exchanges follow-ups need, and a pending clarification's
message), the traces (`turns.raw` only with `save_raw`; hashes otherwise), the shadow
records, and a 👎's own words (`feedback.reason_text`, only with `save_raw`; purged with
the vote). The SQL helpers here run inside the Store's transactions; the Store turns on
`secure_delete`, so what they delete or overwrite is zeroed in the file, not only unlinked.
"""

from __future__ import annotations

import json
from typing import Any, Protocol

from pydantic import BaseModel

from docassist.core.scopes import hashed_user, is_hashed_user
from docassist.core.state import ConversationState
from docassist.core.trace import sha256_text


class Executes(Protocol):
    """A connection taking `?` placeholders: sqlite3's, or the PostgreSQL store's adapter
    (postgres/connection.py: Qmark). The SQL here is plain enough for both."""

    def execute(self, sql: str, parameters: Any = ..., /) -> Any: ...


class Erasure(BaseModel):
    """What one purge removed."""

    turns: int = 0
    tool_calls: int = 0
    shadow_decisions: int = 0
    feedback: int = 0
    escalations: int = 0
    question_vectors: int = 0
    shares: int = 0
    inbox_events: int = 0
    conversations_emptied: int = 0


def redacted_message(message_json: str) -> str:
    """An inbox event as ids and hashes: the conversation key, the event id, what kind of
    message it was, and SHA-256 hashes of the user id and the text (the traces' hashes)."""
    message: dict[str, Any] = json.loads(message_json)
    text = message.get("text")
    return json.dumps({
        "redacted": True,
        "key": message.get("key"),
        "event_id": message.get("event_id"),
        "command": message.get("command"),
        "notice": message.get("notice"),  # a kind, a language and a wait: no user text
        "received_at": message.get("received_at"),
        "user_sha256": sha256_text(str(message.get("user", ""))),
        "text_sha256": sha256_text(text) if isinstance(text, str) else None,
    })


def redact_inbox_event(connection: Executes, inbox_id: int) -> None:
    """Drop the raw text, user id, reply address and stored reply of a finished event."""
    row = connection.execute("SELECT message FROM inbox WHERE id = ?", [inbox_id]).fetchone()
    if row is None or row[0] is None:
        return
    connection.execute("UPDATE inbox SET message = ?, result = NULL WHERE id = ?",
                       [redacted_message(row[0]), inbox_id])


def erase_before(connection: Executes, cutoff: str, now: str) -> Erasure:
    """Delete every copy of user text written before `cutoff` (ISO UTC text, as stored).

    Traces and what hangs on them (tool attempts, shadow records, votes) older than the
    cutoff go; inbox events received before it go, whatever their status (an event still
    unanswered then is dropped: its text is what the purge asked to erase); a conversation
    idle since the cutoff restarts empty under its next generation, and its version moves
    on, so a turn that loaded the old history cannot save it back.
    """
    erased = Erasure()
    erased.tool_calls = _delete(connection, "tool_calls", cutoff)
    erased.shadow_decisions = _delete(connection, "shadow_decisions", cutoff)
    erased.feedback = _delete(connection, "feedback", cutoff)
    erased.escalations = _delete(connection, "escalations", cutoff)
    erased.question_vectors = _delete(connection, "question_vectors", cutoff)
    erased.shares = _delete(connection, "shares", cutoff)
    erased.turns = _delete(connection, "turns", cutoff)
    erased.inbox_events = connection.execute(
        "DELETE FROM inbox WHERE received_at < ?", [cutoff]).rowcount
    idle = [(conversation_id, state) for conversation_id, state in connection.execute(
        "SELECT conversation_id, state FROM conversations WHERE updated_at < ?", [cutoff])
        if _holds_text(ConversationState.model_validate_json(state))]
    for conversation_id, state in idle:
        fresh = ConversationState.model_validate_json(state).cleared()
        connection.execute(
            "UPDATE conversations SET state = ?, generation = ?, version = version + 1, "
            "updated_at = ? WHERE conversation_id = ?",
            [fresh.model_dump_json(), fresh.generation, now, conversation_id])
    erased.conversations_emptied = len(idle)
    return erased


def _holds_text(state: ConversationState) -> bool:
    return bool(state.history or state.pending_clarification or state.last_result)


def _delete(connection: Executes, table: str, cutoff: str) -> int:
    """Rows of `table` written before the cutoff, or belonging to a turn that was."""
    return int(connection.execute(
        f"DELETE FROM {table} WHERE created_at < ? OR result_id IN "
        "(SELECT result_id FROM turns WHERE created_at < ?)", [cutoff, cutoff]).rowcount)


def hash_saved_users(connection: Executes) -> int:
    """Conversation states saved before their audience kept the user as a hash (issue 39):
    the raw platform user id becomes its hash (Audience.kept); returns the rows changed."""
    changed = 0
    for conversation_id, state in connection.execute(
            "SELECT conversation_id, state FROM conversations").fetchall():
        data = json.loads(state)
        audience = data.get("audience") or {}
        user = audience.get("user")
        if not isinstance(user, str) or is_hashed_user(user):
            continue
        audience["user"] = hashed_user(user)
        connection.execute("UPDATE conversations SET state = ? WHERE conversation_id = ?",
                           [json.dumps(data), conversation_id])
        changed += 1
    return changed
