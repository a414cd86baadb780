"""TurnResult → Slack messages (Block Kit). Long answers are split, never cut."""

from __future__ import annotations

from typing import Any, Final

from docassist.core import i18n
from docassist.core.answering import CITATION
from docassist.core.results import TurnResult
from docassist.core.text import split_text

SECTION_TEXT_LIMIT: Final = 3000
"""Slack's limit for a section block's text."""
SECTIONS_PER_MESSAGE: Final = 40
"""Slack allows 50 blocks a message; the rest holds context and buttons."""
FALLBACK_TEXT_LIMIT: Final = 3000
SHOW_SOURCES_ACTION: Final = "docassist_show_sources"
CLEAR_THREAD_ACTION: Final = "docassist_clear_thread"
CLEAR_THREAD_SHORTCUT: Final = "docassist_clear_thread_shortcut"
FEEDBACK_ACTION: Final = "docassist_feedback"
ASK_HUMAN_ACTION: Final = "docassist_ask_human"
ANSWER_STATUSES: Final = frozenset({"answered", "no_answer"})

Message = dict[str, Any]


def _language(result: TurnResult) -> i18n.Language:
    return "pl" if result.language == "pl" else "en"


def _sources_context(result: TurnResult) -> dict[str, Any] | None:
    cited = set(CITATION.findall(result.answer))
    shown = [s for s in result.sources if s.chunk_id in cited or result.status == "sources_shown"]
    if not shown:
        return None
    elements = []
    for source in shown[:10]:  # a context block holds at most 10 elements
        title = f"{source.title} v{source.version} — {source.section}"
        label = f"<{source.url}|{title}>" if source.url else title
        elements.append({"type": "mrkdwn", "text": f"`{source.chunk_id}` {label}"})
    return {"type": "context", "elements": elements}


def _buttons(result: TurnResult) -> dict[str, Any]:
    language = _language(result)
    return {"type": "actions", "elements": [
        {"type": "button", "action_id": SHOW_SOURCES_ACTION, "value": "show_sources",
         "text": {"type": "plain_text", "text": i18n.text("button_show_sources", language)}},
        {"type": "button", "action_id": CLEAR_THREAD_ACTION, "value": "clear",
         "text": {"type": "plain_text", "text": i18n.text("button_clear_thread", language)}},
    ]}


def render(result: TurnResult) -> list[Message]:
    """One or more messages (`text` + `blocks`); the last carries sources and buttons."""
    pieces = split_text(result.answer, SECTION_TEXT_LIMIT)
    messages: list[Message] = []
    for start in range(0, len(pieces), SECTIONS_PER_MESSAGE):
        chunk = pieces[start:start + SECTIONS_PER_MESSAGE]
        blocks: list[dict[str, Any]] = [
            {"type": "section", "text": {"type": "mrkdwn", "text": piece}} for piece in chunk]
        messages.append({"text": " ".join(chunk)[:FALLBACK_TEXT_LIMIT], "blocks": blocks})
    last = messages[-1]["blocks"]
    context = _sources_context(result)
    if context is not None:
        last.append(context)
    if result.status not in ("cleared", "storage_unavailable"):  # nothing to act on
        last.append(_buttons(result))
    if result.status in ANSWER_STATUSES:
        last.append(feedback_block(result))
    return messages


def feedback_block(result: TurnResult) -> dict[str, Any]:
    """👍/👎 on an answer; the value carries the turn's result id."""
    language = _language(result)
    return {"type": "context_actions", "elements": [{
        "type": "feedback_buttons", "action_id": FEEDBACK_ACTION,
        "positive_button": {"text": {"type": "plain_text",
                                     "text": i18n.text("feedback_good", language)},
                            "value": f"good:{result.result_id}"},
        "negative_button": {"text": {"type": "plain_text",
                                     "text": i18n.text("feedback_bad", language)},
                            "value": f"bad:{result.result_id}"}}]}


def ask_human_blocks(result_id: str, language: i18n.Language) -> list[dict[str, Any]]:
    return [
        {"type": "section", "text": {"type": "mrkdwn",
                                     "text": i18n.text("slack_ask_human_offer", language)}},
        {"type": "actions", "elements": [{
            "type": "button", "action_id": ASK_HUMAN_ACTION, "value": result_id,
            "text": {"type": "plain_text", "text": i18n.text("slack_ask_human", language)}}]},
    ]
