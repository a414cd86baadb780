"""The result of one turn, as adapters render it and `ask --json` prints it."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from docassist.core.state import Source
from docassist.core.statuses import (
    DecidedBy,
    DecisionStatus,
    Language,
    ResolutionStatus,
    ToolStatus,
    TurnStatus,
)


class DecisionView(BaseModel):
    model_config = ConfigDict(extra="forbid")

    status: DecisionStatus | None = None
    reason: str | None = None
    action: str | None = None
    arguments: dict[str, Any] = Field(default_factory=dict)
    decided_by: DecidedBy | None = None


class ToolView(BaseModel):
    """The turn's tool attempt; `status` is None when no tool ran."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = None
    status: ToolStatus | None = None
    error_code: str | None = None
    duration_ms: float | None = None
    attempts: int = 0


class ConversationView(BaseModel):
    model_config = ConfigDict(extra="forbid")

    original_question: str | None = None
    standalone_question: str | None = None
    resolution_status: ResolutionStatus | None = None
    history_used: bool = False


class Choice(BaseModel):
    """A candidate answer to a clarification: a button shows `label`; a click sends `reply`,
    the words a user would type for it (a subject's name, a document id)."""

    model_config = ConfigDict(extra="forbid")

    label: str
    reply: str


class Clarification(BaseModel):
    model_config = ConfigDict(extra="forbid")

    missing_field: str
    options: list[str] = Field(default_factory=list)
    attempts: int = 1
    choices: list[Choice] = Field(default_factory=list)
    """The candidates as buttons (Slack) or card actions (Teams); empty when there are none."""


class TurnResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    result_id: str
    conversation_id: str
    generation: int
    turn_id: int
    status: TurnStatus
    answer: str
    language: Language
    sources: list[Source] = Field(default_factory=list)
    source_turn_id: int | None = None
    metadata: dict[str, Any] | None = None
    clarification: Clarification | None = None
    decision: DecisionView = Field(default_factory=DecisionView)
    tool: ToolView = Field(default_factory=ToolView)
    conversation: ConversationView = Field(default_factory=ConversationView)
    warnings: list[str] = Field(default_factory=list)
    duration_ms: float = 0.0
    catalog_version: str = ""
    backend: str = ""
    model: str = ""
