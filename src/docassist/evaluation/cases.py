"""A labelled decision case and what a selector made of it."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from docassist.core.state import HistoryMessage


class CaseState(BaseModel):
    model_config = ConfigDict(extra="ignore")

    has_last_sources: bool = False


class Expected(BaseModel):
    model_config = ConfigDict(extra="ignore")

    status: str
    action: str | None = None
    arguments: dict[str, Any] | None = None
    arguments_contains: dict[str, str] | None = None


class DecisionCase(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: str
    message: Any
    history: list[HistoryMessage] = Field(default_factory=list)
    state: CaseState = Field(default_factory=CaseState)
    expected: Expected
    language: str | None = None
    kind: str | None = None
    split: str | None = None
    """Held-out sets mark `tune` and `test`; `eval decisions --split test` reports one."""


class Got(BaseModel):
    status: str
    action: str | None = None
    arguments: dict[str, Any] = Field(default_factory=dict)


class CaseResult(BaseModel):
    id: str
    expected: Expected
    got: Got
    ok: bool
    language: str | None = None
    kind: str | None = None
