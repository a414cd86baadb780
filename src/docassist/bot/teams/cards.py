"""TurnResult → Teams messages: an Adaptive Card per message, answer text with its chunk-id
citations, the cited sources (linked where the document has a url), and the actions.

Card actions are `Action.Submit`: Teams sends them back as a message activity whose `value`
is the action's `data`, in the same conversation (and channel thread) as the card.
"""

from __future__ import annotations

from typing import Any, Final

from docassist.core import i18n
from docassist.core.answering import CITATION
from docassist.core.documents import DocumentInfo
from docassist.core.results import TurnResult
from docassist.core.text import split_text
from docassist.storage.exports import ActivitySummary

CARD_CONTENT_TYPE: Final = "application/vnd.microsoft.card.adaptive"
CARD_SCHEMA: Final = "http://adaptivecards.io/schemas/adaptive-card.json"
CARD_VERSION: Final = "1.5"
CARD_TEXT_LIMIT: Final = 12_000
"""Characters of answer per card; Teams refuses messages over about 28 KB."""
MAX_SOURCES_SHOWN: Final = 10
ACTION_KEY: Final = "docassist"
"""The key in `Action.Submit` data that marks our own card actions."""
SHOW_SOURCES: Final = "show_sources"
CLEAR_THREAD: Final = "clear"
FEEDBACK: Final = "feedback"
ANSWER_STATUSES: Final = frozenset({"answered", "no_answer"})

Card = dict[str, Any]


def _language(result: TurnResult) -> i18n.Language:
    return "pl" if result.language == "pl" else "en"


def attachment(card: Card) -> dict[str, Any]:
    return {"contentType": CARD_CONTENT_TYPE, "content": card}


def card(body: list[dict[str, Any]], actions: list[dict[str, Any]] | None = None) -> Card:
    content: Card = {"type": "AdaptiveCard", "$schema": CARD_SCHEMA, "version": CARD_VERSION,
                     "body": body}
    if actions:
        content["actions"] = actions
    return content


def text_block(text: str, **style: Any) -> dict[str, Any]:
    return {"type": "TextBlock", "text": text, "wrap": True, **style}


def _sources_blocks(result: TurnResult) -> list[dict[str, Any]]:
    cited = set(CITATION.findall(result.answer))
    shown = [s for s in result.sources if s.chunk_id in cited or result.status == "sources_shown"]
    if not shown:
        return []
    lines = []
    for source in shown[:MAX_SOURCES_SHOWN]:
        title = f"{source.title} v{source.version} — {source.section}"
        label = f"[{title}]({source.url})" if source.url else title
        lines.append(f"- `{source.chunk_id}` {label}")
    return [text_block(i18n.text("sources_label", _language(result)), weight="Bolder",
                       spacing="Medium"),
            text_block("\n".join(lines), size="Small", isSubtle=True, spacing="None")]


def _submit(title: str, **data: str) -> dict[str, Any]:
    return {"type": "Action.Submit", "title": title, "data": {ACTION_KEY: data.pop("action"),
                                                              **data}}


def _actions(result: TurnResult) -> list[dict[str, Any]]:
    language = _language(result)
    actions = []
    if result.status not in ("cleared", "storage_unavailable"):  # nothing to act on
        actions += [_submit(i18n.text("button_show_sources", language), action=SHOW_SOURCES),
                    _submit(i18n.text("button_clear_thread", language), action=CLEAR_THREAD)]
    if result.status in ANSWER_STATUSES:
        actions += [
            _submit(i18n.text("feedback_good", language), action=FEEDBACK, verdict="good",
                    result_id=result.result_id),
            _submit(i18n.text("feedback_bad", language), action=FEEDBACK, verdict="bad",
                    result_id=result.result_id)]
    return actions


def render(result: TurnResult) -> list[Card]:
    """One or more cards; the last carries the sources and the actions."""
    pieces = split_text(result.answer, CARD_TEXT_LIMIT)
    cards = [card([text_block(piece)]) for piece in pieces]
    cards[-1]["body"].extend(_sources_blocks(result))
    actions = _actions(result)
    if actions:
        cards[-1]["actions"] = actions
    return cards


def catalog_card(documents: list[DocumentInfo], language: i18n.Language) -> Card:
    lines = []
    for document in documents:
        title = f"[{document.title}]({document.url})" if document.url else document.title
        lines.append(f"- `{document.document_id}` {title} (v{document.version})")
    return card([text_block(i18n.text("docs_header", language), weight="Bolder"),
                 text_block("\n".join(lines) or "—")])


def stats_card(summary: ActivitySummary, language: i18n.Language) -> Card:
    facts = [{"title": status, "value": str(count)} for status, count in summary.statuses]
    return card([
        text_block(i18n.text("stats_header", language), weight="Bolder", size="Medium"),
        text_block(i18n.text("stats_turns", language, turns=summary.turns)),
        {"type": "FactSet", "facts": facts},
        text_block(i18n.text("stats_feedback", language, helpful=summary.helpful,
                             not_helpful=summary.not_helpful)),
    ])
