"""Everything a turn decides before it executes anything.

Pending clarification, follow-up resolution, selection and normalization. The evaluation
runs exactly this, so what it measures is what users get.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from docassist.core import intents
from docassist.core.followup import (
    Resolution,
    Subject,
    SubjectVocabulary,
    is_follow_up,
    resolve_follow_up,
    resolve_with_subject,
)
from docassist.core.i18n import Language
from docassist.core.limits import MAX_CLARIFICATIONS_WITHOUT_PROGRESS
from docassist.core.ports import Catalog, SelectorModel
from docassist.core.selection import (
    Decision,
    Selection,
    SelectionRequest,
    StateSummary,
    normalize,
    propose_action,
)
from docassist.core.state import ConversationState, MissingField, PendingClarification

NEW_REQUEST_MIN_WORDS = 4
"""A reply to a clarification with at least this many words (or a `?`) is a new request."""


@dataclass
class Plan:
    """What the turn will do, and why."""

    message: str
    decision: Decision
    resolution: Resolution
    selection: Selection | None = None
    missing_field: MissingField | None = None
    options: list[Subject] = field(default_factory=list)
    clarification_attempts: int = 1
    unknown_document_ids: list[str] = field(default_factory=list)
    request: SelectionRequest | None = None
    """What the selector was asked; a shadow selector is asked the same."""

    @property
    def handoff(self) -> bool:
        return self.decision.status == "clarification_needed" and (
            self.clarification_attempts > MAX_CLARIFICATIONS_WITHOUT_PROGRESS
        )


def state_summary(message: str, state: ConversationState, catalog: Catalog) -> StateSummary:
    tokens = intents.document_id_tokens(message)
    known = [token for token in tokens if catalog.document(token) is not None]
    pending = state.pending_clarification
    return StateSummary(
        has_last_sources=state.has_last_sources,
        known_document_ids_in_message=known,
        unknown_document_ids_in_message=[token for token in tokens if token not in known],
        pending_clarification=pending.missing_field if pending else None,
    )


def is_request_without_subject(message: str) -> bool:
    """Requests the follow-up resolver leaves alone: they need no subject from history."""
    return (
        intents.is_injection(message)
        or intents.is_sources_request(message)
        or intents.is_metadata_request(message)
        or intents.is_only_document_id(message)
        or intents.is_action_request(message)
        or intents.is_unsupported_request(message)
        or intents.is_greeting(message)
    )


def missing_field_for(message: str) -> MissingField:
    """Which piece a clarification asks for, derived by code from the message."""
    if intents.is_sources_request(message):
        return "last_sources"
    if (intents.is_metadata_request(message) or intents.document_id_tokens(message)
            or intents.mentions_path(message)):
        return "document_id"
    return "subject"


def is_new_request(reply: str, vocabulary: SubjectVocabulary) -> bool:
    """A complete message of its own rather than a fragment answering our question."""
    if is_request_without_subject(reply):
        return True
    if is_follow_up(reply, vocabulary):
        return False
    return reply.rstrip().endswith("?") or len(intents.words(reply)) >= NEW_REQUEST_MIN_WORDS


def plan_turn(
    message: str,
    state: ConversationState,
    *,
    catalog: Catalog,
    selector: SelectorModel,
    tool_specs: list[dict[str, Any]],
    language: Language,
) -> Plan:
    """Decide the turn: complete a pending clarification, resolve, select, normalize.

    Raises `ModelError` when the selector's backend is down (the caller hands off).
    """
    vocabulary = SubjectVocabulary.from_catalog(catalog.documents())
    pending = state.pending_clarification
    effective = message
    resolution: Resolution | None = None
    if pending is not None:
        completed = _complete_pending(pending, message, vocabulary, catalog, language)
        if completed is not None:
            effective, resolution = completed
        elif not is_new_request(message, vocabulary):
            # No progress: ask the same question again, or hand off after too many.
            decision = Decision(status="clarification_needed", reason="no_progress",
                                decided_by="pending")
            return Plan(
                message=pending.original_message,
                decision=decision,
                resolution=Resolution(message, None, "clarification_needed", reason="no_progress"),
                missing_field=pending.missing_field,
                options=[s for s in vocabulary.subjects if s.key in pending.options],
                clarification_attempts=pending.attempts + 1,
            )
    if resolution is None:
        if is_request_without_subject(effective):
            resolution = Resolution(effective, effective)
        else:
            resolution = resolve_follow_up(effective, state.history, vocabulary, language)
    if resolution.status == "clarification_needed":
        return _count_repeats(Plan(
            message=effective,
            decision=Decision(status="clarification_needed", reason=resolution.reason,
                              decided_by="resolver"),
            resolution=resolution,
            missing_field="subject",
            options=resolution.options,
        ), pending)
    summary = state_summary(effective, state, catalog)
    request = SelectionRequest(
        message=effective,
        standalone_question=resolution.standalone_question or effective,
        history=state.history,
        state_summary=summary,
        tool_specs=tool_specs,
        language=language,
    )
    selection = propose_action(request, selector)
    decision = guard(normalize(selection), effective)
    if message not in (effective, resolution.original_question):
        decision.decided_by = "pending"  # the original request, completed by this reply
    plan = Plan(message=effective, decision=decision, resolution=resolution,
                selection=selection, request=request,
                unknown_document_ids=summary.unknown_document_ids_in_message)
    if decision.status == "clarification_needed":
        plan.missing_field = missing_field_for(effective)
    return _count_repeats(plan, pending)


def guard(decision: Decision, message: str) -> Decision:
    """The checks around any selector, model or rules: an instruction to drop the rules,
    change role or reveal the prompt is refused as a whole, whatever was proposed."""
    if intents.is_injection(message) and decision.status != "rejected":
        return Decision(status="rejected", reason="injection", decided_by="validation")
    return decision


def _count_repeats(plan: Plan, pending: PendingClarification | None) -> Plan:
    """Asking for the same missing piece again is no progress, even from a new message
    (an unknown id after "which document?"), so it counts towards the handoff."""
    if (pending is not None and plan.decision.status == "clarification_needed"
            and plan.missing_field == pending.missing_field):
        plan.clarification_attempts = pending.attempts + 1
    return plan


def _complete_pending(
    pending: PendingClarification,
    reply: str,
    vocabulary: SubjectVocabulary,
    catalog: Catalog,
    language: Language,
) -> tuple[str, Resolution | None] | None:
    """The original request completed by the reply, or None when the reply lacks the piece."""
    if pending.missing_field == "subject":
        subjects = vocabulary.find(reply)
        # "usługa docassist-api", "I mean the database": one subject and not a new question.
        if (len(subjects) == 1 and not reply.rstrip().endswith("?")
                and not is_request_without_subject(reply)):
            original = pending.original_message
            return original, resolve_with_subject(original, subjects[0], language)
        return None
    if pending.missing_field == "document_id":
        known = [token for token in intents.document_id_tokens(reply)
                 if catalog.document(token) is not None]
        if known and not is_new_request(reply.replace(known[0], ""), vocabulary):
            return f"{pending.original_message} {known[0]}", None
        return None
    return None
