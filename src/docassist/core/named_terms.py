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

Chat writes names in lower case too ("we use haproxy not nginx, is there an example
config…?", "are we allowed to use chatgpt?"). So in an English message, a lower-case word
of an asking sentence (one ending in "?") that general English rarely uses is a name as well.
wordfreq's frequencies (books, news, subtitles, the web) tell "haproxy" (1.2 on their Zipf
scale) from "release" (4.9). Not names, though rare:
- a typo, one edit from a common word ("servcie", "webniar");
- a common word with a prefix or an ending ("unstick", "firewalling"), or two common words
  ("workstreams", "allowlist");
- shorthand without vowels ("tmrw", "msgs");
- a Polish word, with or without its letters: Polish typed without them ("jak dodac ludzi
  do grupy?") can read as English, while a Polish message is left out altogether, since
  Polish inflects the English terms it borrows ("klastrze", "zmergować");
- a word of the collection that the question's search missed: core/answering.py searches the
  documents for a lower-case name before it calls it missing.
On the 5,352 tuning questions this refused 8 answers to unanswerable questions (ChatGPT,
YubiKey, haproxy, mongodump…) and 3 right answers whose page answers without the name
("chmod", "authz", "yubikeys"): docs/evaluation-method.md, "Names written in lower case".
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable
from typing import Final

from docassist.core.i18n.detection import feature_language
from docassist.core.statuses import Language
from docassist.core.text import fold

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
_RARE_ZIPF: Final = 2.0
"""A lower-case word of an English question that general English uses less often than this
(wordfreq's Zipf scale: 2 is once per 100 million words; "kubernetes" is 2.3) is a name."""
_COMMON_ZIPF: Final = 3.0
"""A rare word one edit away from a word at least this common is a typo of it ("shuold",
"webniar"); one made of common words is a word of the language ("workstreams", "unstick",
"firewalling", "allowlist")."""
_COMPOUND_PART: Final = 4
"""Each word of a compound has this many letters ("hap" and "roxy" do not make "haproxy")."""
_PREFIXES: Final = ("un", "re", "mis", "pre", "de", "sub", "over", "under")
_SUFFIXES: Final = ("s", "es", "ed", "d", "ing", "er", "ers", "able", "ly")
_VOWELS: Final = frozenset("aeiouy")
_POLISH_ZIPF: Final = 2.5
"""A word Polish uses this often, with or without its letters, is Polish ("dodac", "grupy"):
a Polish message typed without Polish letters can read as English."""
_RARE_MIN_LETTERS: Final = 4
"""Shorter rare words are chat shorthand ("pls", "thx", "tbh"), not names."""
_LETTERS: Final = "abcdefghijklmnopqrstuvwxyz"
_SENTENCE: Final = re.compile(r"[^.?!]+[.?!]*")
"""A sentence with its closing marks: a rare word counts in the asking ones (ending in "?")."""
_ENGLISH_ENDINGS: Final = ("'s", "s")
"""A lower-case name's plural or possessive ("yubikeys", "nginx's"): the page may name the
thing once."""
_CALENDAR: Final = frozenset(
    "monday tuesday wednesday thursday friday saturday sunday january february march april "
    "may june july august september october november december".split())


def named_terms(question: str, language: Language | None = None) -> list[str]:
    """The names the question holds, in order, each once. `language` is the whole message's,
    when `question` is a part of it (a Polish message's clause may hold no Polish word)."""
    english = feature_language(question, "en") == "en"
    # Only in a clearly English message, and only in its asking sentences: a rare word in the
    # context ("forwards our logs to splunk via a log drain. should i bind…?") is not the
    # thing asked about.
    rare_counts = (feature_language(question, "pl") == "en" and language in (None, "en"))
    asking = [span for span in _SENTENCE.finditer(question) if span.group(0).endswith("?")]
    found: list[str] = []
    for match in _WORD.finditer(question):
        word = _ATTACHED_ENDING.sub("", match.group(0).strip(".-'@"))
        before = question[:match.start()].rstrip()
        starts_sentence = not before or before.endswith(_SENTENCE_START)
        asked = rare_counts and any(span.start() <= match.start() < span.end()
                                    for span in asking)
        if _is_name(word, capitalised_counts=english and not starts_sentence):
            found.append(word)
        elif asked and _is_rare(word):
            # In lower case, whatever the sentence's first letter: answering tells a rare
            # word from a capitalised name by it (core/answering.py, `_held`).
            found.append(word.casefold())
    return list(dict.fromkeys(found))


def _is_name(word: str, *, capitalised_counts: bool) -> bool:
    if (not word or "@" in word or any(char.isdigit() for char in word)
            or word.casefold() in _CALENDAR):
        return False
    if word.isupper() and len(word) <= _SHORT_ACRONYM:
        return False
    return any(char.isupper() for char in word[1:]) or (
        capitalised_counts and word[0].isupper())


def _is_rare(word: str) -> bool:
    """A lower-case word general English rarely uses: no typo of a common word, no word made
    of common ones, no shorthand without vowels ("tmrw", "msgs") and no Polish word."""
    folded = word.casefold()
    if (len(folded) < _RARE_MIN_LETTERS or not folded.isalpha() or not folded.isascii()
            or folded in _CALENDAR or not _VOWELS & set(folded)):
        return False
    if folded in _common_english() or (
            _zipf(_english_frequencies().get(folded, 0.0)) >= _RARE_ZIPF):
        return False
    if _polish_frequencies().get(folded, 0.0) >= _POLISH_ZIPF:
        return False
    return not any(_common(near) for near in _one_edit(folded)) and not _made_of_words(folded)


def _common(word: str) -> bool:
    return word in _common_english()


@functools.cache
def _common_english() -> frozenset[str]:
    """The English words at least as common as _COMMON_ZIPF, from wordfreq's small list (all
    its words are; read in a hundredth of a second, where the whole list takes a fifth):
    most questions' words are among them, and the whole list is read only for the others."""
    from wordfreq import get_frequency_dict
    return frozenset(word for word, frequency in get_frequency_dict("en", wordlist="small").items()
                     if _zipf(frequency) >= _COMMON_ZIPF)


def _made_of_words(word: str) -> bool:
    """A common word with a prefix or an ending, or two common words of four letters or more."""
    if any(word.startswith(prefix) and _common(word[len(prefix):]) for prefix in _PREFIXES):
        return True
    if any(word.endswith(ending) and (_common(word[:-len(ending)])
                                      or _common(word[:-len(ending)] + "e"))
           for ending in _SUFFIXES):
        return True
    return any(_common(word[:cut]) and _common(word[cut:])
               for cut in range(_COMPOUND_PART, len(word) - _COMPOUND_PART + 1))


@functools.cache
def _english_frequencies() -> dict[str, float]:
    """wordfreq's English word frequencies, read once (a fifth of a second with the import,
    which is deferred to here so that commands that ask nothing do not pay it)."""
    from wordfreq import get_frequency_dict
    return get_frequency_dict("en", wordlist="best")


@functools.cache
def _polish_frequencies() -> dict[str, float]:
    """Polish words on wordfreq's Zipf scale, also without their letters ("dodać": "dodac")."""
    from wordfreq import get_frequency_dict
    least = 10 ** (_POLISH_ZIPF - 9)  # only words common enough count: fold them alone
    folded: dict[str, float] = {}
    for word, frequency in get_frequency_dict("pl", wordlist="best").items():
        if frequency >= least:
            plain = fold(word)
            folded[plain] = max(folded.get(plain, 0.0), _zipf(frequency))
    return folded


def _zipf(frequency: float) -> float:
    return math.log10(frequency) + 9 if frequency > 0 else 0.0


def _one_edit(word: str) -> set[str]:
    """The words one deletion, insertion, substitution or swap of neighbours away."""
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    return ({left + right[1:] for left, right in splits if right}
            | {left + right[1] + right[0] + right[2:] for left, right in splits if len(right) > 1}
            | {left + char + right[1:] for left, right in splits if right for char in _LETTERS}
            | {left + char + right for left, right in splits for char in _LETTERS})


def unmentioned(names: Iterable[str], texts: Iterable[str]) -> list[str]:
    """The names that none of the texts mentions (each text folded once for all names)."""
    folded = [text.casefold() for text in texts]
    return [name for name in names if not _held(name, folded)]


def _held(name: str, folded_texts: list[str]) -> bool:
    """Whether any folded text holds the name, or the name without a Polish case ending (or,
    written in lower case, an English one)."""
    folded = name.casefold()
    forms = [folded]
    # English endings only for a lower-case name: the capitalised ones' rule was measured
    # without them (stop 69).
    endings = (*_POLISH_ENDINGS, *_ENGLISH_ENDINGS) if name.islower() else _POLISH_ENDINGS
    for ending in endings:
        if folded.endswith(ending) and len(folded) - len(ending) >= _STEM_LETTERS:
            forms.append(folded[:-len(ending)])
            break
    return any(form in text for text in folded_texts for form in forms)
