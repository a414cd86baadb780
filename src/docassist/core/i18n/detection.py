"""Which language a message is in: Polish or English, by letters and common words.

Two readings: `detect_language`, the language a reply is written in, and `feature_language`,
the one the ranker's and reader's features were fitted with (storage/): that one is frozen,
since a change to it changes the features of every training question and needs a refit.

The word lists are not text users see; they live beside the tables, not in them.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Final

from docassist.core.statuses import Language

_POLISH_LETTERS: Final = re.compile(r"[ąćęłńóśźż]", re.IGNORECASE)
_WORD: Final = re.compile(r"[^\W\d_]+", re.UNICODE)
_POLISH_WORDS: Final = frozenset(
    "jak czy co jest się nie w z na do po dla jej jego ją go mój moja proszę pokaż źródła "
    "gdzie kiedy dlaczego kto który która jaki jaka mogę możesz usługi usługa teraz stan "
    "zrobić sprawdzić zmianie konfiguracji dokumentu metadane wyczyść też oraz albo lub "
    "narysuj wykres zrób zrob pokaz podaj wiem mi mnie tak dobrze dzieki dzięki cześć czesc "
    "jakie gdzie logi logów dostęp dostep baza bazy danych kopia kopii zapasowej usługę pomoc "
    "dokumenty statystyki metadane ile dni mam są być aby żeby trzeba muszę można".split()
)
_ENGLISH_WORDS: Final = frozenset(
    "the how what is do does i to of an it its my me you can could should please show "
    "sources where when why who which status service after before with for and or this that "
    "restart check about document metadata clear help docs documents stats".split()
)


_POLISH_WITHOUT_LETTERS: Final = frozenset(
    "zrestartuj restartuj uruchom wylacz wlacz usun zmien wyslij napraw zainstaluj skasuj "
    "zaktualizuj wdroz dodaj zresetuj serwer serwera serwerze haslo hasla dziekuje dziekujemy "
    "prosze sie ze zeby mozesz moge jestes bardzo wielkie dzien dobry witam".split()
)
"""Polish written without its letters, as people type in chat ("zrestartuj serwer
docassist-api", "dziekuje bardzo"): counted for the reply's language only."""
_REPLY_POLISH_WORDS: Final = _POLISH_WORDS | _POLISH_WITHOUT_LETTERS


def detect_language(message: str, default: Language) -> Language:
    """The language to reply in: `feature_language`, with Polish typed without its letters
    also counted ("zrestartuj serwer docassist-api" was refused in English)."""
    return _decide(message, default, _REPLY_POLISH_WORDS)


def feature_language(message: str, default: Language) -> Language:
    """Polish or English by words: a common word of either language, or a word written with
    Polish letters, counts for its side; on a tie, Polish letters decide, else `default`.
    So a Polish name in an English sentence ("the Kraków office") does not make it Polish.
    Frozen: the ranker's and reader's features were fitted with it (module docstring)."""
    return _decide(message, default, _POLISH_WORDS)


def _decide(message: str, default: Language, polish_words: frozenset[str]) -> Language:
    # Counted per distinct word: a passage repeats its words, and this runs for every
    # candidate passage of every question (storage/ranker_features.py).
    words = Counter(word.casefold() for word in _WORD.findall(message))
    polish = sum(count for word, count in words.items()
                 if word in polish_words or _POLISH_LETTERS.search(word))
    english = sum(count for word, count in words.items() if word in _ENGLISH_WORDS)
    if polish > english:
        return "pl"
    if english > polish:
        return "en"
    return "pl" if _POLISH_LETTERS.search(message) else default


def has_polish_letters(text: str) -> bool:
    """Whether the text holds a letter only Polish writes: any Polish paragraph does, while an
    English one the words call Polish ("go", "do" and "na" in a list of links or code) does
    not."""
    return bool(_POLISH_LETTERS.search(text))
