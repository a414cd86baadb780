"""Follow-up resolution: turn "How do I check its status?" into a standalone question.

Rule-based, for Polish and English, and honest about it: it recognises anaphoric markers
("jej", "jego", "tej usługi", "co teraz", "stan to failed", "its", "it", "that service",
"what now", "status is failed"), finds the subject in recent history and substitutes it.
It is not general language understanding. Subjects are the services named by the document
catalog (front matter `services:` and service names found in the text) plus a small lexicon
of object kinds (database, TLS certificate). When history names no subject, or one message
names several, the resolver asks which object is meant instead of guessing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final, Literal

from docassist.core.documents import DocumentInfo
from docassist.core.i18n import Language
from docassist.core.intents import words
from docassist.core.state import HistoryMessage, recent_history

ResolutionStatus = Literal["unchanged", "resolved", "clarification_needed"]


@dataclass(frozen=True)
class Subject:
    """An object a conversation can be about, with the word forms substitution needs."""

    key: str
    pattern: re.Pattern[str]
    # Polish forms by case; English has one phrase.
    nominative: str
    genitive: str
    accusative: str
    instrumental: str
    english: str

    def label(self, language: Language) -> str:
        return self.nominative if language == "pl" else self.english


def service_subject(name: str) -> Subject:
    return Subject(
        key=f"service:{name}",
        pattern=re.compile(rf"(?<![\w-]){re.escape(name)}(?![\w-])", re.IGNORECASE),
        nominative=f"usługa {name}",
        genitive=f"usługi {name}",
        accusative=f"usługę {name}",
        instrumental=f"usługą {name}",
        english=f"the {name} service",
    )


BUILTIN_SUBJECTS: Final = (
    Subject(
        key="database",
        pattern=re.compile(r"\b(?:baz[aeyęąi]e?\s+danych|databases?)\b", re.I),
        nominative="baza danych DocAssist",
        genitive="bazy danych DocAssist",
        accusative="bazę danych DocAssist",
        instrumental="bazą danych DocAssist",
        english="the DocAssist database",
    ),
    Subject(
        key="tls_certificate",
        pattern=re.compile(r"\b(?:certyfikat\w*|certificates?)\b", re.I),
        nominative="certyfikat TLS",
        genitive="certyfikatu TLS",
        accusative="certyfikat TLS",
        instrumental="certyfikatem TLS",
        english="the TLS certificate",
    ),
)

# Words that do not name a subject: question words, auxiliaries, generic verbs and nouns.
_GENERIC: Final = frozenset(
    """a an the and or but if then so and/or also still just again now what how why when where
    which who is are was were be been do does did done doing have has had can could should would
    will may might must i we you me my our its it it's this that these those there here to of in
    on at for with from by about after before up down out back not no yes please ok
    check checking status state running run restart restarted start started stop stopped fix
    diagnose verify see look logs log fails failed failing failure happens happen next mean
    work works working doesn't don't isn't won't come comes get gets go goes make take
    a co jak czy to ten ta te tej tego tym jej jego ją go nią niego niej nim ona ono on oni
    jeśli jesli gdy kiedy jeżeli i oraz albo lub ale więc się sie nie tak już juz jeszcze
    teraz dalej potem po przed w we z ze na do od dla o u przy mam mamy jest są był była było
    sprawdzić sprawdzic sprawdzam stan status zrobić zrobic zrestartować zrestartowac restart
    uruchomić uruchomic działa dziala nie działa powiedzie uda udało udalo zrobię potem
    logi log co teraz znaczy oznacza""".split()
)

_MARKERS_PL: Final = re.compile(
    r"\b(?:jej|jego|ją|nią|niego|niej|nim|tej\s+usługi|tej\s+usłudze|ta\s+usługa|tę\s+usługę|"
    r"tej\s+bazy|tego\s+certyfikatu|co\s+teraz|a\s+teraz|stan\s+to\s+failed|"
    r"jest\s+w\s+stanie\s+failed|ma\s+stan\s+failed)\b",
    re.IGNORECASE,
)
_MARKERS_EN: Final = re.compile(
    r"\b(?:its|it|that\s+service|this\s+service|the\s+service|that\s+one|what\s+now|"
    r"status\s+is\s+failed|state\s+is\s+failed|it\s+failed)\b",
    re.IGNORECASE,
)
_FAILED: Final = re.compile(r"\bfailed\b", re.IGNORECASE)
_WHAT_NOW: Final = re.compile(r"^\W*(?:a\s+)?(?:co\s+teraz|what\s+now|a\s+teraz)\W*$", re.I)


@dataclass(frozen=True)
class SubjectVocabulary:
    subjects: tuple[Subject, ...]

    @classmethod
    def from_catalog(cls, documents: list[DocumentInfo]) -> SubjectVocabulary:
        services = sorted({name for document in documents for name in document.services})
        return cls(tuple(service_subject(name) for name in services) + BUILTIN_SUBJECTS)

    def find(self, text: str) -> list[Subject]:
        """Subjects named in `text`, in order of first appearance."""
        found = [(match.start(), subject) for subject in self.subjects
                 if (match := subject.pattern.search(text))]
        return [subject for _, subject in sorted(found, key=lambda item: item[0])]

    def names_service(self, text: str) -> bool:
        return any(subject.key.startswith("service:") and subject.pattern.search(text)
                   for subject in self.subjects)


@dataclass
class Resolution:
    original_question: str
    standalone_question: str | None
    status: ResolutionStatus = "unchanged"
    history_used: bool = False
    reason: str | None = None
    options: list[Subject] = field(default_factory=list)


def find_marker(message: str) -> re.Match[str] | None:
    matches = [m for m in (_MARKERS_PL.search(message), _MARKERS_EN.search(message)) if m]
    return min(matches, key=lambda m: m.start()) if matches else None


def is_follow_up(message: str, vocabulary: SubjectVocabulary) -> bool:
    """An anaphoric marker and no subject of its own before it (and no service anywhere)."""
    marker = find_marker(message)
    if marker is None or vocabulary.names_service(message):
        return False
    before = message[: marker.start()]
    if vocabulary.find(before):
        return False
    return all(word in _GENERIC or len(word) < 3 for word in words(before))


def subjects_from_history(
    history: list[HistoryMessage], vocabulary: SubjectVocabulary
) -> tuple[list[Subject], bool]:
    """Subjects of the most recent exchange that names any; user words come first.

    Returns the subjects and whether history was consulted at all.
    """
    recent = recent_history(history)
    exchanges: list[list[HistoryMessage]] = []
    for message in recent:
        if message.role == "user" or not exchanges:
            exchanges.append([message])
        else:
            exchanges[-1].append(message)
    for exchange in reversed(exchanges):
        for role in ("user", "assistant"):
            for message in exchange:
                if message.role != role:
                    continue
                subjects = vocabulary.find(message.content)
                if subjects:
                    return subjects, True
    return [], bool(recent)


def substitute(message: str, subject: Subject, language: Language) -> str:
    """Write the subject into the message in place of its marker."""
    if _FAILED.search(message) and re.search(r"\b(?:stan|status|state|it)\b", message, re.I):
        if language == "pl":
            return f"Co zrobić, gdy {subject.nominative} ma stan failed i nie uruchamia się?"
        return f"What should I do when {subject.english} is in the failed state and does not start?"
    if _WHAT_NOW.match(message):
        if language == "pl":
            return f"Co teraz zrobić z {subject.instrumental}?"
        return f"What should I do next with {subject.english}?"
    replacements_pl = (
        (r"\b(?:jej|jego)\s+(\w+)", rf"\1 {subject.genitive}"),
        (r"\b(?:jej|jego|niej|niego|tej\s+usługi|tej\s+bazy|tego\s+certyfikatu)\b",
         subject.genitive),
        # "Jak ją zrestartować?" -> "Jak zrestartować usługę X?": the object follows the verb.
        (r"\b(?:ją|go)\s+(\w+)", rf"\1 {subject.accusative}"),
        (r"\b(?:ją|go|nią|tę\s+usługę)\b", subject.accusative),
        (r"\b(?:nim|tej\s+usłudze)\b", subject.instrumental),
        (r"\bta\s+usługa\b", subject.nominative),
    )
    replacements_en = (
        (r"\bits\s+(\w+)", rf"the \1 of {subject.english}"),
        (r"\b(?:that|this|the)\s+(?:service|one)\b", subject.english),
        (r"\bit\b", subject.english),
    )
    for pattern, replacement in (*replacements_pl, *replacements_en):
        rewritten, count = re.subn(pattern, replacement, message, count=1, flags=re.IGNORECASE)
        if count:
            return rewritten
    return f"{message.rstrip(' ?.!')} ({subject.label(language)})?"


def resolve_follow_up(
    message: str,
    history: list[HistoryMessage],
    vocabulary: SubjectVocabulary,
    language: Language,
) -> Resolution:
    """A standalone question, or a request to clarify which object is meant."""
    result = Resolution(original_question=message, standalone_question=message)
    if not is_follow_up(message, vocabulary):
        return result
    subjects, consulted = subjects_from_history(history, vocabulary)
    result.history_used = consulted
    if len(subjects) != 1:
        result.standalone_question = None
        result.status = "clarification_needed"
        result.reason = "ambiguous_reference" if subjects else "missing_reference"
        result.options = subjects
        return result
    result.standalone_question = substitute(message, subjects[0], language)
    result.status = "resolved"
    result.history_used = True
    return result


def resolve_with_subject(
    original: str, subject: Subject, language: Language
) -> Resolution:
    """Complete a follow-up whose subject the user just supplied in a clarification reply."""
    return Resolution(
        original_question=original,
        standalone_question=substitute(original, subject, language),
        status="resolved",
        history_used=True,
    )
