"""What enters the core: a platform-neutral chat message, its conversation key, validation."""

from __future__ import annotations

import hashlib
import json
import unicodedata
from enum import StrEnum
from functools import lru_cache
from typing import Final

from pydantic import BaseModel, ConfigDict, Field

from docassist.core import i18n
from docassist.core.i18n import Language
from docassist.core.limits import CONVERSATION_ID_CACHE, MAX_MESSAGE_CHARS
from docassist.core.scopes import UNSET, Audience
from docassist.core.statuses import MessageProblem, NoticeKind

_ALLOWED_CONTROL: Final = frozenset("\n\t\r")

"""Replies the admission step decides before any turn (see serving/admission.py)."""
_NOTICE_TEXT: Final[dict[str, str]] = {
    "external_user": "external_user", "rate_limited": "rate_limited",
    "attachments_only": "attachments_ignored", "attachments_ignored": "attachments_ignored"}


class Command(StrEnum):
    """Explicit requests that skip the selector (buttons, slash commands, chat commands)."""

    CLEAR = "clear"
    SHOW_SOURCES = "show_sources"
    METADATA = "metadata"
    ASK_AGAIN = "ask_again"
    """"Ask again" on a stale-answer note (core/stale.py): `command_argument` is the note
    id; the thread's last question is read when the turn runs."""


class ConversationKey(BaseModel):
    """Where a conversation lives; four separate fields because platform ids contain `:` and `;`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    platform: str
    workspace: str
    channel: str
    thread: str

    @property
    def conversation_id(self) -> str:
        """First 16 hex of the SHA-256 of the key's canonical JSON."""
        return _conversation_id(self.platform, self.workspace, self.channel, self.thread)


@lru_cache(maxsize=CONVERSATION_ID_CACHE)
def _conversation_id(platform: str, workspace: str, channel: str, thread: str) -> str:
    """Remembered: the ack path and a turn ask for the same key's id several times."""
    fields = {"platform": platform, "workspace": workspace, "channel": channel,
              "thread": thread}
    canonical = json.dumps(fields, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


class Notice(BaseModel):
    """A reply decided at admission, delivered by the inbox once per message. All kinds but
    `attachments_ignored` (said before the answer) replace the turn: nothing runs."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: NoticeKind
    language: Language
    seconds: int = 0
    """For `rate_limited`: when to try again."""

    @property
    def replaces_turn(self) -> bool:
        return self.kind != "attachments_ignored"

    def text(self) -> str:
        values = {"seconds": self.seconds} if self.kind == "rate_limited" else {}
        return i18n.text(_NOTICE_TEXT[self.kind], self.language, **values)


class ChatMessage(BaseModel):
    """One user message as an adapter hands it to the core.

    `text` is deliberately `object`: adapters pass what the platform gave them and the core
    decides whether it is a valid message.
    """

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    key: ConversationKey
    user: str
    text: object
    event_id: str | None = None
    command: Command | None = None
    command_argument: str | None = None
    received_at: str | None = Field(default=None, description="ISO timestamp from the platform")
    reply_to: str | None = Field(
        default=None, description="Where the adapter sends the reply (opaque to the core); kept "
        "with the stored event so a reply after a restart still finds its way")
    choice_for: str | None = Field(
        default=None, description="A clicked clarification choice: the result id of the "
        "question it answers; the text is then the choice's reply, read as if typed")
    direct: str | None = Field(
        default=None, description="A request the adapter answers itself, without a turn (a "
        "catalog, help, a vote): opaque to the core, stored with the event so a redelivery "
        "or a restart answers it once")
    audience: Audience = Field(
        default=UNSET, description="Who can read the reply, as the adapter saw it in the "
        "event; the core decides from it which collections the turn may search (unset: "
        "`default` only, so a message whose adapter forgot to say never sees more)")
    notice: Notice | None = Field(
        default=None, description="A reply decided at admission (refusal or note), stored "
        "with the event so that retries and restarts deliver it once")


class InvalidMessage(ValueError):
    """A message the core refuses; `problem` is also the turn status."""

    def __init__(self, problem: MessageProblem, length: int = 0) -> None:
        super().__init__(problem)
        self.problem: MessageProblem = problem
        self.length = length


def validate_message(text: object, limit: int = MAX_MESSAGE_CHARS) -> str:
    """The trimmed message, or `InvalidMessage` saying what is wrong with it."""
    if not isinstance(text, str):
        raise InvalidMessage("invalid_message")
    trimmed = text.strip()
    if not trimmed:
        raise InvalidMessage("empty_message")
    if len(trimmed) > limit:
        raise InvalidMessage("message_too_long", len(trimmed))
    for char in trimmed:
        category = unicodedata.category(char)
        if (category == "Cc" and char not in _ALLOWED_CONTROL) or category == "Cs":
            raise InvalidMessage("invalid_message")
    return trimmed
