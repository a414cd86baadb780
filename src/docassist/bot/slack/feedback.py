"""Why a 👎: the Slack modal (opened with the button's `trigger_id`) and what its submission
carries. Listeners are small functions (`interactions.py`) so the listener table can list them."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any, Final

from slack_sdk import WebClient

from docassist.bot.hygiene import MalformedRequest
from docassist.core import i18n
from docassist.core.feedback import FEEDBACK_REASONS, FeedbackReason, parse_reason, reason_label
from docassist.core.limits import MAX_FEEDBACK_TEXT_CHARS

logger = logging.getLogger(__name__)

FEEDBACK_REASON_VIEW: Final = "docassist_feedback_reason"
REASON_BLOCK: Final = "reason"
TEXT_BLOCK: Final = "reason_text"
MODAL_TITLE_LIMIT: Final = 24
"""Slack's limit for a modal's title."""


@dataclass(frozen=True)
class ReasonSubmission:
    """A submitted modal: whose answer, where to say thanks, the reason and the words."""

    result_id: str
    channel: str
    thread: str | None
    user: str
    reason: FeedbackReason | None
    text: str | None


def _plain(text: str) -> dict[str, str]:
    return {"type": "plain_text", "text": text}


def reason_view(result_id: str, channel: str, thread: str | None,
                language: i18n.Language) -> dict[str, Any]:
    options = [{"text": _plain(reason_label(reason, language)), "value": reason}
               for reason in FEEDBACK_REASONS]
    return {
        "type": "modal", "callback_id": FEEDBACK_REASON_VIEW,
        "private_metadata": json.dumps({"result_id": result_id, "channel": channel,
                                        "thread": thread, "language": language}),
        "title": _plain(i18n.text("feedback_reason_title", language)[:MODAL_TITLE_LIMIT]),
        "submit": _plain(i18n.text("feedback_reason_send", language)),
        "close": _plain(i18n.text("feedback_reason_cancel", language)),
        "blocks": [
            {"type": "input", "block_id": REASON_BLOCK,
             "label": _plain(i18n.text("feedback_reason_question", language)),
             "element": {"type": "radio_buttons", "action_id": REASON_BLOCK,
                         "options": options}},
            {"type": "input", "block_id": TEXT_BLOCK, "optional": True,
             "label": _plain(i18n.text("feedback_reason_text", language)),
             "element": {"type": "plain_text_input", "action_id": TEXT_BLOCK,
                         "multiline": True, "max_length": MAX_FEEDBACK_TEXT_CHARS}},
        ]}


def reason_submission(body: dict[str, Any]) -> tuple[ReasonSubmission, i18n.Language]:
    """What a `view_submission` says; MalformedRequest when it is not our modal's shape."""
    try:
        view = body["view"]
        meta = json.loads(view["private_metadata"])
        values = view.get("state", {}).get("values", {})
        selected = (values.get(REASON_BLOCK, {}).get(REASON_BLOCK, {})
                    .get("selected_option") or {})
        words = values.get(TEXT_BLOCK, {}).get(TEXT_BLOCK, {}).get("value")
        submission = ReasonSubmission(
            result_id=str(meta["result_id"]), channel=str(meta["channel"]),
            thread=meta.get("thread"), user=str(body["user"]["id"]),
            reason=parse_reason(selected.get("value")),
            text=str(words) if words else None)
    except (KeyError, TypeError, ValueError) as error:
        raise MalformedRequest(f"feedback modal: {error!r}") from None
    language: i18n.Language = "pl" if meta.get("language") == "pl" else "en"
    return submission, language


def ask_reason(client: WebClient, trigger_id: str, view: dict[str, Any]) -> None:
    """Open the modal; a trigger past its 3 s or a client without modals only loses the
    question (the vote is stored and "Ask a human" is offered all the same)."""
    try:
        client.views_open(trigger_id=trigger_id, view=view)
    except Exception as error:
        logger.info("feedback reason not asked: %s", error)
