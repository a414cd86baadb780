"""The `scopes` command, one grammar for the CLI and both admin chat commands:

    scopes                                   list mappings and shareable collections
    scopes set SUBJECT COLLECTION…           map a channel, user or group (replaces)
    scopes clear SUBJECT                     remove a mapping (back to `default`)
    scopes share COLLECTION…                 shareable with externally shared channels
    scopes unshare COLLECTION…

SUBJECT is `slack:CHANNEL_ID`, `teams:CONVERSATION_ID`, `user:PLATFORM:USER_ID` or
`group:PLATFORM:GROUP_ID`. A collection must exist (documents, a source, or `default`):
a typo would otherwise silently give a channel nothing. Every change is logged with its admin.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from docassist.core import i18n
from docassist.core.ports import ScopeAdmin
from docassist.core.scopes import SUBJECT_PATTERN, slack_id_expected


@dataclass(frozen=True)
class ScopeCommandResult:
    ok: bool
    text: str
    listing: dict[str, Any] = field(default_factory=dict)
    """For `--json`: mappings and shareable collections after the command."""


def scopes_listing(store: ScopeAdmin) -> dict[str, Any]:
    return {"mappings": {subject: list(names)
                         for subject, names in sorted(store.scope_mappings().items())},
            "shareable": sorted(store.shareable_collections()),
            "collections": store.collection_names()}


def describe_scopes(store: ScopeAdmin, language: i18n.Language) -> str:
    listing = scopes_listing(store)
    lines = [i18n.text("scopes_header", language)]
    lines += [f"{subject} → {', '.join(names)}"
              for subject, names in listing["mappings"].items()]
    lines.append(i18n.text("scopes_shareable", language,
                           names=", ".join(listing["shareable"]) or "—"))
    return "\n".join(lines)


def run_scope_command(words: list[str], admin: str, store: ScopeAdmin,
                      language: i18n.Language) -> ScopeCommandResult:
    """Run `scopes …` (the words after `scopes`) for an admin already checked as one."""
    if not words:
        return _done(store, language, changed=False)
    verb, rest = words[0], words[1:]
    if verb in ("set", "clear") and rest:
        subject, names = rest[0], rest[1:] if verb == "set" else []
        if not SUBJECT_PATTERN.match(subject):
            return ScopeCommandResult(False, i18n.text("scopes_bad_subject", language,
                                                       subject=subject))
        slack_kind = slack_id_expected(subject)
        if verb == "set" and slack_kind is not None:
            return ScopeCommandResult(False, i18n.text("scopes_slack_id", language,
                                                       subject=subject, kind=slack_kind))
        if verb == "set" and not names:
            return ScopeCommandResult(False, i18n.text("scopes_usage", language))
        if verb == "clear" and subject not in store.scope_mappings():
            return ScopeCommandResult(False, i18n.text("scopes_not_mapped", language,
                                                       subject=subject))
        problem = _unknown(names, store, language)
        if problem is not None:
            return problem
        store.set_scope(subject, names, admin)
        return _done(store, language)
    if verb in ("share", "unshare") and rest:
        problem = _unknown(rest, store, language)
        if problem is not None:
            return problem
        for name in rest:
            store.set_shareable(name, verb == "share", admin)
        return _done(store, language)
    return ScopeCommandResult(False, i18n.text("scopes_usage", language))


def _unknown(names: list[str], store: ScopeAdmin,
             language: i18n.Language) -> ScopeCommandResult | None:
    known = store.collection_names()
    missing = [name for name in names if name not in known]
    if not missing:
        return None
    return ScopeCommandResult(False, i18n.text("scopes_unknown_collection", language,
                                               names=", ".join(missing),
                                               known=", ".join(known)))


def _done(store: ScopeAdmin, language: i18n.Language, *, changed: bool = True
          ) -> ScopeCommandResult:
    text = describe_scopes(store, language)
    if changed:
        text = i18n.text("scopes_changed", language) + "\n" + text
    return ScopeCommandResult(True, text, scopes_listing(store))
