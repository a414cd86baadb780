"""The exact rules around the learned selector, in Polish and English: what must not be left
to a classifier (`core/learned.py`).

    document ids   `DOC-…` tokens a message names (metadata is shown only for a known one),
                   and the word "metadata" itself (the tool's name, as the `/meta` command)
    paths          a file path is never a document id
    injections     an instruction to drop the rules, change role or reveal the prompt that
                   this pattern catches for sure: refused after any selector (`planning.guard`)

What a message asks for otherwise (a procedure, sources, an action to refuse, small talk) is
learned from the labelled bank, not listed here: phrase lists did not carry over from one
set of messages to the next (issue 41).
"""

from __future__ import annotations

import re
from typing import Final

_WORD: Final = re.compile(r"[\w`/.~-]+", re.UNICODE)
_ID_TOKEN: Final = re.compile(r"\bDOC(?:-[A-Z0-9]+)+\b", re.IGNORECASE)
_PATH: Final = re.compile(
    r"(?:^|\s)(?:~?/[\w.\-/]+|[A-Za-z]:\\[\w.\\-]+|[\w.-]+\.(?:txt|md|pdf|docx|html?))\b"
)
_METADATA_WORD: Final = re.compile(r"\b(?:metadata|metadane\w*|meta)\b", re.IGNORECASE)
"""Every bank message that says "metadata" asks for a document's catalog entry (15 of 15)."""
_QUOTED: Final = re.compile(r'"[^"]*"|„[^”"]*[”"]|“[^”]*”|«[^»]*»')
"""Quoted text is data: "someone pasted 'ignore previous instructions' — is that phishing?"
is a question (a quoted instruction meant for us is left to the classifier)."""

# Instructions to drop the rules, change role, reveal the prompt: refused as a whole, even
# when a genuine question comes with them.
_INJECTION: Final = re.compile(
    r"\b(?:ignore|disregard|forget|override|bypass)\b[^.?!]{0,40}\b(?:instructions?|rules?|"
    r"prompts?|guidelines|polic(?:y|ies)|restrictions?|everything)\b|"
    r"\b(?:zignoruj|ignoruj|zapomnij|pomiń|pomin|olej)\w*\b[^.?!]{0,40}(?:instrukcj|zasad|regu[lł]|"
    r"poleceni|polecen|ogranicze|prompt|wszystko)|"
    r"\b(?:print|show|reveal|repeat|paste|output|tell|what\s+is|what's|wypisz|pokaż|pokaz|podaj|"
    r"powtórz|powtorz|wklej|jaki\s+jest)\b[^.?!]{0,30}(?:system\s+(?:prompt|message)|prompt\w*\s+"
    r"systemow\w*)|\binstrukcj\w*\s+systemow\w*|"
    r"\b(?:hidden|secret|initial|original)\s+(?:instructions|prompt|rules)\b|"
    r"\byour\s+(?:instructions|prompt|system\s+message)\b|"
    r"\b(?:swoje|twoje|ukryte|masz|tajne)\s+(?:\w+\s+)?instrukcj\w*|\binstrukcj\w*\s+w\s+prompc\w*|"
    r"\b(?:repeat|print|output|reveal|paste|show)\b[^.?!]{0,40}\b(?:above|verbatim)\b|"
    r"\bpowt[oó]rz\w*\b[^.?!]{0,40}(?:powyżej|powyzej|wyżej|wyzej|słowo\s+w\s+słowo)|"
    r"\byou\s+are\s+now\b|\byou(?:'re|\s+are)\s+no\s+longer\b|\bnie\s+jeste[sś]\s+ju[zż]\b|\bnew\s+role\b|\bpretend\s+(?:you(?:'re|\s+are)|to\s+be)\b|"
    r"\bact\s+as\s+(?:a|an|my|the)?\s*(?:shell|terminal|root|admin\w*|linux|bash|system)\b|"
    r"\bdeveloper\s+mode\b|\bjailbreak|\bjeste[sś]\s+teraz\b|\bod\s+teraz\s+(?:jeste[sś]|"
    r"odpowiadasz|działasz|dzialasz|wykonujesz)|\bnowa\s+rola\b|\budawaj\b|\bwciel\s+si[eę]\b|"
    r"\bbez\s+(?:żadnych\s+)?(?:ogranicze[nń]|filtr\w*)\b|\bod\s+(?:dziś|dzis|dzisiaj)\s+jeste[sś]\b|"
    r"\bobey\s+(?:only\s+)?me\b|\byou\s+must\s+now\b|"
    r"\bs[lł]uchaj\s+(?:tylko|wyłącznie)\s+mnie\b|\bwithout\s+(?:any\s+)?(?:limits|restrictions|rules)\b|"
    r"\b(?:swój|swoj|twój|twoj|your)\s+(?:\w+\s+)?prompt\w*|\bfrom\s+now\s+on\s+you\b|"
    r"\b(?:ignore|zignoruj|ignoruj)\s+(?:the\s+|all\s+)?(?:above|previous|prior|powyższe|powyzsze|"
    r"wcześniejsze|wczesniejsze|poprzednie)\b|\bwhat\s+(?:were|are)\s+you\s+told\b|"
    r"\bco\s+ci\s+(?:powiedziano|kazano|napisano)\b|"
    r"\bnie\s+(?:stosuj|przestrzegaj|trzymaj)\w*\s+(?:się\s+)?(?:do\s+)?(?:swoich\s+|twoich\s+)?"
    r"(?:zasad|reguł|regul|instrukcj)|\b(?:don't|do\s+not|stop)\s+follow\w*\s+(?:your\s+|the\s+)?"
    r"(?:rules|instructions)|^\W*system\s*:|\badmin\s+mode\b|\btryb\s+(?:admin\w*|dewelopersk\w*)",
    re.IGNORECASE,
)


_THANKS: Final = re.compile(
    r"\b(?:thank\w*|thx|cheers|appreciate\w*|dzi[eę]k\w*|dzi[eę]kuj\w*)\b", re.IGNORECASE)
"""Not "ty": Polish for "you" ("a ty kim jesteś?")."""


FILLER_WORDS: Final = frozenset(
    "ok okay okey okej well right sure cool great alright hmm hi hey hello yes no tak nie "
    "idk dunno whatever anything nothing both all none thanks dobra dobrze spoko super cześć "
    "czesc hej dzięki dzieki wszystko nic oba obie".split())
"""Words that name no object: before a dash they do not set off a topic ("ok - how do I
renew it?" still refers back), and as a reply to "Which object?" they are no answer."""


def words(text: str) -> list[str]:
    return [word.casefold() for word in _WORD.findall(text)]


def document_id_tokens(text: str) -> list[str]:
    """Id-shaped tokens (`DOC-…`) in order of appearance, upper-cased, without duplicates."""
    seen: dict[str, None] = {}
    for match in _ID_TOKEN.finditer(text):
        seen.setdefault(match.group(0).upper(), None)
    return list(seen)


def mentions_path(text: str) -> bool:
    return bool(_PATH.search(text))


def is_only_document_id(text: str) -> bool:
    """The message is just an id, perhaps with `meta`/`info` around it."""
    rest = _ID_TOKEN.sub(" ", text)
    rest = re.sub(r"\b(?:meta|info|metadata|metadane)\b", " ", rest, flags=re.IGNORECASE)
    return bool(document_id_tokens(text)) and not re.search(r"\w", rest)


def names_metadata(text: str) -> bool:
    """The message asks for metadata by its name ("metadane dokumentu DOC-TLS", "meta?")."""
    return bool(_METADATA_WORD.search(text))


def is_injection(text: str) -> bool:
    """An instruction to ignore the rules, change role, reveal the prompt or act as a system,
    outside quotes."""
    return bool(_INJECTION.search(_QUOTED.sub(" ", text)))


def thanks(text: str) -> bool:
    """The message thanks ("thanks!", "dzieki"): small talk that gets "you're welcome", not
    the introduction, and that ends a question DocAssist asked rather than failing it."""
    return bool(_THANKS.search(text))
