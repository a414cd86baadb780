"""Trace rows: one per turn (assistant trace) and one per tool attempt (tool trace).

No user-written or generated text unless `save_raw` is on: text is stored as SHA-256.
"""

from __future__ import annotations

import hashlib
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from docassist.core.statuses import (
    DecidedBy,
    DecisionStatus,
    Language,
    ResolutionStatus,
    ToolStatus,
    TurnStatus,
)


def sha256_text(value: str | None) -> str | None:
    return None if value is None else hashlib.sha256(value.encode("utf-8")).hexdigest()


class TurnRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    result_id: str
    conversation_id: str
    generation: int
    turn_id: int
    platform: str
    created_at: str
    status: TurnStatus
    decision_status: DecisionStatus | None
    decision_reason: str | None
    decided_by: DecidedBy | None
    action: str | None
    tool_name: str | None
    tool_status: ToolStatus | None
    error_code: str | None
    language: Language
    question_sha256: str | None
    standalone_sha256: str | None
    answer_sha256: str | None
    resolution_status: ResolutionStatus | None
    history_used: bool
    source_ids: list[str]
    source_turn_id: int | None
    warnings: list[str]
    duration_ms: float
    backend: str
    model: str
    answer_backend: str | None = None
    retriever: str | None = None
    audience: str | None = None
    """Who could read the reply: operator, private:PLATFORM, channel:…, shared:… (issue 22)."""
    collections: list[str] | None = None
    """The collections the turn could search."""
    catalog_version: str
    prompt_sha256: str | None
    user_sha256: str | None
    event_id: str | None
    raw: dict[str, Any] | None = Field(default=None, description="Only with save_raw on")


class ToolCallRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    result_id: str
    conversation_id: str
    generation: int
    turn_id: int
    attempt: int
    tool_name: str | None
    status: ToolStatus
    error_code: str | None
    arguments: dict[str, Any]
    duration_ms: float
    created_at: str
    catalog_version: str


class ShadowRecord(BaseModel):
    """What a candidate selector proposed beside the active one: recorded, never executed."""

    model_config = ConfigDict(extra="forbid")

    result_id: str
    conversation_id: str
    turn_id: int
    created_at: str
    active_backend: str
    active_model: str
    active_status: DecisionStatus
    active_action: str | None
    candidate_backend: str
    candidate_model: str
    candidate_status: DecisionStatus
    candidate_action: str | None
    agree: bool
    candidate_error: str | None = None
    catalog_version: str
