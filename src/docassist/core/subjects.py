"""What a conversation can be about: services from the catalog and a lexicon of object kinds.

A follow-up ("Jak go odnowić?") is resolved against the subjects a thread has named. To
narrow the candidates, each mention carries what Polish agreement needs (grammatical gender
and number) and its kind, which decides which verbs fit it (only services are restarted).
The lexicon is small and explicit on purpose: it names the objects the procedure documents
talk about (services, the database, backups, certificates, incidents, access requests,
accounts, tickets, logs, nodes, jobs), not the whole language.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import pairwise
from typing import Final, Literal

from docassist.core.documents import DocumentInfo
from docassist.core.i18n import Language

Gender = Literal["m", "f", "n"]


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
    kind: str = "service"
    gender: Gender | None = None
    """Polish grammatical gender; None for a bare service name, which takes any."""
    plural: re.Pattern[str] | None = None
    """Forms that name several of them ("kopie", "backups")."""

    def label(self, language: Language) -> str:
        return self.nominative if language == "pl" else self.english


@dataclass(frozen=True)
class Mention:
    """A subject as one message names it."""

    subject: Subject
    gender: Gender | None
    plural: bool
    several: bool
    """The message names more than one object of this kind ("two nodes", "X and another")."""

    def agrees(self, genders: frozenset[Gender] | None, plural: bool | None) -> bool:
        if plural is not None and plural != self.plural:
            return False
        return genders is None or self.gender is None or self.gender in genders


# Polish case endings written onto a service name ("docassist-workera", "gatewayem").
_SERVICE_ENDINGS: Final = r"(?:a|u|em|ie|ze|owi|y|ów)?"


def service_subject(name: str) -> Subject:
    """A catalog service, also by its last part ("worker" for docassist-worker), inflected."""
    short = name.rsplit("-", 1)[-1]
    names = [re.escape(name)]
    if short != name and len(short) >= 3:
        names.append(re.escape(short))
    return Subject(
        key=f"service:{name}",
        pattern=re.compile(rf"(?<![\w-])(?:{'|'.join(names)}){_SERVICE_ENDINGS}(?![\w-])",
                           re.IGNORECASE),
        nominative=f"usługa {name}",
        genitive=f"usługi {name}",
        accusative=f"usługę {name}",
        instrumental=f"usługą {name}",
        english=f"the {name} service",
    )


def named_subject(name: str) -> Subject:
    """What a reply to "Which object do you mean?" names, as written ("gitleaks"), when the
    lexicon and the catalog do not know it: every case reads the same, as a name does."""
    return Subject(key=f"named:{name.casefold()}",
                   pattern=re.compile(rf"(?<![\w-]){re.escape(name)}(?![\w-])", re.IGNORECASE),
                   nominative=name, genitive=name, accusative=name, instrumental=name,
                   english=name, kind="named")


def _kind(key: str, pattern: str, forms: tuple[str, str, str, str, str], gender: Gender,
          plural: str | None = None) -> Subject:
    nominative, genitive, accusative, instrumental, english = forms
    return Subject(key=key, pattern=re.compile(pattern, re.IGNORECASE), nominative=nominative,
                   genitive=genitive, accusative=accusative, instrumental=instrumental,
                   english=english, kind=key, gender=gender,
                   plural=re.compile(plural, re.IGNORECASE) if plural else None)


# Order matters: a compound is found before its parts ("kopia bazy danych" is a backup, not
# the database; "zgłoszenie incydentu" is a ticket about an incident, one object).
BUILTIN_SUBJECTS: Final = (
    _kind("backup",
          # a copy of the configuration or of a file is not the database backup
          r"\bkopi(?:a|i|ę|ą|e|ach|ami|om)\b(?!\s+(?:zapasow\w*\s+)?(?:konfigur|plik|config))"
          r"(?:\s+zapasow\w*)?(?:\s+baz\w*(?:\s+danych)?)?"
          r"|\bzapasow\w+\s+kopi\w*|(?<!config\s)(?<!configuration\s)"
          r"\b(?:(?:manual|database|db|nightly)\s+)?backups?\b"
          r"|\bdumps?\b|\bzrzut\w*",
          ("kopia zapasowa bazy danych", "kopii zapasowej bazy danych",
           "kopię zapasową bazy danych", "kopią zapasową bazy danych", "the database backup"),
          "f", r"\bkopie\b|\bkopiach\b|\bkopiami\b|\bbackups\b|\bdumps\b"),
    _kind("database", r"\bbaz(?:a|y|ę|ie|ą)(?:\s+danych)?\b|\bdatabases?\b",
          ("baza danych DocAssist", "bazy danych DocAssist", "bazę danych DocAssist",
           "bazą danych DocAssist", "the DocAssist database"), "f", r"\bdatabases\b"),
    _kind("tls_certificate", r"\bcertyfikat\w*|\bcertificates?\b|\bcerts?\b",
          ("certyfikat TLS", "certyfikatu TLS", "certyfikat TLS", "certyfikatem TLS",
           "the TLS certificate"), "m", r"\bcertyfikaty\b|\bcertificates\b|\bcerts\b"),
    _kind("ticket", r"\bzgłoszeni\w*(?:\s+incydent\w*)?|\bzgloszeni\w*|\btickets?\b",
          ("zgłoszenie", "zgłoszenia", "zgłoszenie", "zgłoszeniem", "the ticket"), "n",
          r"\bzgłoszenia\b|\btickets\b"),
    _kind("incident", r"\bincydent\w*|\bincidents?\b",
          ("incydent", "incydentu", "incydent", "incydentem", "the incident"), "m",
          r"\bincydenty\b|\bincidents\b"),
    _kind("access_request",
          r"\bwnios(?:ek|ku|ki|kiem|kach|ków)\b(?:\s+o\s+dost\w+(?:\s+\w+ow\w*)?)?"
          r"|\b(?:access\s+)?requests?\s+for\s+access\b|\baccess\s+requests?\b",
          ("wniosek o dostęp", "wniosku o dostęp", "wniosek o dostęp", "wnioskiem o dostęp",
           "the access request"), "m", r"\bwnioski\b|\bwniosków\b|\brequests\b"),
    _kind("access",
          r"\b(?:production|prod|admin\w*|operator|test|emergency)\s+access\b"
          r"|\bdost[eę]p\w*\s+(?:do\s+produkcji|produkcyjn\w*|administracyjn\w*|testow\w*|awaryjn\w*)",
          ("dostęp produkcyjny", "dostępu produkcyjnego", "dostęp produkcyjny",
           "dostępem produkcyjnym", "production access"), "m"),
    _kind("key", r"\bklucz(?:a|em|u|e|y|om)?\b(?:\s+prywatn\w*)?|\b(?:private\s+)?keys?\b",
          ("klucz prywatny", "klucza prywatnego", "klucz prywatny", "kluczem prywatnym",
           "the private key"), "m", r"\bklucze\b|\bkeys\b"),
    _kind("account", r"\bkont(?:o|a|em|u)\b|\baccounts?\b",
          ("konto", "konta", "konto", "kontem", "the account"), "n", r"\baccounts\b"),
    _kind("logs", r"\blog(?:i|ów|ach|ami)\b|\blogs\b",
          ("logi", "logów", "logi", "logami", "the logs"), "m", r".+"),
    _kind("node", r"\bwęz(?:eł|ła|ły|łów|łem)\b|\bnodes?\b|\b[\w-]*node-\d+\b",
          ("węzeł", "węzła", "węzeł", "węzłem", "the node"), "m", r"\bwęzły\b|\bnodes\b"),
    _kind("job", r"\bjobs?\b|\bzadani(?:e|a|em|u)\b",
          ("zadanie", "zadania", "zadanie", "zadaniem", "the job"), "n", r"\bjobs\b"),
)

# A service's gender is its head noun's: "usługa docassist-api" (f), "proces …" (m).
_FEMININE_HEAD: Final = re.compile(r"\b(?:usług\w*|aplikacj\w*|bram\w*)\s+$", re.IGNORECASE)
_MASCULINE_HEAD: Final = re.compile(r"\b(?:proces\w*|serwis\w*|demon\w*|worker\w*)\s+$",
                                    re.IGNORECASE)
_TWO_BEFORE: Final = re.compile(
    r"\b(?:two|both|several|dwa|dwie|dwóch|dwoch|oba|obie|obu|kilka|trzy|three)\s+(?:\w+\s+)?$",
    re.IGNORECASE)
_ANOTHER_AFTER: Final = re.compile(
    r"^[^.?!]{0,60}?\b(?:and|i|oraz|or|lub|albo)\s+(?:(?:a|an|the)\s+)?(?:another|second|drug\w+|"
    r"inn\w+|kolejn\w+)\b", re.IGNORECASE)
_CONJUNCTION: Final = re.compile(r"\b(?:and|i|oraz|or|lub|albo)\b", re.IGNORECASE)


@dataclass(frozen=True)
class SubjectVocabulary:
    subjects: tuple[Subject, ...]

    @classmethod
    def from_catalog(cls, documents: list[DocumentInfo]) -> SubjectVocabulary:
        services = sorted({name for document in documents for name in document.services})
        return cls(tuple(service_subject(name) for name in services) + BUILTIN_SUBJECTS)

    def mentions(self, text: str) -> list[Mention]:
        """Subjects named in `text`, in order of first appearance; a compound masks its parts."""
        masked = text
        found: list[tuple[int, Mention]] = []
        for subject in self.subjects:
            matches = list(subject.pattern.finditer(masked))
            if not matches:
                continue
            first = matches[0]
            found.append((first.start(), _mention(subject, masked, matches)))
            for match in matches:
                masked = masked[: match.start()] + " " * len(match.group(0)) + masked[match.end():]
        return [mention for _, mention in sorted(found, key=lambda item: item[0])]

    def find(self, text: str) -> list[Subject]:
        """Subjects named in `text`, in order of first appearance."""
        return [mention.subject for mention in self.mentions(text)]

    def names_service(self, text: str) -> bool:
        return any(subject.kind == "service" and subject.pattern.search(text)
                   for subject in self.subjects)

    def by_key(self, keys: list[str]) -> list[Subject]:
        return [subject for subject in self.subjects if subject.key in keys]


def _norm(match: re.Match[str]) -> str:
    return " ".join(match.group(0).casefold().split())


def _mention(subject: Subject, text: str, matches: list[re.Match[str]]) -> Mention:
    first = matches[0]
    before, after = text[: first.start()], text[first.end():]
    gender = subject.gender
    if subject.kind == "service":
        if _FEMININE_HEAD.search(before):
            gender = "f"
        elif _MASCULINE_HEAD.search(before):
            gender = "m"
    plural = any(subject.plural is not None and subject.plural.search(m.group(0))
                 for m in matches)
    # Two different mentions joined by "and" are two objects; "node worker-node-2" is one.
    joined = any(_norm(left) != _norm(right)
                 and _CONJUNCTION.search(text[left.end():right.start()])
                 for left, right in pairwise(matches))
    several = bool(
        (plural and _TWO_BEFORE.search(before))
        or (subject.kind != "service" and _ANOTHER_AFTER.search(after))
        or joined)
    return Mention(subject, gender, plural, several)
