"""Which language a message is in: Polish or English, by letters and common words.

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


def detect_language(message: str, default: Language) -> Language:
    """Polish or English by words: a common word of either language, or a word written with
    Polish letters, counts for its side; on a tie, Polish letters decide, else `default`.
    So a Polish name in an English sentence ("the Kraków office") does not make it Polish."""
    # Counted per distinct word: a passage repeats its words, and this runs for every
    # candidate passage of every question (storage/ranker_features.py).
    words = Counter(word.casefold() for word in _WORD.findall(message))
    polish = sum(count for word, count in words.items()
                 if word in _POLISH_WORDS or _POLISH_LETTERS.search(word))
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
