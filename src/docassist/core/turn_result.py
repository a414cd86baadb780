"""From what a turn learnt to what it leaves: the result adapters render, and the state the
conversation keeps for its next turn. Both are saved by the turn's one commit."""

from __future__ import annotations

import time
import uuid

from docassist.core.errors import StorageUnavailableError
from docassist.core.messages import ChatMessage
from docassist.core.planning import Plan
from docassist.core.replies import Reply, storage_problem_text
from docassist.core.results import ConversationView, DecisionView, ToolView, TurnResult
from docassist.core.state import ConversationState, PendingClarification, TurnSummary
from docassist.core.statuses import Language
from docassist.core.tools import ToolOutcome
from docassist.core.tracing import Backends
from docassist.core.turn_context import TurnContext


def turn_result(turn: TurnContext, reply: Reply, *, catalog_version: str,
                backends: Backends) -> TurnResult:
    """The result of the turn as adapters render it (and the inbox stores)."""
    rag = turn.rag
    return TurnResult(
        result_id=turn.result_id,
        conversation_id=turn.message.key.conversation_id,
        generation=turn.state.generation,
        turn_id=turn.turn_id,
        status=reply.status,
        answer=reply.answer,
        language=turn.language,
        sources=reply.sources if reply.sources is not None else (rag.sources if rag else []),
        source_turn_id=reply.source_turn_id,
        metadata=reply.metadata,
        clarification=reply.clarification,
        decision=_decision_view(turn.plan),
        tool=_tool_view(turn.outcome),
        conversation=_conversation_view(turn.plan, turn.text),
        warnings=list(rag.warnings) if rag else [],
        duration_ms=round((time.perf_counter() - turn.started) * 1000, 3),
        catalog_version=catalog_version,
        backend=backends.selector_backend,
        model=backends.selector_model,
    )


def unsaved_result(message: ChatMessage, error: StorageUnavailableError, *, language: Language,
                   catalog_version: str, backends: Backends) -> TurnResult:
    """The result of a turn the database could not take: no turn was recorded."""
    return TurnResult(
        result_id=uuid.uuid4().hex[:16],
        conversation_id=message.key.conversation_id,
        generation=0,
        turn_id=0,  # no turn was recorded
        status="storage_unavailable",
        answer=storage_problem_text(error, language),
        language=language,
        catalog_version=catalog_version,
        backend=backends.selector_backend,
        model=backends.selector_model,
    )


def next_state(turn: TurnContext, reply: Reply, result: TurnResult) -> ConversationState:
    """The state the turn leaves: its RAG, its pending question, its exchange and summary."""
    state, plan = turn.state, turn.plan
    state.language = turn.language  # what this turn was answered in: the thread's now
    if turn.rag is not None:
        # A new RAG replaces the previous one, also when it found nothing.
        state.last_result = turn.rag
        state.last_sources = list(turn.rag.sources)
        state.last_source_turn_id = turn.turn_id
        state.last_source_result_id = turn.result_id
    clarification = reply.clarification
    if clarification is not None and plan is not None:
        state.pending_clarification = PendingClarification(
            missing_field=clarification.missing_field,
            original_message=plan.message,
            language=turn.language,
            attempts=clarification.attempts,
            options=[subject.key for subject in plan.options],
            result_id=turn.result_id,
        )
    elif reply.remember:
        state.pending_clarification = None
    if reply.remember and turn.text is not None:
        state.remember_exchange(turn.text, reply.answer)
    state.log_turn(TurnSummary(
        turn_id=turn.turn_id,
        result_id=turn.result_id,
        status=result.status,
        decision_status=result.decision.status,
        tool_status=result.tool.status,
        source_ids=[source.chunk_id for source in result.sources],
    ))
    if not reply.clear:
        return state
    fresh = state.cleared()  # `clear` forgets what was said, not the language it was in
    fresh.language = state.language
    return fresh


def _decision_view(plan: Plan | None) -> DecisionView:
    if plan is None:
        return DecisionView()
    decision = plan.decision
    return DecisionView(status=decision.status, reason=decision.reason, action=decision.action,
                        arguments=decision.arguments, decided_by=decision.decided_by)


def _tool_view(outcome: ToolOutcome | None) -> ToolView:
    if outcome is None:
        return ToolView()
    return ToolView(name=outcome.name, status=outcome.status, error_code=outcome.error_code,
                    duration_ms=outcome.duration_ms, attempts=1)


def _conversation_view(plan: Plan | None, text: str | None) -> ConversationView:
    if plan is None:
        return ConversationView(original_question=text)
    resolution = plan.resolution
    return ConversationView(
        original_question=text,
        standalone_question=resolution.standalone_question,
        resolution_status=resolution.status,
        history_used=resolution.history_used,
    )
