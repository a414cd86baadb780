"""Every status, kind and language code of DocAssist, defined once (a leaf: imports nothing).

The core decides with these types, the trace rows and the inbox rows carry them, and the
renderers (Slack, Teams, terminal) read them from here, so a status added or renamed is
one edit that mypy follows everywhere; `tests/test_architecture.py` refuses a renderer
that spells out its own set.
"""

from __future__ import annotations

from typing import Final, Literal

Language = Literal["pl", "en"]
LANGUAGES: Final[tuple[Language, ...]] = ("pl", "en")

TurnStatus = Literal[
    "answered",
    "no_answer",
    "clarification_needed",
    "rejected",
    "no_suitable_tool",
    "sources_shown",
    "metadata_shown",
    "handoff",
    "parse_error",
    "tool_error",
    "empty_message",
    "message_too_long",
    "invalid_message",
    "cleared",
    "storage_unavailable",
]
AnswerStatus = Literal["answered", "no_answer"]
"""A turn that ran retrieval: the ones a user can vote on."""
ANSWER_STATUSES: Final[frozenset[TurnStatus]] = frozenset({"answered", "no_answer"})
NOTHING_TO_ACT_ON: Final[frozenset[TurnStatus]] = frozenset({"cleared", "storage_unavailable"})
"""Turns after which the renderers offer no buttons (no sources, no thread to clear)."""

GAP_STATUSES: Final[frozenset[TurnStatus]] = frozenset({"no_answer", "handoff"})
"""Turns that are gaps by themselves (a 👎 or an escalation makes any answer one)."""
QUESTION_STATUSES: Final[frozenset[TurnStatus]] = frozenset({"answered", "no_answer", "handoff"})
"""Turns whose question is kept as an embedding for `docassist gaps` (an answer may get a 👎
later, when its text is long gone)."""
GapKind = Literal["no_answer", "handoff", "thumbs_down", "escalation"]

ModelDecision = Literal["tool_call", "clarification_needed", "no_suitable_tool", "rejected"]
DecisionStatus = Literal[
    "action_proposed", "clarification_needed", "no_suitable_tool", "rejected", "parse_error",
    "handoff",  # decided by code (the model is unreachable), never a normalized proposal
]
DecidedBy = Literal["selector", "resolver", "command", "pending", "handoff", "validation"]

ToolStatus = Literal[
    "unknown_tool",
    "invalid_arguments",
    "clarification_needed",
    "tool_completed",
    "tool_error",
    "tool_rejected",
]

ResolutionStatus = Literal["unchanged", "resolved", "clarification_needed"]

InboxStatus = Literal["pending", "answered", "done", "failed"]
Verdict = Literal["duplicate", "refused", "admitted"]
"""What admission did with an arriving event."""

MessageProblem = Literal["empty_message", "message_too_long", "invalid_message"]
NoticeKind = Literal["external_user", "rate_limited", "attachments_only", "attachments_ignored"]


def language_of(value: str) -> Language:
    """A language code read from outside (a row, a setting): Polish or else English."""
    return "pl" if value == "pl" else "en"
