"""Conversation state: what one thread remembers between turns."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from docassist.core.documents import hash_of_chunk, own_version
from docassist.core.limits import MAX_HISTORY_TURNS, MAX_TURN_LOG
from docassist.core.scopes import Audience
from docassist.core.statuses import AnswerStatus, DecisionStatus, Language, ToolStatus, TurnStatus

Role = Literal["user", "assistant"]
MissingField = Literal["subject", "document_id", "last_sources"]


class HistoryMessage(BaseModel):
    model_config = ConfigDict(extra="ignore")

    role: Role
    content: str


class Source(BaseModel):
    """One retrieved chunk as shown to users and stored with a RAG result."""

    model_config = ConfigDict(extra="forbid")

    chunk_id: str
    document_id: str
    title: str
    version: str
    section: str
    score: float
    snippet: str
    url: str | None = None
    indexed_at: str | None = None
    """When the cited version was indexed (the version names what, this says when)."""
    collection: str | None = None
    """The collection the version was in when it was retrieved: a note about its removal is
    posted only where that collection may still be seen (core/stale.py); None in threads
    answered before it was kept."""

    @property
    def own_version(self) -> str | None:
        """The document's declared version; None when `version` is its content hash."""
        return own_version(self.version, hash_of_chunk(self.chunk_id))

    def label(self) -> str:
        """`Title v1.2 — Section` as chat shows a source (no version when it has none)."""
        version = f" v{self.own_version}" if self.own_version else ""
        return f"{self.title}{version} — {self.section}"


class RagResult(BaseModel):
    """One run of `answer_from_documents`: the evidence a later "show sources" refers to."""

    model_config = ConfigDict(extra="forbid")

    rag_id: str
    status: AnswerStatus
    answer: str
    sources: list[Source]
    retrieved_chunk_ids: list[str]
    closest_document_ids: list[str] = Field(default_factory=list)
    """The nearest documents, also when none scored above the threshold (gaps)."""
    warnings: list[str] = Field(default_factory=list)
    retriever: str
    top_k: int
    similarity_threshold: float | None


class PendingClarification(BaseModel):
    """A question DocAssist asked and is waiting to have answered."""

    model_config = ConfigDict(extra="forbid")

    missing_field: MissingField
    original_message: str
    language: Language
    attempts: int = 1
    options: list[str] = Field(default_factory=list)
    result_id: str | None = None
    """The result that asked: a clicked choice answers this question only (None in states
    saved before choices existed, whose buttons are then stale)."""


class TurnSummary(BaseModel):
    model_config = ConfigDict(extra="forbid")

    turn_id: int
    result_id: str
    status: TurnStatus
    decision_status: DecisionStatus | None
    tool_status: ToolStatus | None
    source_ids: list[str]


class ConversationState(BaseModel):
    """Everything a thread keeps; saved atomically at the end of every turn."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    history: list[HistoryMessage] = Field(default_factory=list)
    last_result: RagResult | None = None
    last_sources: list[Source] = Field(default_factory=list)
    last_source_turn_id: int | None = None
    last_source_result_id: str | None = None
    pending_clarification: PendingClarification | None = None
    language: Literal["pl", "en"] | None = None
    """The thread's language: kept by a message that does not tell (an id, "ok", a
    command), switched by one clearly written in the other (None: not known yet)."""
    generation: int = 0
    next_turn_id: int = 1
    turn_log: list[TurnSummary] = Field(default_factory=list)
    audience: Audience | None = None
    """Who read the thread's latest turn: a note about a document it cited names the
    document only if this audience may still see it (issue 22)."""
    shared_outside: bool = False
    """A message of this thread came from a channel shared with another organization: a
    later event that cannot tell (a button press) is treated as shared too (issue 22)."""
    _tool_attempted: bool = PrivateAttr(default=False)
    """Per turn, so never saved: set by the tool executor, reset by `begin_turn`."""

    @model_validator(mode="before")
    @classmethod
    def _drop_saved_turn_flag(cls, data: Any) -> Any:
        # Rows saved before the per-turn flag left the saved state still carry it.
        if isinstance(data, dict) and "tool_attempted_this_turn" in data:
            data = {k: v for k, v in data.items() if k != "tool_attempted_this_turn"}
        return data

    @property
    def tool_attempted_this_turn(self) -> bool:
        return self._tool_attempted

    def mark_tool_attempted(self) -> None:
        self._tool_attempted = True

    @property
    def has_last_sources(self) -> bool:
        """True when the last RAG of this thread left sources to show."""
        return self.last_result is not None and bool(self.last_sources)

    def begin_turn(self) -> int:
        """Start a turn: reset the per-turn attempt flag, return the new turn id."""
        self._tool_attempted = False
        return self.next_turn_id

    def cleared(self) -> ConversationState:
        """A fresh state for the same thread under the next generation."""
        return ConversationState(generation=self.generation + 1,
                                 shared_outside=self.shared_outside)

    def remember_exchange(self, user_text: str, assistant_text: str) -> None:
        self.history = recent_history(
            [
                *self.history,
                HistoryMessage(role="user", content=user_text),
                HistoryMessage(role="assistant", content=assistant_text),
            ]
        )

    def log_turn(self, summary: TurnSummary) -> None:
        self.turn_log = [*self.turn_log, summary][-MAX_TURN_LOG:]
        self.next_turn_id = summary.turn_id + 1


def recent_history(
    messages: list[HistoryMessage], max_turns: int = MAX_HISTORY_TURNS
) -> list[HistoryMessage]:
    """Copies of the last `max_turns` exchanges (user/assistant messages only)."""
    if max_turns <= 0:
        return []
    kept = [message for message in messages if message.role in ("user", "assistant")]
    return [message.model_copy() for message in kept[-2 * max_turns :]]
