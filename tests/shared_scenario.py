"""The one conversation script the shared-scenario tests run (tests/test_shared_scenario.py,
tests/bot/test_serve.py): the steps, how each platform says them, and what is compared."""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

from rich.console import Console

from docassist.bot.slack.render import SHOW_SOURCES_ACTION
from docassist.bot.terminal.chat import ChatSession
from docassist.core.turn import TurnEngine
from docassist.storage.roles import Storage
from tests.slack.rig import CHANNEL, TEAM, SlackRig, mention
from tests.teams.rig import TeamsRig

Step = tuple[str, str]
SCRIPT: list[Step] = [
    ("ask", "Co zrobić po zmianie konfiguracji docassist-api?"),
    ("ask", "Jak sprawdzić jej stan?"),
    ("sources", ""),
    ("meta", "DOC-TLS"),
    ("clear", ""),
    ("ask", "How do I check its status?"),
    ("ask", "the docassist-worker service"),
    ("ask", "Restart the docassist-api service for me."),
]
EXPECTED_STATUSES = ["answered", "answered", "sources_shown", "metadata_shown", "cleared",
                     "clarification_needed", "answered", "rejected"]
COMPARED = ("status", "decision_status", "action", "tool_name", "tool_status",
            "resolution_status", "history_used", "source_ids", "answer_sha256", "language")


def run_cli(engine: TurnEngine) -> None:
    session = ChatSession(engine, Console(file=io.StringIO()), "en")
    lines: dict[str, Callable[[str], str]] = {
        "sources": lambda _: "/sources", "meta": lambda doc: f"/meta {doc}",
        "clear": lambda _: "/clear", "ask": lambda text: text}
    for kind, text in SCRIPT:
        assert session.handle_line(lines[kind](text))


def run_slack(rig: SlackRig) -> None:
    root = "5000.1"
    for number, (kind, text) in enumerate(SCRIPT, start=1):
        ts = f"5000.{number}"
        if kind == "ask":
            rig.event(mention(text, ts, thread_ts=None if ts == root else root), f"Ev{number}")
        elif kind == "clear":
            rig.event(mention("clear", ts, thread_ts=root), f"Ev{number}")
        elif kind == "meta":
            rig.command("/docassist-meta", text)
        else:
            rig.interactive({
                "type": "block_actions", "team": {"id": TEAM}, "user": {"id": "U1"},
                "container": {"type": "message", "channel_id": CHANNEL, "thread_ts": root},
                "message": {"ts": "5999.1", "thread_ts": root}, "channel": {"id": CHANNEL},
                "actions": [{"action_id": SHOW_SOURCES_ACTION, "action_ts": ts}]})


def run_teams(rig: TeamsRig) -> None:
    thread = rig.channel_thread("t-root")
    for number, (kind, text) in enumerate(SCRIPT, start=1):
        options: dict[str, Any] = {"conversation": thread, "conversation_type": "channel",
                                   "activity_id": "t-root" if number == 1 else f"t-{number}"}
        if kind == "sources":
            rig.post(rig.activity(None, value={"docassist": "show_sources"}, **options))
        else:
            words = {"ask": text, "meta": f"meta {text}", "clear": "clear"}[kind]
            rig.post(rig.activity(words, mention=True, **options))


def outcomes(store: Storage, platform: str) -> list[dict[str, Any]]:
    return [{name: turn[name] for name in COMPARED} for turn in store.turns()
            if turn["platform"] == platform]
