"""What a turn decides without its selector: the replies that need no plan (a cleared thread,
a message that cannot be read, a click on a stale choice), a command's fixed plan, and the
handoff when the selector's model is down."""

from __future__ import annotations

from typing import Any

from docassist.core import i18n
from docassist.core.documents import is_document_id
from docassist.core.followup import Resolution
from docassist.core.limits import MAX_MESSAGE_CHARS
from docassist.core.messages import Command, InvalidMessage
from docassist.core.messages import validate_message as check_message
from docassist.core.planning import Plan
from docassist.core.ports import TurnStore
from docassist.core.replies import Reply
from docassist.core.selection import Decision
from docassist.core.stale import AskAgainRefused, question_to_ask_again
from docassist.core.statuses import Language
from docassist.core.turn_context import TurnContext


def early_reply(turn: TurnContext, store: TurnStore) -> Reply | None:
    """The replies that need no plan: a cleared thread, a message that cannot be read.
    Sets `turn.text` (the checked message) when the turn goes on."""
    message, language = turn.message, turn.language
    if message.command is Command.CLEAR:
        return Reply("cleared", i18n.text("cleared", language), clear=True)
    if message.command is Command.ASK_AGAIN:
        return _ask_again(turn, store)
    text = message.text
    if message.command is not None and not (isinstance(text, str) and text.strip()):
        text = f"/{message.command.value}"  # a button press carries no words
    try:
        turn.text = check_message(text)
    except InvalidMessage as problem:
        answer = i18n.text(problem.problem, language, length=problem.length,
                           limit=MAX_MESSAGE_CHARS)
        return Reply(problem.problem, answer, remember=False)
    return _stale_choice(turn)


def _ask_again(turn: TurnContext, store: TurnStore) -> Reply | None:
    """"Ask again" on a stale note runs the thread's last question, resolved here (on the
    worker, in the conversation's order); a note that is not this thread's, or a thread with
    no question left, runs nothing and leaves the thread as it was."""
    note = (turn.message.command_argument or "").strip()
    try:
        turn.text = question_to_ask_again(store, turn.message.key, note, turn.state)
    except AskAgainRefused as refused:
        text = f"/{Command.ASK_AGAIN.value} {note[:40]}".strip()
        turn.plan = Plan(message=text, resolution=_unchanged(text),
                         decision=Decision(status="rejected", reason=refused.problem,
                                           decided_by="validation"))
        return Reply("invalid_message", refused.text(turn.language), remember=False)
    turn.language = i18n.detect_language(turn.text, turn.language)
    return None


def _stale_choice(turn: TurnContext) -> Reply | None:
    """A clicked choice answers the question it was shown under, and only while that
    question is the one pending: a click on an old or unknown one runs nothing and
    leaves the thread as it was (its pending question included)."""
    choice_for = turn.message.choice_for
    pending = turn.state.pending_clarification
    if choice_for is None or (pending is not None and pending.result_id == choice_for):
        return None
    assert turn.text is not None
    turn.plan = Plan(message=turn.text, resolution=_unchanged(turn.text),
                     decision=Decision(status="rejected", reason="stale_choice",
                                       decided_by="validation"))
    return Reply("invalid_message", i18n.text("choice_stale", turn.language),
                 remember=False)


def command_plan(turn: TurnContext) -> Plan | None:
    """A command's fixed plan (show sources, a document's metadata); None for a question."""
    text, command = turn.text, turn.message.command
    assert text is not None
    if command is Command.SHOW_SOURCES:
        return _fixed_plan(text, "show_last_sources", {})
    if command is Command.METADATA:
        argument = (turn.message.command_argument or "").strip()
        document_id = argument.upper() if is_document_id(argument.upper()) else argument
        return _fixed_plan(text, "get_document_metadata", {"document_id": document_id})
    return None


def model_down(text: str, language: Language, human_channel: str) -> tuple[Plan, Reply]:
    """The handoff when the selector's model cannot be reached: no tool runs."""
    plan = Plan(message=text, resolution=_unchanged(text),
                decision=Decision(status="handoff", reason="model_unavailable",
                                  decided_by="handoff"))
    answer = i18n.text("handoff_model_down", language, channel=human_channel)
    return plan, Reply("handoff", answer)


def _fixed_plan(text: str, action: str, arguments: dict[str, Any]) -> Plan:
    return Plan(message=text, resolution=_unchanged(text),
                decision=Decision(status="action_proposed", action=action, arguments=arguments,
                                  decided_by="command"))


def _unchanged(text: str) -> Resolution:
    return Resolution(original_question=text, standalone_question=text)
