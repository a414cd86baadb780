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
    "cancel rerun retry fix unlock lock requeue cordon uncordon drain pause resume bounce "
    "provision".split()
)
_IMPERATIVES_PL: Final = frozenset(
    "zrestartuj restartuj uruchom odpal wykonaj usuń usun skasuj zmień zmien zmodyfikuj edytuj "
    "zaktualizuj ustaw wyślij wyslij prześlij przeslij wdróż wdroz zatrzymaj wyłącz wylacz włącz "
    "wlacz zabij nadaj przyznaj daj odbierz cofnij odnów odnow przywróć przywroc zresetuj otwórz "
    "otworz utwórz utworz załóż zaloz zgłoś zglos zainstaluj przeładuj przeladuj dodaj zatwierdź "
    "zatwierdz powiadom wycofaj anuluj napraw odtwórz odtworz odblokuj zablokuj zrób zrob "
    "zaakceptuj akceptuj restartnij zrestartnij wrzuć wrzuc wgraj podmień podmien".split()
)
_INFINITIVES_PL: Final = (
    r"(?:z?restartować|uruchomić|wykonać|usunąć|skasować|zmienić|wysłać|przesłać|wdrożyć|"
    r"zatrzymać|wyłączyć|włączyć|nadać|przyznać|dać|odnowić|przywrócić|zresetować|otworzyć|"
    r"utworzyć|założyć|zgłosić|zainstalować|przeładować|dodać|zatwierdzić|powiadomić|wycofać|"
    r"anulować|naprawić|zrobić)"
)
_REQUEST_PATTERNS: Final = (
    re.compile(
        r"\b(?:(?:can|could|would|will)\s+you|if\s+you\s+could)\s+(?:please\s+|just\s+|kindly\s+)?"
        r"(?:be\s+so\s+kind\s+(?:as\s+)?to\s+)?(?:" + "|".join(
            sorted(_IMPERATIVES_EN)
        ) + r")\b",
        re.IGNORECASE,
    ),
    re.compile(r"\b(?:i\s+want|i\s+need|i'd\s+like)\s+you\s+to\b|\bwould\s+you\s+mind\s+\w+ing\b",
               re.IGNORECASE),
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
    r"na\s+jakich\s+dokumentach|"
    # "which document is that from?", "show me where it says that", "z którego dokumentu to…"
    r"\b(?:which|what)\s+(?:document|doc|page|source)\s+(?:is\s+|was\s+)?(?:that|this|it)\b|"
    r"\b(?:that|this|it)\s+(?:comes?|came)\s+from\b|\bwhere\s+(?:it|that|this)\s+says\b|"
    r"\bwhere\s+(?:does|did)\s+(?:it|that|this)\s+say\b|\bwhat'?s\s+your\s+source|"
    r"\b(?:z|w)\s+(?:którego|ktorego|jakiego|jakim|którym|ktorym)\s+dokumen\w*|"
    r"\bgdzie\s+(?:to\s+)?(?:jest\s+)?(?:napisane|zapisane)\b|"
    r"\bsk[aą]d\s+(?:(?:to|ta|te|ten|tę)\s+)?(?:masz|wiesz|bierzesz|wziął\w*|wzięł\w*|wzial\w*)\b|"
    r"\bsk[aą]d\s+(?:to|ta|te|ten|tę)\s+(?:pochodz\w*|info\w*)|\bsk[aą]d\s+(?:ta|te|ten|tę)\s+\w+|"
    r"\b(?:daj|podaj|wyślij|wyslij|podeślij|podeslij|send|give)\s+(?:mi\s+|me\s+)?(?:the\s+|a\s+)?"
    r"link\w*\b|"
    r"\bna\s+czym\s+(?:to\s+)?(?:opierasz|oparł\w*|bazujesz|się\s+opiera\w*)|"
    r"\bz\s+czego\s+(?:to\s+)?(?:wziął\w*|wzięł\w*|masz|korzysta\w*)|"
    r"\bwhere(?:'s|\s+is|\s+was)\s+(?:this|that|it)\s+from\b|"
    r"\bwhat\s+(?:did|do)\s+you\s+base\b|\bbased\s+on\s+what\b|"
    r"\b(?:docs?|documents?|sources?|pages?)\s+(?:did\s+)?you\s+(?:used?|cited?|quoted?)\b|"
    r"\bwhere\s+can\s+i\s+read\s+more\s+about\s+(?:that|this|it)\b|"
    r"\bgdzie\s+mo[gż]\w*\s+(?:o\s+tym\s+)?(?:prze|po)czyta\w*(?:\s+o\s+tym|\s+więcej)?\s*\W*$|"
    r"(?:^|[.?!]\s*)(?:links?|linki?|linku|źródła?|zrodla?|źródło|zrodlo|sources?)\s*"
    r"(?:pls|please|proszę|prosze|poproszę)?\W*$|"
    r"\bwhere\s+(?:did\s+)?(?:you|u)\s+(?:found|find|get|got|read)\s+(?:it|that|this)\b|"
    r"\bz\s+(?:których|ktorych|którego|ktorego)\s+(?:korzysta\w*|skorzysta\w*)|"
    r"\b(?:link|links|linki|linku|url)\s+(?:do|to)\s+(?:the\s+|this\s+|that\s+|tego\s+|tej\s+)?"
    r"(?:dokumen\w*|źród\w*|zrod\w*|"
    r"document\w*|source\w*)",
    re.IGNORECASE,
)
_SOURCES_REFERENCE: Final = re.compile(
    r"\b(?:show|list|give|display|what|which|where|your|that|this|previous|last|answer|"
    r"pokaż|pokaz|pokazać|pokazac|podaj|podać|podac|daj|dać|wymień|jakie|tej|tego|poprzedniej|"
    r"ostatniej|odpowiedzi|see|cite|send|document|doc|dokumen\w*|share|sharing|provide|point|"
    r"wskaż|wskaz|wskazać|wskazac|poproszę|poprosze|proszę|prosze)\b",
    re.IGNORECASE,
)
_METADATA_WORDS: Final = re.compile(
    r"\b(?:metadata|metadane\w*|meta|owner|owns|owned|version|updated|update\s+date|"
    r"last\s+update\w*|właściciel\w*|wlasciciel\w*|wersj\w+|aktualizowan\w*|aktualizacj\w+|"
    r"zaktualizowan\w*|details|szczegóły|info|informacje|maintains?|maintained|maintainer|"
    r"utrzymuj\w*|odpowiada\s+za|responsible|catalog\s+entry|up\s+to\s+date|last\s+changed|"
    r"chang(?:e|ed|es)|aktualn\w*|team|zesp[oó]ł\w*|author\w*|autor\w*|wrote|written|napisał\w*|zmieniano|"
    r"zmienion\w*|zmieniony|current|still\s+valid)\b",
    re.IGNORECASE,
)
_DOCUMENT_WORDS: Final = re.compile(r"\b(?:document\w*|doc|dokumen\w*|plik\w*|file)\b", re.I)
_STRONG_METADATA: Final = re.compile(
    r"\b(?:metadata|metadane\w*|who\s+owns|kto\s+jest\s+właścicielem)\b", re.IGNORECASE
)
_UNSUPPORTED: Final = re.compile(
    r"\b(?:chart|charts|graph|graphs|plot|diagram|visuali[sz]\w*|wykres\w*|wizualizacj\w*|"
    r"book|booking|reserve|reservation|zarezerwuj\w*|rezerwacj\w*|translate|translation|zamów|zamow|"
    r"przetłumacz\w*|przetlumacz\w*|tłumaczeni\w*|picture|image|photo|drawing|draw|obrazek|"
    r"obraz|zdjęcie|rysun\w*|narysuj|spreadsheet|excel|xlsx|arkusz\w*|joke|dowcip|żart\w*|"
    r"weather|pogod\w*)\b",
    re.IGNORECASE,
)
# Requests no tool serves, beyond the words above: content to create, sums to compute, live
# state to fetch. A question about how to do the same ("how do I convert…") is searched.
_CREATE_CONTENT: Final = re.compile(
    r"\b(?:write|draft|compose|generate|create|make)\s+(?:me\s+)?(?:a|an|the|some)?\s*(?:\w+\s+)?"
    r"(?:script|email|e-mail|letter|poem|story|summary|essay|code|program|function|template|"
    r"presentation|slides?|tweet|haiku|song|powerpoint|deck)s?\b|"
    r"\b(?:napisz|napisać|napisac|wygeneruj|stwórz|stworz|przygotuj|zredaguj|ułóż|uloz)\s+"
    r"(?:mi\s+)?(?:\w+\s+)?(?:skrypt\w*|mail\w*|e-mail\w*|list\w*|wiersz\w*|tekst\w*|"
    r"podsumowani\w*|streszczeni\w*|kod\w*|program\w*|funkcj\w*|szablon\w*|prezentacj\w*|"
    r"piosenk\w*|opowiadani\w*)|"
    r"^(?:write|draft|compose|generate|napisz|wygeneruj|zredaguj)\b|"
    r"^(?:schedule|order)\s+(?:a|an|me|the)\b|\b(?:umów|umow|zaplanuj)\s+(?:mi\s+)?spotkani\w*|"
    r"\b(?:summari[sz]e|podsumuj|streść|stresc)\b",
    re.IGNORECASE,
)
_COMPUTE: Final = re.compile(
    r"\d\s*(?:[-+*/^×÷]|\*\*|divided\s+by|times|plus|minus|razy|podzielon\w*\s+przez|"
    r"dzielone\s+przez)\s*\d|\b(?:calculate|compute|oblicz\w*|policz\w*|przelicz\w*|convert|"
    r"konwertuj\w*|skonwertuj\w*)\b|\d\s*%\s*(?:of|z)\s*\d|\bhow\s+much\s+is\s+\d|"
    r"\bile\s+(?:to\s+)?(?:jest\s+)?\d",
    re.IGNORECASE,
)
_LIVE_NOW: Final = re.compile(
    r"\b(?:right\s+now|at\s+the\s+moment|currently|current|live|today|w\s+tej\s+chwili|teraz|"
    r"obecnie|aktualn\w*|dzisiaj|dziś|dzis)\b",
    re.IGNORECASE,
)
_LIVE_STATE: Final = re.compile(
    r"\b(?:up|down|running|online|offline|pending|waiting|how\s+many|ile|działa\w*|dziala\w*|"
    r"leży|lezy|price|prices|cena|ceny|kurs\w*|stock|weather|pogod\w*|temperatur\w*|czeka\w*)\b",
    re.IGNORECASE,
)
# Live data a question asks for even without a time word: prices, rates, the clock, "is X up?".
_LIVE_ALWAYS: Final = re.compile(
    r"\b(?:exchange\s+rate|kurs\w*\s+(?:walut\w*|akcji|dolara|euro)|stock\s+price|share\s+price|"
    r"what\s+time\s+is\s+it|któr[aą]\s+(?:jest\s+)?godzin\w*|weather(?!-)|pogod\w*)\b|"
    r"^\s*(?:is|are)\s+[\w\s-]{1,40}?\s+(?:up|down|running|online|offline)\s*(?:right\s+now|now)?"
    r"\W*$|^\s*czy\s+[\w\s-]{1,40}?\s+(?:działa|dziala|leży|lezy|chodzi)\W*$",
    re.IGNORECASE,
)
_HOW_TO: Final = re.compile(
    r"^(?:how\s+(?:do|can|should|would|to)\b|what\s+(?:should|do)\s+i\b|jak\s+(?!długo|dlugo)\w+[ćc]\b|"
    r"w\s+jaki\s+sposób|co\s+(?:zrobić|zrobic|robić|robic)\b)",
    re.IGNORECASE,
)
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
_GREETING: Final = re.compile(
    r"^(?:hi|hello|hey|hej|cześć|czesc|siema|dzień\s+dobry|dzien\s+dobry|good\s+morning|"
    r"thanks|thank\s+you|dzięki|dzieki|dziękuję|dziekuje)\W*$",
    re.IGNORECASE,
)


_ENDS_AS_QUESTION: Final = re.compile(
    r"\b(?:jak|how|dlaczego|why|kiedy|when|gdzie|where)\s*\?+\s*$", re.IGNORECASE)


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
    """Asking for something no tool does: charts, bookings, translation, images, content to
    write, sums to compute or convert, live data. Questions about how to do it are searched."""
    core = strip_filler(text)
    if _UNSUPPORTED.search(core) and not _QUESTION_START.match(core):
        return True
    if _HOW_TO.match(core):
        return False
    return bool(_CREATE_CONTENT.search(core) or _COMPUTE.search(core) or _LIVE_ALWAYS.search(core)
                or (_LIVE_NOW.search(core) and _LIVE_STATE.search(core)))


def is_injection(text: str) -> bool:
    """An instruction to ignore the rules, change role, reveal the prompt or act as a system."""
    return bool(_INJECTION.search(text))


def is_action_request(text: str) -> bool:
    """Asking DocAssist to *perform* an action, as opposed to asking how to do it."""
    core = strip_filler(text)
    if _ENDS_AS_QUESTION.search(core):
        return False  # "restart api - jak?" asks how
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
