"""The store protocols a turn and its readers speak to: conversations (load, commit), the
trace (turns, tool calls, shadow proposals, questions), feedback and lookups by result."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from docassist.core.feedback import FeedbackReason
from docassist.core.messages import ConversationKey
from docassist.core.results import TurnResult
from docassist.core.state import ConversationState
from docassist.core.trace import ShadowRecord, ToolCallRecord, TurnRecord


@dataclass(frozen=True)
class StoredConversation:
    state: ConversationState
    version: int


class ConversationStore(Protocol):
    def load(self, key: ConversationKey) -> StoredConversation:
        """A state of the caller's own (each call parses a fresh one): a turn changes it in
        place, and the stored state changes only through `commit_turn`."""
        ...

    def commit_turn(
        self,
        key: ConversationKey,
        state: ConversationState,
        expected_version: int,
        turn: TurnRecord,
        tool_calls: list[ToolCallRecord],
        result: TurnResult | None = None,
    ) -> int:
        """Save state, trace rows and the turn's event id in one transaction; return the new
        version. A crash before it leaves nothing, so a resumed event runs again.

        With `result`, a durable-inbox event with the turn's event id is marked answered
        (with the result to deliver) in the same transaction: a crash right after the commit
        cannot leave a committed turn whose answer is never delivered.

        Raises `ConcurrentUpdateError` when the stored version is not `expected_version`,
        `DuplicateEventError` when the turn's event id was already answered.
        """
        ...

    def event_seen(self, platform: str, event_id: str) -> bool:
        """True when a turn for this platform event id was already committed."""
        ...

    def ensure_writable(self) -> None:
        """Raise `StorageUnavailableError` (busy, read-only, full) when a write would fail
        now; called before a turn acts, and writes nothing."""
        ...


class SeenEvents(Protocol):
    """The ack path's question: is this event (or the same message) stored already?"""

    def inbox_seen(self, platform: str, event_id: str, dedupe_key: str | None) -> bool: ...

    def claim_arrival(self, platform: str, arrival_id: str) -> bool:
        """True for the first delivery of a request that is not a turn (a slash command);
        False for a replay."""
        ...


class ConversationLookup(Protocol):
    """What adapters ask about conversations without loading them."""

    def conversation_known(self, conversation_id: str) -> bool:
        """A committed turn, or a stored event that runs one, in this conversation."""
        ...

    def conversation_of_result(self, result_id: str) -> list[dict[str, Any]]:
        """The key columns (platform, workspace, channel, thread) of a result's turn."""
        ...


class FeedbackLog(Protocol):
    """Votes and "ask a human" requests on answers, by result id."""

    def record_feedback(self, result_id: str, user: str, positive: bool) -> None: ...

    def record_feedback_reason(self, result_id: str, user: str, reason: FeedbackReason,
                               text: str | None) -> None: ...

    def record_escalation(self, result_id: str, user: str) -> bool: ...

    def withdraw_escalation(self, result_id: str) -> None: ...

    def answer_place(self, result_id: str) -> tuple[str, str] | None:
        """The platform and channel an answer was given in (None for an unknown id): a vote
        or "ask a human" names its answer by id and must not reach another channel's."""
        ...


class TraceLog(Protocol):
    """The trace rows as exports and reports read them (dicts keyed by column name)."""

    def turns(self, conversation_id: str | None = None, since: str | None = None,
              until: str | None = None) -> list[dict[str, Any]]: ...

    def tool_calls(self, result_id: str | None = None) -> list[dict[str, Any]]: ...

    def shadow_decisions(self) -> list[dict[str, Any]]: ...

    def feedback(self) -> list[dict[str, Any]]: ...


class ShadowLog(Protocol):
    """Where a shadow selector's proposals go; written after the turn they shadow."""

    def record_shadow(self, record: ShadowRecord) -> None: ...


@dataclass(frozen=True)
class QuestionTrace:
    """What `docassist gaps` keeps of a question: its embedding (no text) and the closest
    documents; the text itself only with save_raw. Purged with the turn's trace."""

    result_id: str
    created_at: str
    embedder: str | None
    vector: npt.NDArray[np.float32] | None
    document_ids: list[str]
    question: str | None = None


class QuestionLog(Protocol):
    """Where the questions of turns go for `docassist gaps`; written after the commit."""

    def record_questions(self, traces: list[QuestionTrace]) -> None:
        """Keep these questions' traces, in one transaction."""
        ...


class GapLog(Protocol):
    """What `docassist gaps` reads: the gap turns of a period with their question traces,
    votes (with a `reason` when stored) and escalations, as rows keyed by column name."""

    def gap_rows(self, since: str) -> list[dict[str, Any]]: ...


class TurnStore(ConversationStore, ShadowLog, Protocol):
    """Everything `TurnEngine` writes: the turn's commit, and the shadow proposals."""

    def stale_note(self, note_id: int) -> dict[str, Any] | None:
        """The note an "Ask again" names (core/stale.py), or None."""
        ...
