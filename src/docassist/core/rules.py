"""The rules selector: deterministic decisions without a model (the embedded default).

It reads the same `SelectionRequest` a model would and answers with the same JSON text, so
its output goes through the same strict parser and normalizer.
"""

from __future__ import annotations

import json
from typing import Any, Final

from docassist.core import i18n, intents
from docassist.core.nearest import Intent, NearestExamples
from docassist.core.selection import SelectionRequest

RULES_MODEL_NAME: Final = "rules-v1"


def _proposal(decision: str, action: str | None, arguments: dict[str, Any],
              message: str | None) -> str:
    return json.dumps(
        {"decision": decision, "action": action, "arguments": arguments, "message": message},
        ensure_ascii=False,
    )


def _refusal(decision: str, key: str, language: i18n.Language, **values: object) -> str:
    return _proposal(decision, None, {}, i18n.text(key, language, **values))


def rules_intent(message: str) -> Intent | None:
    """What the phrase rules read in the message; None when nothing but a search fits."""
    if intents.is_injection(message):
        return "injection"
    if intents.is_sources_request(message):
        return "sources"
    if intents.is_unsupported_request(message):
        return "no_tool"
    if intents.is_action_request(message):
        return "action"
    if intents.is_metadata_request(message) or intents.is_only_document_id(message):
        return "metadata"
    return None


class RulesSelector:
    """Rules first; with `nearest`, a message the rules would search is also compared with
    labelled examples, and a clear neighbourhood (`IntentGuess.confident`) decides."""

    backend = "rules"

    def __init__(self, nearest: NearestExamples | None = None) -> None:
        self.nearest = nearest
        self.model = RULES_MODEL_NAME if nearest is None else f"{RULES_MODEL_NAME}+nearest"

    def intent(self, request: SelectionRequest) -> Intent:
        found = rules_intent(request.message)
        if found is not None:
            return found
        if intents.is_greeting(request.message):
            return "procedure"  # answered with the greeting below
        resolved = request.standalone_question != request.message
        if self.nearest is not None and not resolved:
            guess = self.nearest.guess(request.message)
            if guess.confident:
                return guess.intent
        return "procedure"

    def propose(self, request: SelectionRequest) -> str:
        language, summary = request.language, request.state_summary
        intent = self.intent(request)
        if intent == "injection":
            return _refusal("rejected", "rejected_injection", language)
        if intent == "sources":
            if summary.has_last_sources:
                return _proposal("tool_call", "show_last_sources", {}, None)
            return _refusal("clarification_needed", "clarify_no_sources", language)
        if intent == "no_tool":
            return _refusal("no_suitable_tool", "no_suitable_tool", language)
        if intent == "action":
            return _refusal("rejected", "rejected", language)
        if intent == "metadata":
            if summary.known_document_ids_in_message:
                document_id = summary.known_document_ids_in_message[0]
                return _proposal("tool_call", "get_document_metadata",
                                 {"document_id": document_id}, None)
            return _refusal("clarification_needed", "clarify_document_id", language, known="…")
        if intents.is_greeting(request.message):
            return _refusal("no_suitable_tool", "greeting", language)
        return _proposal("tool_call", "answer_from_documents",
                         {"question": request.standalone_question}, None)
