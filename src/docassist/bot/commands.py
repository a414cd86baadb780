"""Chat words that are commands rather than questions, for platforms without slash commands
in threads (Slack's `clear`, Teams' text commands). A command is the whole message: "clear"
is a command, "how do I clear the cache" is a question."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

TextCommandName = Literal["clear", "docs", "help", "meta", "stats", "sources"]

_WORDS: Final[dict[str, TextCommandName]] = {
    "clear": "clear", "/clear": "clear", "reset": "clear", "wyczyść": "clear",
    "wyczysc": "clear",
    "docs": "docs", "documents": "docs", "dokumenty": "docs",
    "help": "help", "pomoc": "help",
    "meta": "meta", "metadata": "meta", "metadane": "meta",
    "stats": "stats", "statystyki": "stats",
    "sources": "sources", "źródła": "sources", "zrodla": "sources",
}


@dataclass(frozen=True)
class TextCommand:
    name: TextCommandName
    argument: str = ""


def parse_text_command(text: str) -> TextCommand | None:
    """The command a message is, or None for a question. `meta` takes one argument (it may be
    missing: the adapter then explains the usage); the others take none."""
    words = text.split()
    if not words or len(words) > 2:
        return None
    name = _WORDS.get(words[0].casefold())
    if name is None:
        return None
    if name == "meta":
        return TextCommand(name, words[1] if len(words) == 2 else "")
    return TextCommand(name) if len(words) == 1 else None
