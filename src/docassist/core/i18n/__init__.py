"""Every user-facing sentence of DocAssist, in Polish and English: the one place of user text.

Adapters and the core look text up here by key (`i18n.text(key, language)`); nothing else
spells out replies. The tables are kept one file per area, merged here once:
    answers   a turn's reply: unreadable messages, clarifications, answers, storage problems
    sources   stale-answer notes, document sources, scopes
    feedback  votes and reasons, asking a human, sharing a private answer
    chat      buttons, admission notes, admin and help commands, the digest, the terminal
Add a language by adding a column to every entry. `detection` tells which language a
message is in.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from docassist.core.i18n import answers, chat, feedback, sources
from docassist.core.i18n.detection import detect_language

# Defined in statuses (the leaf every layer reads); re-exported: `i18n.Language` reads well.
from docassist.core.statuses import LANGUAGES as LANGUAGES
from docassist.core.statuses import Language as Language

__all__ = ["LANGUAGES", "Language", "detect_language", "template", "text", "text_keys"]

AREAS: Final = (answers.TEXTS, sources.TEXTS, feedback.TEXTS, chat.TEXTS)
"""The tables, one per area; a key belongs to exactly one of them."""


def _merged(*tables: Mapping[str, dict[Language, str]]) -> dict[str, dict[Language, str]]:
    merged: dict[str, dict[Language, str]] = {}
    for table in tables:
        twice = merged.keys() & table.keys()
        if twice:
            raise ValueError(f"text keys defined in two areas: {sorted(twice)}")
        merged.update(table)
    return merged


_TEXTS: Final = _merged(*AREAS)


def text(key: str, language: Language, /, **values: object) -> str:
    """The sentence `key` in `language`, with `values` filled in."""
    template = _TEXTS[key][language]
    return template.format(**values) if values else template


def template(key: str, language: Language) -> str:
    """The raw template, for checks that every language has the same placeholders."""
    return _TEXTS[key][language]


def text_keys() -> frozenset[str]:
    return frozenset(_TEXTS)
