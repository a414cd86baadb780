"""Everything a turn decides before it executes anything.

Pending clarification, follow-up resolution, selection and normalization. The evaluation
runs exactly this, so what it measures is what users get.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Final

from docassist.core import intents
from docassist.core.followup import (
    Resolution,
    Subject,
    SubjectVocabulary,
    is_follow_up,
    names_its_topic,
    resolve_follow_up,
    resolve_with_subject,
)
from docassist.core.i18n import Language
from docassist.core.learned import KIND_GROUPS
from docassist.core.limits import MAX_CLARIFICATIONS_WITHOUT_PROGRESS
from docassist.core.ports import Catalog, FollowUp, SelectorModel
from docassist.core.selection import (
    Decision,
    Selection,
    SelectionRequest,
    StateSummary,
    normalize,
    propose_action,
)
from docassist.core.state import ConversationState, MissingField, PendingClarification
from docassist.core.subjects import named_subject
from docassist.core.text import stems

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


def state_summary(message: str, state: ConversationState, catalog: Catalog,
                  follow_up: FollowUp = "none") -> StateSummary:
    tokens = intents.document_id_tokens(message)
    known = [token for token in tokens if catalog.document(token) is not None]
    pending = state.pending_clarification
    return StateSummary(
        has_last_sources=state.has_last_sources,
        known_document_ids_in_message=known,
        unknown_document_ids_in_message=[token for token in tokens if token not in known],
        pending_clarification=pending.missing_field if pending else None,
        follow_up=follow_up,
        names_a_title=names_a_title(message, catalog),
    )


BARE_TOPIC_MAX_WORDS: Final = 3
"""A message this short that a title names is a topic to search ("testing")."""
TITLE_WORD_MIN_CHARS: Final = 4
"""Shorter words ("ok", "hi", "the") say nothing of a topic."""


def names_a_title(message: str, catalog: Catalog) -> bool:
    """Whether a short message's words are in a document's title: a new operator's "testing"
    over a playbook with pages titled so was read as small talk."""
    said = intents.words(message)
    wanted = {word for word in said if len(word) >= TITLE_WORD_MIN_CHARS}
    if not wanted or len(said) > BARE_TOPIC_MAX_WORDS:
        return False
    asked = stems(" ".join(wanted))
    return any(asked <= stems(document.title) for document in catalog.documents())


def follow_up_of(resolution: Resolution) -> FollowUp:
    if resolution.status == "resolved":
        return "resolved"
    if resolution.status == "clarification_needed":
        return "ambiguous" if resolution.reason == "ambiguous_reference" else "unresolved"
    return "none"


def stands_alone(message: str) -> bool:
    """What certainly needs no subject from history: an injection, a document id."""
    return intents.is_injection(message) or bool(intents.document_id_tokens(message))


MISSING_FIELDS: Final[dict[str, MissingField]] = {
    "sources": "last_sources", "sources_without_answer": "last_sources",
    "metadata": "document_id", "metadata_missing_id": "document_id",
}
"""The piece a clarification asks for, by the kind the selector read."""


def missing_field_for(message: str, kind: str | None) -> MissingField:
    """Which piece a clarification asks for: from the kind read, else from the message."""
    if kind in MISSING_FIELDS:
        return MISSING_FIELDS[kind]
    if intents.document_id_tokens(message) or intents.mentions_path(message):
        return "document_id"
    return "subject"


def is_new_request(reply: str, vocabulary: SubjectVocabulary) -> bool:
    """A complete message of its own rather than a fragment answering our question."""
    if stands_alone(reply) or names_its_topic(reply):
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

    The resolver only rewrites: whether a message it could not rewrite is a follow-up to ask
    about, a question to search as written or something else is the selector's call.
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
        elif pending.missing_field != "last_sources" and not is_new_request(
                message, vocabulary) and not intents.thanks(message) and (
                not _read_as_request(selector, selection_request(
                    message, Resolution(message, message), state, catalog=catalog,
                    tool_specs=tool_specs, language=language))):
            # "dzieki" after our question was counted as a failed answer and handed off.
            return _no_progress(pending, message, vocabulary)
    # A reply that supplied the missing subject completed the request: the selector reads the
    # rewritten question, or it would ask about the pronoun again.
    read = resolution.standalone_question if resolution is not None else None
    if resolution is None:
        resolution = resolve(effective, state, vocabulary, language)
    request = selection_request(read or effective, resolution, state, catalog=catalog,
                                tool_specs=tool_specs, language=language)
    summary = request.state_summary
    selection = propose_action(request, selector)
    decision = guard(normalize(selection), effective)
    if message not in (effective, resolution.original_question):
        decision.decided_by = "pending"  # the original request, completed by this reply
    plan = Plan(message=effective, decision=decision, resolution=_settled(resolution, decision),
                selection=selection, request=request,
                unknown_document_ids=summary.unknown_document_ids_in_message)
    if decision.status == "clarification_needed":
        plan.missing_field = missing_field_for(effective, decision.reason)
        plan.options = resolution.options if plan.missing_field == "subject" else []
    return _count_repeats(plan, pending)


def resolve(message: str, state: ConversationState, vocabulary: SubjectVocabulary,
            language: Language) -> Resolution:
    """The follow-up resolver's rewrite; an injection is refused as written, never rewritten."""
    if intents.is_injection(message):
        return Resolution(message, message)
    return resolve_follow_up(message, state.history, vocabulary, language)


def selection_request(message: str, resolution: Resolution, state: ConversationState, *,
                      catalog: Catalog, tool_specs: list[dict[str, Any]],
                      language: Language) -> SelectionRequest:
    """What the selector is asked (the selector's training builds it the same way)."""
    return SelectionRequest(
        message=message,
        standalone_question=resolution.standalone_question or message,
        history=state.history,
        state_summary=state_summary(message, state, catalog, follow_up_of(resolution)),
        tool_specs=tool_specs,
        language=language,
    )


NEW_REQUEST_MIN_CONFIDENCE: Final = 0.9
"""A short reply to our question is still a request of its own ("pokaż źródła") when the
selector reads one of these kinds this surely; a fragment ("the api one") or a word ("hmm",
"nie wiem") is no progress."""
NEW_REQUEST_GROUPS: Final = frozenset({"sources", "metadata", "refuse"})


def _read_as_request(selector: SelectorModel, request: SelectionRequest) -> bool:
    reading = selector.reading(request)
    return (reading is not None and reading.confidence >= NEW_REQUEST_MIN_CONFIDENCE
            and KIND_GROUPS.get(reading.kind) in NEW_REQUEST_GROUPS)


def _no_progress(pending: PendingClarification, message: str,
                 vocabulary: SubjectVocabulary) -> Plan:
    """The same question again, or a handoff after too many."""
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


def _settled(resolution: Resolution, decision: Decision) -> Resolution:
    """The resolution as the decision left it: a search carries the question it searched
    (the selector may search a message the resolver could not rewrite, or add the thread's
    last question to it)."""
    question = decision.arguments.get("question")
    if decision.action != "answer_from_documents" or not isinstance(question, str):
        return resolution
    if question == resolution.standalone_question:
        return resolution
    changed = question != resolution.original_question
    return Resolution(resolution.original_question, question,
                      "resolved" if changed else "unchanged",
                      history_used=changed or resolution.history_used)


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


BARE_NAME_MAX_WORDS: Final = 3
"""A reply this short that is only a name ("gitleaks", "the pre-commit hook") supplies the
object a clarification asked for."""


def _bare_name(reply: str) -> str | None:
    """The name a short reply gives, without "the"/"I mean"; None for a word that names
    nothing ("no", "hmm", "both")."""
    name = re.sub(r"^\s*(?:i\s+mean|chodzi\s+(?:mi\s+)?o|the)\s+", "", reply.strip(" .!"),
                  flags=re.IGNORECASE).strip()
    said = intents.words(name)
    if not said or len(said) > BARE_NAME_MAX_WORDS or any(w in intents.FILLER_WORDS for w in said):
        return None
    return name


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
        if reply.rstrip().endswith("?") or stands_alone(reply):
            return None
        # "usługa docassist-api", "I mean the database": one subject and not a new question;
        # "gitleaks": a name the lexicon does not know, which the reply gives as a whole.
        named = [named_subject(name)] if not subjects and (name := _bare_name(reply)) else []
        if len(subjects) == 1 or named:
            original = pending.original_message
            return original, resolve_with_subject(original, (subjects or named)[0], language)
        return None
    if pending.missing_field == "document_id":
        known = [token for token in intents.document_id_tokens(reply)
                 if catalog.document(token) is not None]
        if known and not is_new_request(reply.replace(known[0], ""), vocabulary):
            return f"{pending.original_message} {known[0]}", None
        return None
    return None
