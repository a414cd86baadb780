"""The trace rows a finished turn leaves: the turn's row and one row per tool attempt.

Ids and hashes only unless `save_raw` is on: a question, an answer or a user id reaches a
trace row as a sha256, so traces can be kept and exported without user text.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from docassist.core.messages import ConversationKey
from docassist.core.results import TurnResult
from docassist.core.selection import Selection
from docassist.core.tools import ToolOutcome
from docassist.core.trace import ToolCallRecord, TurnRecord, sha256_text
from docassist.core.turn_context import TurnContext


@dataclass(frozen=True)
class Backends:
    """Who decided and who answered, as the turn row names them."""

    selector_backend: str
    selector_model: str
    answer_backend: str
    """`backend:model` of the answerer (only recorded when the turn searched)."""


def turn_record(turn: TurnContext, result: TurnResult, *, backends: Backends,
                collections: list[str], save_raw: bool) -> TurnRecord:
    """The turn's trace row; `collections` are the ones it could search, by name."""
    plan = turn.plan
    selection = plan.selection if plan else None
    standalone = result.conversation.standalone_question
    return TurnRecord(
        result_id=result.result_id,
        conversation_id=result.conversation_id,
        generation=result.generation,
        turn_id=result.turn_id,
        platform=turn.message.key.platform,
        created_at=now(),
        status=result.status,
        decision_status=result.decision.status,
        decision_reason=result.decision.reason,
        decided_by=result.decision.decided_by,
        action=result.decision.action,
        tool_name=result.tool.name,
        tool_status=result.tool.status,
        error_code=result.tool.error_code or _selection_error(selection),
        language=result.language,
        question_sha256=sha256_text(turn.text),
        standalone_sha256=sha256_text(standalone),
        answer_sha256=sha256_text(result.answer),
        resolution_status=result.conversation.resolution_status,
        history_used=result.conversation.history_used,
        source_ids=[source.chunk_id for source in result.sources],
        source_turn_id=result.source_turn_id,
        warnings=result.warnings,
        duration_ms=result.duration_ms,
        backend=backends.selector_backend if selection else "none",
        model=backends.selector_model if selection else "none",
        answer_backend=backends.answer_backend if turn.rag else None,
        retriever=turn.rag.retriever if turn.rag else None,
        audience=(turn.audience or turn.message.audience).label(),
        collections=collections,
        catalog_version=result.catalog_version,
        prompt_sha256=selection.prompt_sha256 if selection else None,
        user_sha256=sha256_text(turn.message.user),
        event_id=turn.message.event_id,
        raw=_raw(turn, result) if save_raw else None,
    )


def _raw(turn: TurnContext, result: TurnResult) -> dict[str, Any]:
    """The words themselves, kept only with `save_raw` (debugging a deployment)."""
    selection = turn.plan.selection if turn.plan else None
    return {
        "user": turn.message.user,
        "question": turn.text,
        "standalone_question": result.conversation.standalone_question,
        "answer": result.answer,
        "prompt": selection.prompt if selection else None,
        "raw_response": selection.raw_response if selection else None,
        "parse_error": selection.parse_error if selection else None,
    }


def tool_call_record(
    outcome: ToolOutcome,
    *,
    attempt: int,
    result_id: str,
    key: ConversationKey,
    generation: int,
    turn_id: int,
    catalog_version: str,
    save_raw: bool,
) -> ToolCallRecord:
    """The tool-trace row of one attempt; every attempt gets one, early returns included."""
    return ToolCallRecord(
        result_id=result_id,
        conversation_id=key.conversation_id,
        generation=generation,
        turn_id=turn_id,
        attempt=attempt,
        tool_name=outcome.name,
        status=outcome.status,
        error_code=outcome.error_code,
        arguments=_private_arguments(outcome.arguments, save_raw),
        duration_ms=outcome.duration_ms,
        created_at=now(),
        catalog_version=catalog_version,
    )


def _selection_error(selection: Selection | None) -> str | None:
    return "parse_error" if selection is not None and selection.parse_error else None


def _private_arguments(arguments: dict[str, Any], save_raw: bool) -> dict[str, Any]:
    """Text arguments become hashes unless raw saving is on; ids and numbers stay."""
    if save_raw:
        return arguments
    private: dict[str, Any] = {}
    for name, value in arguments.items():
        if isinstance(value, str) and name == "question":
            private[name] = {"sha256": sha256_text(value)}
        elif name == "translations" and isinstance(value, list):
            private[name] = [{"sha256": sha256_text(str(text))} for text in value]
        else:
            private[name] = value
    return private


def now() -> str:
    """A trace row's `created_at`: UTC, milliseconds."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")
