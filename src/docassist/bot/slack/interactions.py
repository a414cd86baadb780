"""Listeners for clarification buttons and the feedback-reason modal: small functions, one per
interaction, so the adapter's listener table lists them as they are."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from docassist.bot.hygiene import MalformedRequest
from docassist.bot.slack.feedback import FEEDBACK_REASON_VIEW, ReasonSubmission, reason_submission
from docassist.bot.slack.listeners import SlackAdapter
from docassist.bot.slack.payloads import interaction
from docassist.bot.slack.render import CHOICE_ACTION, SHARE_ACTION
from docassist.core import i18n
from docassist.core.errors import StorageError, StorageUnavailableError
from docassist.core.feedback import answered_elsewhere, reason_label
from docassist.core.replies import storage_problem_text

logger = logging.getLogger(__name__)


def register_interactions(adapter: SlackAdapter) -> None:
    adapter.app.action(CHOICE_ACTION)(choice_listener(adapter))
    adapter.app.view(FEEDBACK_REASON_VIEW)(reason_listener(adapter))
    adapter.app.action(SHARE_ACTION)(share_listener(adapter))


def share_listener(adapter: SlackAdapter) -> Callable[..., None]:
    """"Share in channel" on a private answer: checked and posted off the request thread."""
    def on_share(ack: Any, body: dict[str, Any]) -> None:
        pressed = interaction(body)
        result_id = pressed.actions[0].value
        ack()
        adapter.soon(lambda: adapter.share(pressed.user.id, pressed.channel_id, result_id),
                     "share an answer")
    return on_share


def choice_listener(adapter: SlackAdapter) -> Callable[..., None]:
    """A clarification's button: the pending request completed as a typed reply would."""
    def on_choice(ack: Any, body: dict[str, Any]) -> None:
        pressed = interaction(body, message=True)
        result_id, separator, reply = pressed.actions[0].value.partition("|")
        if not separator or not reply.strip():
            raise MalformedRequest("choice without its question or reply")
        ack()
        channel = pressed.channel_id
        # The question's own thread: an ephemeral question's payload may not carry it.
        thread = adapter.thread_of_result(result_id) or pressed.thread
        key = adapter.key_for(pressed.team_id, channel, thread,
                              str(pressed.message_ts), "im" if channel.startswith("D") else None)
        action_ts = pressed.actions[0].action_ts or pressed.trigger_id
        adapter.submit_choice(key, pressed.user.id, f"action:{action_ts}", reply, result_id)
    return on_choice


def reason_listener(adapter: SlackAdapter) -> Callable[..., None]:
    """The feedback modal submitted: without a reason Slack shows the error in the modal;
    otherwise it closes and the reason is stored off the request thread."""
    def on_reason(ack: Any, body: dict[str, Any]) -> None:
        submission, language = reason_submission(body)
        if submission.reason is None:
            ack(response_action="errors",
                errors={"reason": i18n.text("feedback_reason_missing", language)})
            return
        ack()
        adapter.soon(lambda: record_reason(adapter, submission, language), "feedback reason")
    return on_reason


def record_reason(adapter: SlackAdapter, submission: ReasonSubmission,
                  language: i18n.Language) -> None:
    assert submission.reason is not None
    if answered_elsewhere(adapter.store.answer_place(submission.result_id), "slack",
                          submission.channel):
        logger.warning("refused a reason naming an answer from another channel")
        adapter.client.chat_postEphemeral(
            channel=submission.channel, user=submission.user, thread_ts=submission.thread,
            text=i18n.text("feedback_elsewhere", language))
        return
    try:
        adapter.store.record_feedback_reason(submission.result_id, submission.user,
                                             submission.reason, submission.text)
    except StorageError as error:
        logger.warning("feedback reason not stored: %s", error)
        text = (storage_problem_text(error, language)
                if isinstance(error, StorageUnavailableError)
                else i18n.text("feedback_reason_unknown", language))
    else:
        text = i18n.text("feedback_reason_thanks", language,
                         reason=reason_label(submission.reason, language))
    adapter.client.chat_postEphemeral(channel=submission.channel, user=submission.user,
                                      text=text, thread_ts=submission.thread)
