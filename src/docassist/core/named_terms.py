"""The names a question asks about (a product, a tool, a protocol: "PostGIS", "gRPC",
"Mastodon") and whether a page mentions them.

A page that never mentions the thing a question names, when nothing else retrieved does
either, does not answer it (core/answering.py): "czy na bazie postgres mogę włączyć
rozszerzenie PostGIS?" on the database page, which names no PostGIS; "can our app serve gRPC
traffic end to end?" on the domains page. A name other retrieved pages hold is the
collection's own word ("OTel"), not a missing thing. Such yes/no questions
about a feature were most of the unanswerable questions still answered on the twenty-fifth
held-out set (docs/evaluation-method.md, "Does the page mention what is named?").

A name is a word written as names are: with a capital letter inside ("PostGIS", "GitHub"),
or, in an English question, capitalised in the middle of a sentence ("Bluesky"). A Polish
question's capitalised words are often names the English pages translate ("w Wielki
Piątek": "Good Friday"). Left out, since pages spell them another way or a page need not
hold them:
- acronyms of up to three letters ("ADO", "SOW", "IPs", "SSOing": teams shorten their own
  words);
- words with digits: what a user types from their own screen is rarely in the pages (a host
  "web-0142", a ticket "INC-4521", a version "v2.3.1", "a11y", "P0/P1/P2", "2GB");
- handles ("TheDev@github"), weekdays and months.
Polish inflects names ("GitHuba", "na Mastodonie", "PR-ów"): an ending after a hyphen or an
apostrophe is dropped, and a page mentions a name when it holds the name or the name without
a Polish case ending.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

from docassist.core.i18n.detection import feature_language

_WORD: Final = re.compile(r"[^\W_][\w.+#@'-]*[^\W_]|[^\W_]")
_ATTACHED_ENDING: Final = re.compile(r"[-'][a-ząćęłńóśźż]{1,3}$|(?<=[A-Z][A-Z])[a-z]{1,3}$")
"""An ending on an acronym: Polish writes it after a hyphen or an apostrophe ("PR-ów",
"SMS-a", "crate'a"), English straight after it ("IPs", "SSOing")."""
_SENTENCE_START: Final = (".", "?", "!", ":", "-", "–", "—")
_SHORT_ACRONYM: Final = 3
"""Acronyms this long or shorter are not names: teams shorten their own words, pages spell
them out ("ADO", "SOW")."""
_STEM_LETTERS: Final = 4
"""A Polish case ending is taken off only when this many letters stay ("Zulipa" → "zulip")."""
_POLISH_ENDINGS: Final = ("ami", "ach", "owi", "ów", "om", "em", "ie", "u", "a", "y", "i", "e")
_CALENDAR: Final = frozenset(
    "monday tuesday wednesday thursday friday saturday sunday january february march april "
    "may june july august september october november december".split())


def named_terms(question: str) -> list[str]:
    """The names the question holds, in order, each once."""
    english = feature_language(question, "en") == "en"
    found: list[str] = []
    for match in _WORD.finditer(question):
        word = _ATTACHED_ENDING.sub("", match.group(0).strip(".-'@"))
        before = question[:match.start()].rstrip()
        starts_sentence = not before or before.endswith(_SENTENCE_START)
        if _is_name(word, capitalised_counts=english and not starts_sentence):
            found.append(word)
    return list(dict.fromkeys(found))


def _is_name(word: str, *, capitalised_counts: bool) -> bool:
    if (not word or "@" in word or any(char.isdigit() for char in word)
            or word.casefold() in _CALENDAR):
        return False
    if word.isupper() and len(word) <= _SHORT_ACRONYM:
        return False
    return any(char.isupper() for char in word[1:]) or (
        capitalised_counts and word[0].isupper())


def unmentioned(names: Iterable[str], texts: Iterable[str]) -> list[str]:
    """The names that none of the texts mentions (each text folded once for all names)."""
    folded = [text.casefold() for text in texts]
    return [name for name in names if not _held(name, folded)]


def _held(name: str, folded_texts: list[str]) -> bool:
    """Whether any folded text holds the name, or the name without a Polish case ending."""
    folded = name.casefold()
    forms = [folded]
    for ending in _POLISH_ENDINGS:
        if folded.endswith(ending) and len(folded) - len(ending) >= _STEM_LETTERS:
            forms.append(folded[:-len(ending)])
            break
    return any(form in text for text in folded_texts for form in forms)
