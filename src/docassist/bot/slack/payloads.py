"""Slack's interactive payloads and slash commands as far as DocAssist reads them, checked
(pydantic) before they are acked: one that lacks what we need is a MalformedRequest, answered
400 with nothing run."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from docassist.bot.hygiene import MalformedRequest


class _Id(BaseModel):
    model_config = ConfigDict(extra="ignore")
    id: str


class _Action(BaseModel):
    model_config = ConfigDict(extra="ignore")
    action_id: str = ""
    value: str = ""
    action_ts: str | None = None


class Interaction(BaseModel):
    """A button press or message shortcut, as far as DocAssist reads it."""

    model_config = ConfigDict(extra="ignore")
    user: _Id
    team: _Id | None = None
    channel: _Id | None = None
    container: dict[str, Any] = Field(default_factory=dict)
    message: dict[str, Any] = Field(default_factory=dict)
    actions: list[_Action] = Field(default_factory=list)
    trigger_id: str | None = None

    @property
    def channel_id(self) -> str:
        return str(self.container.get("channel_id") or (self.channel.id if self.channel else ""))

    @property
    def team_id(self) -> str:
        return self.team.id if self.team else ""

    @property
    def thread(self) -> str | None:
        return self.message.get("thread_ts") or self.container.get("thread_ts")

    @property
    def message_ts(self) -> str | None:
        return self.message.get("ts") or self.container.get("message_ts")

    @property
    def channel_type(self) -> str | None:
        """`im` for a direct message (its id starts with D), as a message event names it."""
        return "im" if self.channel_id.startswith("D") else None


class SlashCommand(BaseModel):
    model_config = ConfigDict(extra="ignore")
    user_id: str
    channel_id: str
    team_id: str = ""
    text: str = ""
    trigger_id: str = ""


def interaction(body: dict[str, Any], *, action: bool = True,
                message: bool = False) -> Interaction:
    try:
        parsed = Interaction.model_validate(body)
    except ValidationError as error:
        raise MalformedRequest(f"interactive payload: {error.error_count()} problem(s)") from None
    if not parsed.channel_id:
        raise MalformedRequest("interactive payload without a channel")
    if (action and not parsed.actions) or (message and not parsed.message_ts):
        raise MalformedRequest("interactive payload without its action or message")
    return parsed


def slash_command(body: dict[str, Any]) -> SlashCommand:
    try:
        return SlashCommand.model_validate(body)
    except ValidationError as error:
        raise MalformedRequest(f"slash command: {error.error_count()} problem(s)") from None
