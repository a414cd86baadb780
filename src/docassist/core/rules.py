"""The rules selector: deterministic decisions without a model (the embedded default).

It reads the same `SelectionRequest` a model would and answers with the same JSON text, so
its output goes through the same strict parser and normalizer.
"""

from __future__ import annotations

import json
from typing import Any, Final

from docassist.core import i18n, intents
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


class RulesSelector:
    backend = "rules"
    model = RULES_MODEL_NAME

    def propose(self, request: SelectionRequest) -> str:
        message, language = request.message, request.language
        summary = request.state_summary
        if intents.is_sources_request(message):
            if summary.has_last_sources:
                return _proposal("tool_call", "show_last_sources", {}, None)
            return _refusal("clarification_needed", "clarify_no_sources", language)
        if intents.is_unsupported_request(message):
            return _refusal("no_suitable_tool", "no_suitable_tool", language)
        if intents.is_action_request(message):
            return _refusal("rejected", "rejected", language)
        wants_metadata = intents.is_metadata_request(message) or intents.is_only_document_id(
            message
        )
        if wants_metadata:
            if summary.known_document_ids_in_message:
                document_id = summary.known_document_ids_in_message[0]
                return _proposal("tool_call", "get_document_metadata",
                                 {"document_id": document_id}, None)
            return _refusal("clarification_needed", "clarify_document_id", language, known="…")
        if intents.is_greeting(message):
            return _refusal("no_suitable_tool", "greeting", language)
        return _proposal("tool_call", "answer_from_documents",
                         {"question": request.standalone_question}, None)
