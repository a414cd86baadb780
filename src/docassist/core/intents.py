"""Rule-based reading of what a message asks for, in Polish and English.

These are deliberate, documented heuristics (not language understanding): the rules selector,
the follow-up resolver and the clarification logic share them so that one phrase list
decides one thing.
"""

from __future__ import annotations

import re
from typing import Final

_WORD: Final = re.compile(r"[\w`/.~-]+", re.UNICODE)
_ID_TOKEN: Final = re.compile(r"\bDOC(?:-[A-Z0-9]+)+\b", re.IGNORECASE)
_PATH: Final = re.compile(
    r"(?:^|\s)(?:~?/[\w.\-/]+|[A-Za-z]:\\[\w.\\-]+|[\w.-]+\.(?:txt|md|pdf|docx|html?))\b"
)
_BACKTICK_COMMAND: Final = re.compile(r"`[^`]+`")

# Polite or addressing words that may stand before an imperative.
_LEADING_FILLER: Final = re.compile(
    r"^(?:(?:please|pls|plz|proszę|prosze|hej|hey|hi|ok|okay|now|teraz|docassist|@docassist|"
    r"bot|just|kindly|go ahead and|szybko|quickly)[\s,:!]+)+",
    re.IGNORECASE,
)

_IMPERATIVES_EN: Final = frozenset(
    "restart reboot run execute exec delete remove drop purge wipe change modify edit update set "
    "send email mail forward post share upload deploy rollback stop kill shutdown start grant "
    "give revoke renew restore reset open create file apply install reload flush scale disable "
    "enable rotate approve add push trigger submit escalate notify migrate truncate terminate "
    "cancel rerun retry fix".split()
)
_IMPERATIVES_PL: Final = frozenset(
    "zrestartuj restartuj uruchom odpal wykonaj usuń usun skasuj zmień zmien zmodyfikuj edytuj "
    "zaktualizuj ustaw wyślij wyslij prześlij przeslij wdróż wdroz zatrzymaj wyłącz wylacz włącz "
    "wlacz zabij nadaj przyznaj daj odbierz cofnij odnów odnow przywróć przywroc zresetuj otwórz "
    "otworz utwórz utworz załóż zaloz zgłoś zglos zainstaluj przeładuj przeladuj dodaj zatwierdź "
    "zatwierdz powiadom wycofaj anuluj napraw".split()
)
_INFINITIVES_PL: Final = (
    r"(?:z?restartować|uruchomić|wykonać|usunąć|skasować|zmienić|wysłać|przesłać|wdrożyć|"
    r"zatrzymać|wyłączyć|włączyć|nadać|przyznać|dać|odnowić|przywrócić|zresetować|otworzyć|"
    r"utworzyć|założyć|zgłosić|zainstalować|przeładować|dodać|zatwierdzić|powiadomić|wycofać|"
    r"anulować|naprawić|zrobić)"
)
_REQUEST_PATTERNS: Final = (
    re.compile(
        r"\b(?:can|could|would|will)\s+you\s+(?:please\s+|just\s+)?(?:" + "|".join(
            sorted(_IMPERATIVES_EN)
        ) + r")\b",
        re.IGNORECASE,
    ),
    re.compile(r"\b(?:i\s+want|i\s+need|i'd\s+like)\s+you\s+to\b", re.IGNORECASE),
    re.compile(
        r"\b(?:czy\s+)?(?:możesz|mozesz|mógłbyś|moglbys|mogłabyś|możecie|mógłby\w*)\s+(?:\w+\s+)?"
        + _INFINITIVES_PL,
        re.IGNORECASE,
    ),
    re.compile(r"\bproszę\s+(?:o\s+)?(?:z?restart|usunięcie|wysłanie|nadanie|" + _INFINITIVES_PL
               + r")", re.IGNORECASE),
    re.compile(r"\bza\s+mnie\b|\bfor\s+me\b", re.IGNORECASE),
)
_SHELL_START: Final = re.compile(
    r"^(?:sudo|systemctl|kubectl|rm|docker|journalctl|psql|curl|ssh|bash|sh|chmod|chown|kill|"
    r"service)\s",
    re.IGNORECASE,
)
_QUESTION_START: Final = re.compile(
    r"^(?:how|what|why|when|where|which|who|whom|whose|should|shall|is|are|was|were|do|does|"
    r"did|may|must|can\s+i|can\s+we|could\s+i|jak|jaki\w*|co|czemu|dlaczego|kiedy|gdzie|który|"
    r"któr\w+|kto|czy|ile|w\s+jaki)\b",
    re.IGNORECASE,
)
_SOURCES_WORD: Final = re.compile(
    r"\b(?:sources?|citations?|references?|cite|źródł\w*|zrodl\w*|cytat\w*)\b", re.IGNORECASE
)
_SOURCES_PHRASES: Final = re.compile(
    r"where\s+(?:did|does|do)\s+(?:you|that|this|it)\s+(?:get|come|find)|"
    r"what\s+(?:is|was)\s+(?:that|this|it)\s+based\s+on|how\s+do\s+you\s+know|"
    r"skąd\s+(?:to\s+)?wiesz|skad\s+(?:to\s+)?wiesz|na\s+(?:jakiej|czym|jakich)\s+"
    r"(?:podstawie|dokumentach|źródłach)|na\s+podstawie\s+czego|na\s+czym\s+się\s+opierasz|"
    r"na\s+jakich\s+dokumentach",
    re.IGNORECASE,
)
_SOURCES_REFERENCE: Final = re.compile(
    r"\b(?:show|list|give|display|what|which|where|your|that|this|previous|last|answer|"
    r"pokaż|pokaz|podaj|wymień|jakie|tej|tego|poprzedniej|ostatniej|odpowiedzi)\b",
    re.IGNORECASE,
)
_METADATA_WORDS: Final = re.compile(
    r"\b(?:metadata|metadane\w*|meta|owner|owns|owned|version|updated|update\s+date|"
    r"last\s+update\w*|właściciel\w*|wlasciciel\w*|wersj\w+|aktualizowan\w*|aktualizacj\w+|"
    r"zaktualizowan\w*|details|szczegóły|info|informacje)\b",
    re.IGNORECASE,
)
_DOCUMENT_WORDS: Final = re.compile(r"\b(?:document\w*|doc|dokument\w*|plik\w*|file)\b", re.I)
_STRONG_METADATA: Final = re.compile(
    r"\b(?:metadata|metadane\w*|who\s+owns|kto\s+jest\s+właścicielem)\b", re.IGNORECASE
)
_UNSUPPORTED: Final = re.compile(
    r"\b(?:chart|charts|graph|graphs|plot|diagram|visuali[sz]\w*|wykres\w*|wizualizacj\w*|"
    r"book|booking|reserve|reservation|zarezerwuj\w*|rezerwacj\w*|translate|translation|"
    r"przetłumacz\w*|przetlumacz\w*|tłumaczeni\w*|picture|image|photo|drawing|draw|obrazek|"
    r"obraz|zdjęcie|rysun\w*|narysuj|spreadsheet|excel|xlsx|arkusz\w*|joke|dowcip|żart\w*|"
    r"weather|pogod\w*)\b",
    re.IGNORECASE,
)
_GREETING: Final = re.compile(
    r"^(?:hi|hello|hey|hej|cześć|czesc|siema|dzień\s+dobry|dzien\s+dobry|good\s+morning|"
    r"thanks|thank\s+you|dzięki|dzieki|dziękuję|dziekuje)\W*$",
    re.IGNORECASE,
)


def words(text: str) -> list[str]:
    return [word.casefold() for word in _WORD.findall(text)]


def strip_filler(text: str) -> str:
    """The message without leading politeness or addressing (`please`, `hej DocAssist,`)."""
    return _LEADING_FILLER.sub("", text.strip()).strip()


def document_id_tokens(text: str) -> list[str]:
    """Id-shaped tokens (`DOC-…`) in order of appearance, upper-cased, without duplicates."""
    seen: dict[str, None] = {}
    for match in _ID_TOKEN.finditer(text):
        seen.setdefault(match.group(0).upper(), None)
    return list(seen)


def mentions_path(text: str) -> bool:
    return bool(_PATH.search(text))


def is_sources_request(text: str) -> bool:
    """Asking where the previous answer came from ("show sources", "skąd to wiesz?")."""
    if _SOURCES_PHRASES.search(text):
        return True
    if not _SOURCES_WORD.search(text):
        return False
    return len(words(text)) <= 4 or bool(_SOURCES_REFERENCE.search(text))


def is_metadata_request(text: str) -> bool:
    """Asking about a document's catalog entry (owner, version, updated, metadata)."""
    if _STRONG_METADATA.search(text):
        return True
    if not _METADATA_WORDS.search(text):
        return False
    return bool(document_id_tokens(text) or _DOCUMENT_WORDS.search(text) or mentions_path(text))


def is_only_document_id(text: str) -> bool:
    """The message is just an id, perhaps with `meta`/`info` around it."""
    rest = _ID_TOKEN.sub(" ", text)
    rest = re.sub(r"\b(?:meta|info|metadata|metadane)\b", " ", rest, flags=re.IGNORECASE)
    return bool(document_id_tokens(text)) and not re.search(r"\w", rest)


def is_unsupported_request(text: str) -> bool:
    """Asking for something no tool does (charts, bookings, translation, images…)."""
    return bool(_UNSUPPORTED.search(text)) and not _QUESTION_START.match(strip_filler(text))


def is_action_request(text: str) -> bool:
    """Asking DocAssist to *perform* an action, as opposed to asking how to do it."""
    core = strip_filler(text)
    first = words(core)[:1]
    if first and (first[0] in _IMPERATIVES_EN or first[0] in _IMPERATIVES_PL):
        # "Update: it failed" is a status report, "Restart procedure?" a question.
        after = core[len(first[0]) :]
        if not after.startswith(":") and not re.match(r"\s+(?:procedur\w*)\b", after, re.I):
            return True
    if _SHELL_START.match(core) and not _QUESTION_START.match(core):
        return True
    if _BACKTICK_COMMAND.search(core) and not _QUESTION_START.match(core):
        return True
    if _QUESTION_START.match(core) and not re.match(r"(?:czy\s+)?(?:możesz|mozesz|mógłbyś)", core,
                                                    re.IGNORECASE):
        # A question may still be a request: "could you restart…", "czy możesz zrestartować…".
        return any(pattern.search(core) for pattern in _REQUEST_PATTERNS[:2])
    return any(pattern.search(core) for pattern in _REQUEST_PATTERNS)


def is_greeting(text: str) -> bool:
    return bool(_GREETING.match(text.strip()))
