"""From a plan and a tool outcome to the status and the words the user sees.

Clarification questions are written here by code, from the missing field; a selector's own
message is never shown in their place.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from docassist.core import i18n, intents
from docassist.core.documents import NO_VERSION, DocumentInfo
from docassist.core.errors import (
    StorageBusyError,
    StorageFullError,
    StorageReadOnlyError,
    StorageUnavailableError,
)
from docassist.core.followup import SubjectVocabulary
from docassist.core.limits import MAX_CLARIFICATION_CHOICES, MAX_CLARIFICATIONS_WITHOUT_PROGRESS
from docassist.core.planning import Plan
from docassist.core.ports import Catalog
from docassist.core.results import Choice, Clarification
from docassist.core.state import ConversationState, MissingField, RagResult, Source
from docassist.core.statuses import TurnStatus
from docassist.core.subjects import Subject
from docassist.core.text import stems
from docassist.core.tools import ToolOutcome

DOCUMENT_ID_ERRORS = frozenset(
    {"unknown_document_id", "document_id_not_in_message", "invalid_document_id"}
)
EXAMPLE_SUBJECTS = 2
LISTED_DOCUMENTS: Final = 5
"""Documents a "which document?" reply names, those whose titles share most words with the
message first: a real handbook's whole catalog (hundreds of ids) drowned the reply."""
NO_TOOL_TEXTS: Final[dict[str, str]] = {"smalltalk": "smalltalk", "off_topic": "off_topic"}
"""The reply to `no_suitable_tool` by the kind the selector read (other kinds: the plain one)."""


_STORAGE_TEXT: dict[type[StorageUnavailableError], str] = {
    StorageBusyError: "storage_busy",
    StorageReadOnlyError: "storage_read_only",
    StorageFullError: "storage_full",
}


def storage_problem_text(error: StorageUnavailableError, language: i18n.Language) -> str:
    """What the user is told when the database could not take their message."""
    return i18n.text(_STORAGE_TEXT.get(type(error), "storage_unavailable"), language)


@dataclass
class Reply:
    """What a turn says, and what the thread keeps of it: the value the turn's steps pass on."""

    status: TurnStatus
    answer: str
    sources: list[Source] | None = None
    source_turn_id: int | None = None
    metadata: dict[str, Any] | None = None
    clarification: Clarification | None = None
    remember: bool = True
    """False for a message that could not be read: it stays out of the history."""
    clear: bool = False
    """The thread starts over (a new generation) once this reply is saved."""


def compose_reply(
    *,
    plan: Plan,
    outcome: ToolOutcome | None,
    rag: RagResult | None,
    state: ConversationState,
    catalog: Catalog,
    language: i18n.Language,
    human_channel: str,
) -> Reply:
    decision = plan.decision
    if decision.status == "parse_error":
        return Reply("parse_error", i18n.text("parse_error", language))
    if decision.status == "rejected":
        injection = decision.reason == "injection" or intents.is_injection(plan.message)
        return Reply("rejected", i18n.text("rejected_injection" if injection else "rejected",
                                           language))
    if decision.status == "no_suitable_tool":
        # Small talk gets a friendly word on what DocAssist does; chit-chat a polite no.
        key = NO_TOOL_TEXTS.get(decision.reason or "", "no_suitable_tool")
        if key == "smalltalk" and intents.thanks(plan.message):
            key = "smalltalk_thanks"
        return Reply("no_suitable_tool", i18n.text(key, language))
    if decision.status == "clarification_needed":
        return _clarify(plan, plan.missing_field or "subject", state, catalog, language,
                        human_channel)
    if outcome is None:
        return Reply("tool_error", i18n.text("tool_error", language, code="no_outcome"))
    return _from_outcome(plan, outcome, rag, state, catalog, language, human_channel)


def _from_outcome(
    plan: Plan,
    outcome: ToolOutcome,
    rag: RagResult | None,
    state: ConversationState,
    catalog: Catalog,
    language: i18n.Language,
    human_channel: str,
) -> Reply:
    code = outcome.error_code or outcome.status
    if outcome.status == "clarification_needed":
        return _clarify(plan, "last_sources", state, catalog, language, human_channel)
    if outcome.status == "invalid_arguments" and code in DOCUMENT_ID_ERRORS:
        if code != "document_id_not_in_message":  # a known id the message did not name is
            # not "unknown": the user is asked which document, not told it does not exist
            plan.unknown_document_ids = [str(outcome.arguments.get("document_id", ""))]
        return _clarify(plan, "document_id", state, catalog, language, human_channel)
    if outcome.status == "tool_error" and code == "model_unavailable":
        return Reply("handoff", i18n.text("handoff_model_down", language, channel=human_channel))
    if outcome.status != "tool_completed" or outcome.data is None:
        key = outcome.status if outcome.status in (
            "invalid_arguments", "unknown_tool", "tool_rejected") else "tool_error"
        return Reply("tool_error", i18n.text(key, language, code=code))
    if outcome.name == "answer_from_documents" and rag is not None:
        return Reply("answered" if rag.status == "answered" else "no_answer", rag.answer,
                     sources=rag.sources)
    if outcome.name == "show_last_sources":
        return _sources_shown(outcome.data, language)
    if outcome.name == "get_document_metadata":
        return Reply("metadata_shown", _metadata_text(outcome.data, language),
                     sources=[], metadata=outcome.data)
    return Reply("tool_error", i18n.text("tool_error", language, code="unexpected_tool"))


def _sources_shown(data: dict[str, Any], language: i18n.Language) -> Reply:
    """The last answer's sources: those it quotes, then the rest of what it was given under
    their own heading (an auditor read every listed section as quoted)."""
    sources = [Source.model_validate(item) for item in data["sources"]]
    turn_id = data.get("source_turn_id")
    cited = set(data.get("cited") or ())
    quoted = [s for s in sources if s.chunk_id in cited]
    others = [s for s in sources if s.chunk_id not in cited]
    if not quoted:  # nothing quoted (or a thread saved before this was kept): one list
        quoted, others = others, []
    lines = [i18n.text("sources_header", language, turn_id=turn_id)]
    lines += [_source_line(source) for source in quoted]
    if others:
        lines.append(i18n.text("sources_also_given", language))
        lines += [_source_line(source) for source in others]
    if data.get("withheld"):
        lines.append(i18n.text("sources_withheld_scope", language, count=data["withheld"]))
    # `sources` keep the answer's order: the trace's source ids are the answer's.
    return Reply("sources_shown", "\n".join(lines), sources=sources, source_turn_id=turn_id)


def _source_line(source: Source) -> str:
    version = f" (v{source.own_version})" if source.own_version else ""
    return f"• [{source.chunk_id}] {source.title}{version} — {source.section}"


def _options_list(labels: list[str], language: i18n.Language) -> str:
    """`a, b or c` in English; `„a”, „b” czy „c”` in Polish (after a colon: no inflection)."""
    shown = [i18n.text("option", language, option=label) for label in labels]
    last = i18n.text("options_last_joiner", language)
    return last.join([", ".join(shown[:-1]), shown[-1]]) if len(shown) > 1 else "".join(shown)


def _metadata_text(data: dict[str, Any], language: i18n.Language) -> str:
    """A catalog entry for people: the declared version (or "—", never a content hash) and
    the document's link when it has one; never the server's path to the file (the
    metadata in JSON keeps every field)."""
    document = DocumentInfo.model_validate(data)
    missing = i18n.text("unknown_value", language)
    values = {key: (value if value not in (None, "") else missing) for key, value in data.items()}
    values["version"] = document.own_version or NO_VERSION
    text = i18n.text("metadata", language, **values)
    return text + ("\n" + i18n.text("metadata_url", language, url=document.url)
                   if document.url else "")


def _clarify(
    plan: Plan,
    missing_field: MissingField,
    state: ConversationState,
    catalog: Catalog,
    language: i18n.Language,
    human_channel: str,
) -> Reply:
    attempts = plan.clarification_attempts
    if attempts > MAX_CLARIFICATIONS_WITHOUT_PROGRESS:
        return Reply("handoff", i18n.text("handoff", language, channel=human_channel))
    option_labels = [subject.label(language) for subject in plan.options]
    choices = [Choice(label=label, reply=label) for label in option_labels]
    if missing_field == "last_sources" and state.last_result is not None:
        # The last search found nothing: say so rather than "no answer yet".
        answer = i18n.text("sources_empty", language, turn_id=state.last_source_turn_id)
    elif missing_field == "last_sources":
        answer = i18n.text("clarify_no_sources", language)
    elif missing_field == "document_id":
        documents = closest_by_title(plan.message, catalog.documents())
        shown = documents[:LISTED_DOCUMENTS]
        known = "; ".join(f"{document.document_id}: {document.title}" for document in shown)
        if len(documents) > len(shown):
            known += i18n.text("more_documents", language, count=len(documents) - len(shown))
        choices = [Choice(label=document.document_id, reply=document.document_id)
                   for document in shown]
        unknown = [value for value in plan.unknown_document_ids if value]
        if unknown:
            answer = i18n.text("clarify_unknown_document", language, document_id=unknown[0],
                               known=known)
        else:
            answer = i18n.text("clarify_document_id", language, known=known)
    elif len(option_labels) == 1 and plan.resolution.reason == "ambiguous_reference":
        # One kind, several of them ("last night's backup and a manual backup").
        answer = i18n.text("clarify_subject_instances", language, options=option_labels[0])
        choices = []  # which one of them is said in words, not picked from one button
    elif len(option_labels) > 1:
        answer = i18n.text("clarify_subject_ambiguous", language,
                           options=_options_list(option_labels, language))
    else:
        examples = [s.label(language) for s in _catalog_subjects(catalog)][:EXAMPLE_SUBJECTS]
        answer = i18n.text("clarify_subject", language,
                           examples=", ".join(i18n.text("option", language, option=example)
                                              for example in examples)) if examples else (
            i18n.text("clarify_subject_plain", language))
        choices = [Choice(label=example, reply=example) for example in examples]
    return Reply(
        "clarification_needed",
        answer,
        clarification=Clarification(missing_field=missing_field, options=option_labels,
                                    attempts=attempts,
                                    choices=choices[:MAX_CLARIFICATION_CHOICES]),
    )


_PROPER_NAME: Final = re.compile(r"\b[A-Za-z]*[A-Z][\w-]*")
"""A capitalised word in a built-in subject's name ("DocAssist", "TLS"): a title must say it
too, or the subject is the demo's, not the catalog's."""


def _catalog_subjects(catalog: Catalog) -> list[Subject]:
    """The subjects the catalog holds: its services, and the built-in kinds a title names,
    by the names the built-in gives them. The built-ins alone ("the DocAssist database") came
    from the demo, and were offered over a handbook that had never mentioned them; so was
    "the DocAssist database" over one whose title named a database."""
    documents = catalog.documents()
    titles = " ".join(document.title for document in documents).casefold()
    return [subject for subject in SubjectVocabulary.from_catalog(documents).subjects
            if subject.kind == "service"
            or (any(subject.pattern.search(document.title) for document in documents)
                and all(name.casefold() in titles for name in _PROPER_NAME.findall(
                    f"{subject.english} {subject.nominative}")))]


def closest_by_title(message: str, documents: Sequence[DocumentInfo]) -> list[DocumentInfo]:
    """The catalog, the documents whose titles share most words with the message first (the
    catalog's own order among equals)."""
    asked = stems(message)
    return sorted(documents, key=lambda document: -len(asked & stems(document.title)))
