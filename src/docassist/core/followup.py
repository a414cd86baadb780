"""Follow-up resolution: turn "How do I check its status?" into a standalone question.

Rule-based, for Polish and English, and honest about it. A follow-up is a message with an
anaphoric reference ("jej", "go", "je", "tej usługi", "its", "it", "them", "what now") and no
subject of its own before it, or an elliptical continuation ("a na produkcji?", "and on the
cluster?"). Candidates are the subjects the bounded history names: first those in the
user's own messages, then those only the assistant named. The reference narrows them: a
Polish pronoun or past-tense verb must agree in gender and number ("go" is masculine or
neuter, "ją" feminine, "je" plural, "wygasł" masculine), and a verb must fit its object
(only services are restarted, only certificates renewed). One candidate left: the question
is rewritten with it. Several or none: DocAssist asks which object is meant, naming them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final

from docassist.core.i18n import Language
from docassist.core.i18n.detection import feature_language
from docassist.core.intents import FILLER_WORDS, words
from docassist.core.state import HistoryMessage, recent_history
from docassist.core.statuses import ResolutionStatus
from docassist.core.subjects import (
    BUILTIN_SUBJECTS,
    Gender,
    Mention,
    Subject,
    SubjectVocabulary,
    service_subject,
)

__all__ = ["BUILTIN_SUBJECTS", "Resolution", "Subject", "SubjectVocabulary", "find_marker",
           "is_follow_up", "resolve_follow_up", "resolve_with_subject", "service_subject"]

ELLIPSIS_MAX_WORDS: Final = 10
"""An elliptical continuation ("a na produkcji?") is short; longer messages stand alone."""
MAX_WORDS_BEFORE_REFERENCE: Final = 1
"""Content words a follow-up may have before its reference (the verb: "how do I renew it")."""
BARE_ELLIPSIS_MAX_WORDS: Final = 4
MAX_WORDS_BEFORE_COMPLEMENT: Final = 8
"""Words before a reference that complements a named object ("how do I check the logs for")."""
PRO_DROP_MAX_WORDS: Final = 6
BARE_QUESTION_MAX_WORDS: Final = 3
"""Without any candidate in history, only this short a continuation needs asking back."""

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
    logi log co teraz znaczy oznacza je ich they them their mogę moge można mozna long
    ile kto komu kogo czym whom whose many much gdzie leży leżą lezy leza znajdę znajde""".split()
)

_PRONOUNS_PL: Final[dict[str, tuple[frozenset[Gender] | None, bool | None]]] = {
    **dict.fromkeys(("jej", "ją", "nią", "niej", "ona"), (frozenset({"f"}), False)),
    "ono": (frozenset({"n"}), False), "oni": (None, True),
    **dict.fromkeys(("jego", "go", "niego", "nim", "mu", "niemu"), (frozenset({"m", "n"}), False)),
    **dict.fromkeys(("ich", "nich", "nimi", "im"), (None, True)),
    **dict.fromkeys(("tego", "tym", "ten"), (frozenset({"m", "n"}), False)),
    **dict.fromkeys(("tej", "tę", "tą"), (frozenset({"f"}), False)),
}
_MARKERS_PL: Final = re.compile(
    r"\b(?:jej|jego|ją|nią|niego|niej|nim|go|je|ich|nich|nimi|ona|ono|oni|tej\s+usługi|tej\s+usłudze|"
    r"ta\s+usługa|tę\s+usługę|tej\s+bazy|tego\s+certyfikatu|co\s+teraz|a\s+teraz|"
    r"stan\s+to\s+failed|jest\s+w\s+stanie\s+failed|ma\s+stan\s+failed|"
    r"(?<=jak\s)to(?=\s+\w+[ćc]\b)|"
    # a demonstrative standing alone: "jak tego uniknąć?", "co z tym zrobić?"
    r"(?:tego|tym|tej|tę|ten|tą)(?=\s*(?:[?.,!]|$)|\s+\w+[ćc]\b))\b",
    re.IGNORECASE,
)
# "it" that refers to nothing: the IT department, or a dummy subject ("is it ok to reboot
# the db?", "is it going to rain?"): these name their own subject, or none is needed.
_REFERRING_IT: Final = (
    r"(?-i:(?!IT\b))it(?!(?:\s+is|\s+was|'s)?\s+(?:(?:ok|okay|safe|fine|allowed|possible|"
    r"alright|worth|normal|necessary|required|true|wise|better|good|bad|legal|mandatory)"
    r"\s+(?:to|if|for|when)|going)\b)")
_MARKERS_EN: Final = re.compile(
    # "its a typo fix": "it's" typed without its apostrophe, not a possessive.
    r"\b(?:its(?!\s+(?:a|an|the|not|ok|okay|fine|just|been|all|only|too|so|very|really|"
    r"still|already|gonna|going|about|because)\b)|"
    # "could that be it?", "is that it?": the cause just named, not an earlier subject.
    r"(?<!\bbe\s)(?<!that\s)(?<!this\s)" + _REFERRING_IT + r"|they|them|their|"
    r"that\s+service|this\s+service|"
    r"the\s+service(?!\s+desk)|that\s+one|"
    r"this\s+one|(?:that|this)(?=\s*(?:[?.!]|$))|"
    r"(?:do|undo|redo|fix|check|verify|repeat)\s+(?:that|this)|"
    r"(?:that|this)(?=\s+(?:fails?|failed|works?|worked|happens?|breaks?|doesn't|does\s+not)\b)|"
    r"what\s+now|status\s+is\s+failed|state\s+is\s+failed|it\s+failed)\b",
    re.IGNORECASE,
)
_PLURAL_EN: Final = re.compile(r"\b(?:they|them|their)\b", re.IGNORECASE)
_SERVICE_PHRASE: Final = re.compile(r"\b(?:usług\w*|service)\b", re.IGNORECASE)
_ELLIPSIS: Final = re.compile(
    r"^\W*(?:a|i|oraz|and|or|but|what\s+about|how\s+about|a\s+co\s+z|a\s+jak\s+z)\b"
    # "what do I check afterwards?": the continuation is at the end
    r"|\b(?:afterwards|after\s+that|potem|następnie|nastepnie|później|pozniej)\W*$", re.I)
# A Polish past-tense verb right after a conjunction has the missing subject: "jeśli wygasł".
_PAST_VERB: Final = re.compile(
    r"(?:^|\b(?:jeśli|jesli|jeżeli|jezeli|gdy|kiedy|czemu|dlaczego|bo|że|ze|a)\s+)"
    r"(?:(?:już|juz|nie|się|sie|znowu|znów|wczoraj|dziś|nagle|jednak)\s+)*"
    r"(?P<verb>\w{2,}?(?P<ending>ł|ła|ło|ły))\b"
    # "powinien/powinna/powinno" mark gender wherever they stand
    r"|\b(?P<modal>powin(?:ien|na|no|ny))\b", re.IGNORECASE)
_MODAL_ENDING: Final = {"powinien": "ł", "powinna": "ła", "powinno": "ło", "powinny": "ły"}
_PAST_GENDER: Final[dict[str, tuple[frozenset[Gender] | None, bool]]] = {
    "ł": (frozenset({"m"}), False), "ła": (frozenset({"f"}), False),
    "ło": (frozenset({"n"}), False), "ły": (None, True),
}
# Verbs and the object kinds they fit; a verb not listed fits any object.
_VERB_FITS: Final = (
    (re.compile(r"\b(?:z?restart\w*|reboot\w*|reload\w*|prze[lł]adow\w*|prze[lł]aduj\w*)", re.I),
     {"service"}),
    (re.compile(r"\b(?:uruchom\w*|zatrzym\w*|wy[lł][aą]cz\w*|w[lł][aą]cz\w*|start\w*|stop\w*)",
                re.I), {"service", "job"}),
    (re.compile(r"\b(?:renew\w*|odn[oó]w\w*|odnawia\w*)", re.I), {"tls_certificate"}),
    (re.compile(r"\b(?:wygas\w*|wygaś\w*|expir\w*|valid\w*|ważn\w*|wazn\w*)", re.I),
     {"tls_certificate", "access", "account"}),
    (re.compile(r"\b(?:restor\w*|odtw[oó]rz\w*|odtwarza\w*|przywr[oó]\w*|recover\w*)", re.I),
     {"backup", "database"}),
    (re.compile(r"\b(?:cordon\w*|uncordon\w*|drain\w*)", re.I), {"node"}),
    (re.compile(r"\b(?:approv\w*|zatwierdz\w*|akceptuj\w*)", re.I), {"access_request", "access"}),
    (re.compile(r"\b(?:clos\w*|zamkn\w*|zamyka\w*)", re.I), {"incident", "ticket"}),
    (re.compile(r"\b(?:requeue\w*|retr(?:y|ied|ies)\w*|ponow\w*)", re.I), {"job"}),
    (re.compile(r"\b(?:kept|keep\w*|retain\w*|przechow\w*|trzyma\w*|zachowa\w*)", re.I),
     {"backup", "logs"}),
    (re.compile(r"\b(?:read\w*|przeczyt\w*|czyta\w*)", re.I), {"logs"}),
    (re.compile(r"\b(?:consisten\w*|spójn\w*|spojn\w*)", re.I), {"database", "backup"}),
    (re.compile(r"\b(?:unlock\w*|odblok\w*)", re.I), {"account"}),
    (re.compile(r"\b(?:roll\w*\s+(?:\w+\s+)?back|rollback|wycof\w*|revert\w*|cofn\w*)", re.I),
     {"tls_certificate", "service"}),
    # Things that run have a state; a backup or logs do not.
    (re.compile(r"\b(?:stan\w*|status\w*|state)\b", re.I),
     {"service", "database", "node", "job", "incident", "ticket", "access_request", "account",
      "tls_certificate"}),
)
_FAILED: Final = re.compile(r"\bfailed\b", re.IGNORECASE)
_WHAT_NOW: Final = re.compile(r"^\W*(?:a\s+)?(?:co\s+teraz|what\s+now|a\s+teraz)\W*$", re.I)


@dataclass
class Resolution:
    original_question: str
    standalone_question: str | None
    status: ResolutionStatus = "unchanged"
    history_used: bool = False
    reason: str | None = None
    options: list[Subject] = field(default_factory=list)


@dataclass(frozen=True)
class Reference:
    """What the follow-up tells about its missing object."""

    genders: frozenset[Gender] | None = None
    plural: bool | None = None
    kinds: frozenset[str] | None = None
    neuter_or_plural: bool = False
    """ "je" is both the neuter singular ("konto") and the plural ("kopie") accusative."""

    def admits(self, mention: Mention) -> bool:
        if self.kinds is not None and mention.subject.kind not in self.kinds:
            return False
        if self.neuter_or_plural:
            return mention.plural or mention.gender in ("n", None)
        return mention.agrees(self.genders, self.plural)


def find_marker(message: str) -> re.Match[str] | None:
    """The first reference in the message. Polish pronouns are not looked for in a message
    that reads as English: "i go by another name", "want to go through the lab" hold no
    "go" (Polish "him/it"). Also one of the learned selector's features
    (message_features.py): a change here means retraining it (scripts/train_selector.py)."""
    english = feature_language(message, "pl") == "en"
    found = (_MARKERS_EN.search(message),) if english else (
        _MARKERS_PL.search(message), _MARKERS_EN.search(message))
    matches = [match for match in found if match]
    return min(matches, key=lambda match: match.start()) if matches else None


def _is_elliptical(message: str, vocabulary: SubjectVocabulary) -> bool:
    """ "a na produkcji?", "and on the cluster?": a short continuation with no subject."""
    return (bool(_ELLIPSIS.search(message)) and len(words(message)) <= ELLIPSIS_MAX_WORDS
            and not vocabulary.find(message))


def _is_pro_drop(message: str, vocabulary: SubjectVocabulary) -> bool:
    """ "Jakie uprawnienia powinien mieć?": Polish drops the subject and the verb keeps its
    gender. Resolved only when exactly one candidate fits; otherwise searched as written."""
    if vocabulary.find(message) or vocabulary.names_service(message):
        return False
    count = len(words(message))
    # "Ile trwa?": a bare verb question is too short to stand alone
    bare = (count <= BARE_QUESTION_MAX_WORDS and message.rstrip().endswith("?")
            and not re.search(r"(?<=\w\W)[A-Z]|\w{8,}", message.strip()))  # no name of its own
    return bare or (count <= PRO_DROP_MAX_WORDS and bool(_PAST_VERB.search(message)))


_COMPLEMENT_BEFORE: Final = re.compile(
    r"\b(?:for|of|from|about|with|on|in|do|dla|od|z|ze|o|w|na|u)\s+$", re.IGNORECASE)
_POSSESSIVE_MARKER: Final = re.compile(
    r"^(?:tej|tego|jej|jego|ich|its|their|that\s+service|this\s+service)\b", re.IGNORECASE)


def _is_complement(before: str, marker: str) -> bool:
    return bool(_COMPLEMENT_BEFORE.search(before) or _POSSESSIVE_MARKER.match(marker))


_TOPIC_FIRST: Final = re.compile(r"^\s*(?P<topic>[^\s?!.:;,][^?!.:;]{0,40}?)(?:\s+[-–—]\s+|:\s+)")
"""Chat's topic first: "gitleaks - how do I run it?", "APDEX: co to jest i jak go liczyć?"."""


_DEFINED_FIRST: Final = re.compile(
    r"^\s*(?:what(?:'s| is| are)|co to (?:jest|są|za)|czym (?:jest|są))\s+"
    r"(?P<topic>[^\s?!.:;,][^?!.:;,]{0,40}?)\s*(?:,\s*)?\b(?:and|i|oraz|a)\s", re.IGNORECASE)
"""A question that first asks what its object is: "co to jest apdex i po co go używać?"."""


def names_its_topic(message: str) -> bool:
    """A message that names its object first, set off by a dash or a colon ("apdex - what
    is it?", "APDEX: co to jest?"), or asked about before the question that refers to it
    ("co to jest apdex i po co go używać?"): its "it" is that. A new operator was asked
    "Which object do you mean?" about both. Read when the selector decides, not by the
    resolver: the selector was trained on the resolver's readings."""
    topic = _TOPIC_FIRST.match(message) or _DEFINED_FIRST.match(message)
    return topic is not None and any(
        word not in _GENERIC and word not in FILLER_WORDS for word in words(topic.group("topic")))


def is_follow_up(message: str, vocabulary: SubjectVocabulary) -> bool:
    """A reference with no subject of its own before it (and no service anywhere), or an
    elliptical continuation."""
    if vocabulary.names_service(message):
        return False
    marker = find_marker(message)
    if marker is None:
        return _is_elliptical(message, vocabulary)
    before = message[: marker.start()]
    if vocabulary.find(before):
        # "the logs for it", "logi tej usługi": the named object belongs to the reference.
        return _is_complement(before, marker.group(0)) and len(words(before)) <= (
            MAX_WORDS_BEFORE_COMPLEMENT)
    # "how do I renew it?" is a follow-up; "is the printer broken? fix it" names its own.
    content = [word for word in words(before) if word not in _GENERIC and len(word) >= 3]
    return len(content) <= MAX_WORDS_BEFORE_REFERENCE


def read_reference(message: str) -> Reference:
    """Gender, number and fitting kinds the follow-up asks of its object."""
    genders: frozenset[Gender] | None = None
    plural: bool | None = None
    neuter_or_plural = False
    for word in words(message):
        if word == "je":
            neuter_or_plural = True
            break
        if word in _PRONOUNS_PL:
            genders, plural = _PRONOUNS_PL[word]
            break
    else:
        if past := _PAST_VERB.search(message):
            ending = past.group("ending") or _MODAL_ENDING[past.group("modal").casefold()]
            genders, plural = _PAST_GENDER[ending.casefold()]
        elif _PLURAL_EN.search(message):
            plural = True
    kinds: set[str] | None = None
    for pattern, fits in _VERB_FITS:
        if pattern.search(message):
            kinds = set(fits) if kinds is None else kinds & fits or kinds | fits
    if re.search(r"\b(?:tej\s+usług\w*|tę\s+usługę|ta\s+usługa|(?:that|this|the)\s+service)\b",
                 message, re.IGNORECASE):
        kinds = {"service"}
    return Reference(genders, plural, frozenset(kinds) if kinds is not None else None,
                     neuter_or_plural)


def history_mentions(history: list[HistoryMessage], vocabulary: SubjectVocabulary
                     ) -> tuple[list[Mention], list[Mention]]:
    """Subjects the user named (newest first), then those only the assistant named."""
    by_role: dict[str, dict[str, Mention]] = {"user": {}, "assistant": {}}
    for message in reversed(recent_history(history)):
        named = by_role[message.role]
        for mention in vocabulary.mentions(message.content):
            known = named.get(mention.subject.key)
            if known is None or (mention.several and not known.several):
                named[mention.subject.key] = mention
    user = list(by_role["user"].values())
    assistant = [m for key, m in by_role["assistant"].items() if key not in by_role["user"]]
    return user, assistant


def _narrow(message: str, history: list[HistoryMessage], vocabulary: SubjectVocabulary
            ) -> tuple[list[Mention], list[Subject]]:
    """Candidates left after agreement and verb fit, and every candidate before narrowing."""
    reference = read_reference(message)
    user, assistant = history_mentions(history, vocabulary)
    own = {subject.key for subject in vocabulary.find(message)}  # "logs for it": not the logs
    user = [m for m in user if m.subject.key not in own]
    assistant = [m for m in assistant if m.subject.key not in own]
    for group in (user, assistant):
        fitting = [mention for mention in group if reference.admits(mention)]
        if fitting:
            return fitting, [m.subject for m in (*user, *assistant)]
    return [], [m.subject for m in (*user, *assistant)]


def resolve_follow_up(
    message: str,
    history: list[HistoryMessage],
    vocabulary: SubjectVocabulary,
    language: Language,
) -> Resolution:
    """A standalone question, or a request to clarify which object is meant."""
    result = Resolution(original_question=message, standalone_question=message)
    if not is_follow_up(message, vocabulary):
        if _is_pro_drop(message, vocabulary):
            fitting, _ = _narrow(message, history, vocabulary)
            if len(fitting) == 1 and not fitting[0].several:
                result.standalone_question = substitute(message, fitting[0].subject, language)
                result.status, result.history_used = "resolved", True
        return result
    fitting, named = _narrow(message, history, vocabulary)
    result.history_used = bool(recent_history(history))
    if len(fitting) == 1 and not fitting[0].several:
        result.standalone_question = substitute(message, fitting[0].subject, language)
        result.status = "resolved"
        result.history_used = True
        return result
    if not fitting and find_marker(message) is None and (
            named or len(words(message)) > BARE_ELLIPSIS_MAX_WORDS):
        return result  # a longer continuation with nothing to continue stands alone
    result.standalone_question = None
    result.status = "clarification_needed"
    result.reason = "ambiguous_reference" if fitting else "missing_reference"
    result.options = [m.subject for m in fitting] if fitting else named
    return result


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
    for pattern, replacement in _replacements(subject):
        rewritten, count = re.subn(pattern, replacement, message, count=1, flags=re.IGNORECASE)
        if count:
            return rewritten
    if (past := _PAST_VERB.search(message)) is not None and past.group("verb"):
        verb = past.start("verb")
        return f"{message[:verb]}{subject.nominative} {message[verb:]}"
    return f"{message.rstrip(' ?.!')} ({subject.label(language)})?"


def _replacements(subject: Subject) -> tuple[tuple[str, str], ...]:
    return (
        (r"\b(?:jej|jego|ich)\s+(\w+)", rf"\1 {subject.genitive}"),
        (r"\b(?:jej|jego|niej|niego|ich|nich|tej\s+usługi|tej\s+bazy|tego\s+certyfikatu)\b",
         subject.genitive),
        # "Jak ją zrestartować?" -> "Jak zrestartować usługę X?": the object follows the verb.
        (r"\b(?:ją|go|je)\s+(\w+)", rf"\1 {subject.accusative}"),
        (r"\b(?:ją|go|je|nią|tę\s+usługę)\b", subject.accusative),
        (r"\b(?:nim|nimi|tej\s+usłudze)\b", subject.instrumental),
        (r"\bta\s+usługa\b", subject.nominative),
        (r"\b(?:its|their)\s+(\w+)", rf"the \1 of {subject.english}"),
        (r"\b(?:that|this|the)\s+(?:service|one)\b", subject.english),
        (r"\b(?:it|they|them)\b", subject.english),
    )


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
