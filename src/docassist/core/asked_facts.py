"""The kind of fact a question asks for (an amount of money, how often, how long, at what
time, which version, what percentage, what size, what default) and whether a passage states
one of that kind.

A page on the question's topic that states no fact of the asked kind does not answer it:
"ile kosztuje miesięcznie jeden dev klaster?" on the cluster page that names no price, "how
often do we rotate the auth0 credentials?" on a rotation runbook that gives no schedule.
Such near misses were most of the unanswerable questions still answered on the twenty-third
and twenty-fourth held-out sets (the twenty-fifth's were mostly yes/no questions, which this
does not read; core/named_terms.py reads those that name a thing). On the spent sets 19–24
(12 collections, 960 questions), refusing when the page's retrieved passages state no fact
of the asked kind refused 5 answered unanswerable questions and 3 answers from a wrong page,
and 1 right answer (docs/evaluation-method.md, "Does the page state what is asked?").

The patterns read English and Polish questions and passages. They are deliberately narrow on
the question side (a money question names money: "how much does … cost", "ile kosztuje",
"stipend", not any "pay" or "rate": "can we pay them by bank transfer?", "at what error rate
does the alert fire?") and broad on the passage side (any amount, percentage of a rate,
"free", "volunteer"; any number with a unit of time; "every", "monthly", "cron"), so that a
page that answers in its own terms still answers.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from enum import StrEnum
from typing import Final, NamedTuple

from docassist.core.glossary import default_glossary
from docassist.core.text import fold, sentences, stem


class AskedFact(StrEnum):
    MONEY = "money"
    FREQUENCY = "frequency"
    DURATION = "duration"
    CLOCK = "clock"
    """A time of day ("what time is the standup?", "o której startuje transfer?")."""
    PERCENT = "percent"
    """A percentage ("what coverage % does CI enforce?", "ile procent pensji dostaję?")."""
    SIZE = "size"
    """A size limit ("is there a max size for uploads?", "jaki jest limit rozmiaru paczki?")."""
    VERSION = "version"
    """Which version ("which node version do we use?", "jaka minimalna wersja libseccomp?")."""
    DEFAULT = "default"
    """A default value ("what's the default timeout?", "jaki jest domyślny limit?")."""
    COUNT = "count"
    """How many of a thing: read by `counted` and `count_unstated`, since what is counted
    matters ("how many hero scenarios…?" is not answered by any number on the page)."""


_CARDINAL_EN: Final = (r"one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
                       r"thirteen|fourteen|fifteen|sixteen|eighteen|twenty|thirty|forty|forty-five|"
                       r"fifty|sixty|ninety|hundred")
_CARDINAL_PL: Final = (r"jed(?:en|na|no|nego|nej)|dw(?:a|ie|óch|oje)|trz(?:y|ech|oje)|"
                       r"czter(?:y|ech)|pię(?:ć|ciu)|sześ(?:ć|ciu)|sied(?:em|miu)|o(?:siem|śmiu)|"
                       r"dziewię(?:ć|ciu)|dziesię(?:ć|ciu)")
"""Number words, for a length of time (DURATION) and for a count beside the counted thing."""
_NUMBER_EN: Final = (r"(?:\d+(?:[.,]\d+)?|" + _CARDINAL_EN
                     + r"|a|an|half an?|several|few|couple of|a few)")
_NUMBER_PL: Final = r"(?:\d+|" + _CARDINAL_PL + r"|kilk(?:a|u)|pół)"
_TIME_EN: Final = (r"(?:seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|nights?|weeks?|"
                   r"fortnights?|months?|years?|quarters?|sprints?)")
_TIME_PL: Final = (r"(?:sekund\w*|minut\w*|godzin\w*|dni|dzień|dnia|tydzień|tygodni\w*|"
                   r"miesi(?:ąc|ęc)\w*|rok\w*|lat)")

_MONEY_ASKED: Final = re.compile(
    r"\bhow much\b[^?.!]*\b(?:cost|costs|pay|paid|charge|charged|spend|budget|price|fee|fees|"
    r"worth)\b"
    r"|\bhow much (?:is|are|does|do)\b[^?.!]*\b(?:tickets?|licen[cs]es?|seats?|subscriptions?)\b"
    r"|\bwhat(?:'s|s| is| are| do we| does)?\b[^?.!]*\b(?:price|cost|fee|budget|stipend|"
    r"salary|allowance|per diem)\b"
    r"|\b(?:mileage|hourly|daily|reimbursement|per diem) rate\b"
    r"|\b(?:get|be|are|is)\s+paid\b|\bextra pay\b|\bstipends?\b|\bsalar(?:y|ies)\b"
    r"|\bile\b[^?.!]*\b(?:kosztuj\w*|koszt\w*|płac\w*|zapłac\w*|budżet\w*|kas[aęy]|wynosi|"
    r"stypendi\w*|zwrot\w*)"
    r"|\b(?:kosztuje|kosztują|koszt|koszty|cena|ceny|cenę|opłata|opłaty|opłatę|stawka|stawki|"
    r"stawkę)\b"
    r"|\b(?:dostaj\w+|dostan\w+|otrzymuj\w+)\b[^?.!]*\b(?:kas[aęy]|pieniądz\w*|pieniędzy|"
    r"wynagrodz\w*|stypendi\w*|zapłat\w*)\b"
    r"|\bwynagrodz\w*", re.IGNORECASE)
_WHEN_ASKED: Final = re.compile(
    r"\b(?:deadline|when|when's|by when|what date|which day|kiedy|do kiedy|termin\w*)\b",
    re.IGNORECASE)
"""A question about when ("whats the monthly deadline for requesting the salary run?", "when
do we get paid?") names money without asking an amount."""
_FREQUENCY_ASKED: Final = re.compile(
    r"\bhow (?:often|frequently)\b|\bjak często\b|\bco ile\b|\bw jakim cyklu\b", re.IGNORECASE)
_DURATION_ASKED: Final = re.compile(
    r"\bhow (?:long|soon|quickly)\b|\bhow many (?:more )?(?:business |working )?" + _TIME_EN
    + r"\b|\bhow much (?:time|notice|lead time|downtime)\b|\bwithin how\b"
    r"|\bjak (?:długo|szybko)\b|\bile (?:jeszcze )?(?:czasu|trwa\w*)\b"
    r"|\bile (?:mam |mamy |ma )?(?:roboczych )?" + _TIME_PL
    + r"|\bw ile (?:\w+ )?" + _TIME_PL + r"|\bna (?:ile (?:czasu|" + _TIME_PL + r")|jak długo)\b"
    r"|\bpo ilu\b|\bw jakim czasie\b|\bile (?:mam|mamy|ma|maj\w+) czasu\b"
    r"|\b(?:what|which|jaki\w*)\b[^?.!]*\b(?:ttls?|retention|retencj\w*|expiry|expiration|"
    r"time-?outs?|czas\w* ważnoś\w*)\b", re.IGNORECASE)
"""How long, also asked by the name of a setting that is a length of time ("what velero TTL…",
"jaki timeout…", "czas ważności"). Over the 19 tuning questions that ask one so (stop 81),
reading it turned 5 of the 6 answered unanswerable ones into refusals and cost none of the 7
right answers."""
_CLOCK_ASKED: Final = re.compile(
    r"\b(?:at )?what time\b(?! (?:range|zone|frame|window|period|limit|box)s?\b)|\bwhat hour\b"
    r"|\bo (?:której|ktorej|jakiej) (?:godz\w*|(?=(?:jest|są|sa|się|sie|zaczyna\w*|startuj\w*|"
    r"rusza\w*|leci|odbywa\w*|przychodzi\w*|kończy\w*|konczy\w*|zwykle|dokładnie|dokladnie|"
    r"codziennie|mam|mamy|trzeba|muszę|musze|powin\w+)\b))", re.IGNORECASE)
"""A time of day. "o której" alone is also a relative pronoun ("ta zasada, o której ciągle
ktoś wspomina": which someone keeps mentioning), so a verb or "godzinie" must follow. Over the
36 questions of the tuning sets 1–34 that ask a time (stop 78), reading it turned all 4
answered unanswerable ones into refusals and cost none of the 18 right answers."""
_PERCENT_ASKED: Final = re.compile(
    r"\b(?:what|which|min(?:imum)?|max(?:imum)?|typical|required)\s+(?:[\w-]+\s+){0,3}?"
    r"(?:%|percent(?:age)?s?\b)|\bis (?:it|there) (?:a |an )?(?:\w+\s+){0,2}?%"
    r"|\bminimum\s+(?:[\w-]+\s+){0,2}?coverage\b|\bcoverage\s+(?:target|threshold|"
    r"requirement|gate|minimum)\b|\buptime (?:target|sla)\b|\bwhat uptime\b"
    r"|\b(?:ile|jaki\w*|o ile|do ilu)\s+procent|\bw procentach\b|\bjaki\w* (?:\w+\s+)?próg\b"
    r"|\bminimaln\w*\s+(?:[\w-]+\s+){0,2}?(?:pokryci\w*|coverage)\b", re.IGNORECASE)
"""A percentage (a coverage threshold, an uptime target, a share of pay): not a question
that names one ("am I eligible for 10% time?"). Over the 93 questions of the tuning sets 1–34
that speak of percentages, coverage or uptime (stop 78), reading it turned 3 of the 6
answered unanswerable ones into refusals and cost none of the 39 right answers."""
_SIZE_ASKED: Final = re.compile(
    r"\bsize limits?\b|\bmax(?:imum)?\.? (?:[\w-]+ )?size\b|\bmin(?:imum)?\.? (?:[\w-]+ )?size\b"
    r"|\bhow (?:big|large) (?:can|may|is allowed|a file)\b|\blimit\w* rozmiar\w*"
    r"|\b(?:maksymaln|minimaln|max|min)\w*\.? (?:[\w-]+ )?rozmiar\w*|\bod jakiego rozmiaru\b"
    r"|\bile (?:GB|MB|TB|KB|GiB|MiB)\b", re.IGNORECASE)
_SIZE_NOT_ASKED: Final = re.compile(
    r"\b(?:wording|message|error text|komunikat\w*|treść|groups?|teams?|committees?|tribes?|"
    r"grup\w*|zesp[oó]\w*)\b", re.IGNORECASE)
"""Asking what to say about a size limit, not the limit; or how many people a group needs
(COUNT reads those). Over the 136 questions of the tuning sets 1–34 that speak of sizes or
limits (stop 78), reading a size turned 4 of the 28 answered unanswerable ones into refusals
and cost none of the 49 right answers."""
_VERSION_ASKED: Final = re.compile(
    r"\b(?:which|what)\s+(?:[\w.+#-]+\s+){0,3}?versions?\b(?!\s+(?:of\s+the\s+)?"
    r"(?:suffix|format|number\s+format|scheme|part))"
    r"|\bmin(?:imum|\.)?\s+(?:[\w.+#-]+\s+){0,2}?versions?\b"
    r"|\b(?:jak(?:a|iej|ą|ie|ich)|któr(?:a|ej|ą|e|ych)|ktor(?:a|ej|e|ych))\s+"
    r"(?:[\w.+#-]+\s+){0,3}?wersj\w*|\bminimaln\w*\s+wersj\w*", re.IGNORECASE)
"""Which version of a thing: not its numbering scheme ("what version suffix should I use?").
A technical page states numbers everywhere, so a version is stated only near the thing or
the word "version" (`_states_version`). Over the 124 questions of the tuning sets 1–34 that
speak of a version (stop 78), this turned 5 of the 18 answered unanswerable ones into
refusals and cost none of the 65 right answers; any number anywhere had turned none."""
_HOW_FIRST: Final = re.compile(r"^\W*(?:how|where|jak|skąd|skad|gdzie)\b", re.IGNORECASE)
""""Skąd Jenkins wie, której wersji Terraforma użyć?" asks how it is chosen, not which."""
_LENGTH_NOT_TIME: Final = re.compile(
    r"\bhow long (?:\S+ ){0,4}?(?:names?|titles?|texts?|messages?|descriptions?|passwords?|"
    r"posts?|lines?|strings?|summar(?:y|ies)|lists?|comments?|words?)\b", re.IGNORECASE)
""""How long should a topic name be?" asks a length, not a time."""

_STATED: Final = {
    AskedFact.DEFAULT: re.compile(
        r"\bdefault|\bdomy[sś]ln|\bunless\b|\bif (?:not|no|unset|omitted|left)\b|"
        r"\bout of the box\b|\bwhen (?:not|no|unset|omitted)\b", re.IGNORECASE),
    AskedFact.MONEY: re.compile(
        r"[$€£¥]\s?\d|\d\s?(?:[$€£]|k\b|usd|eur|gbp|pln|zł|dollars?|euros?|pounds?|złotych|"
        r"cents?|grosz\w*)|\b(?:usd|eur|gbp|pln|chf)\b|\d+(?:[.,]\d+)?\s?% of\b"
        r"|\b(?:day|daily|hourly) rate\b|\b(?:free of charge|at no cost|no cost|no charge|"
        r"for free|free|unpaid|volunteers?|voluntary|paid (?:position|role|job|staff|"
        r"contract\w*|work)|bezpłatn\w*|darmow\w*|za darmo)\b", re.IGNORECASE),
    AskedFact.FREQUENCY: re.compile(
        r"\b(?:every|each (?:day|week|month|year|quarter|sprint|release|morning|night)|once|"
        r"twice|daily|weekly|fortnightly|monthly|quarterly|annually|yearly|hourly|nightly|"
        r"bi-?weekly|bi-?monthly|regularly|cron|scheduled|schedule|codziennie|"
        r"co (?:tydzień|miesiąc|rok|kwartał|dzień|godzinę)|raz (?:na|w)|dziennie|tygodniowo|"
        r"miesięcznie|rocznie)\b|\b\d+\s+times\b", re.IGNORECASE),
    AskedFact.CLOCK: re.compile(
        r"\b\d{1,2}[:.]\d{2}\b|\b\d{1,2}\s?(?:am|pm|a\.m\.|p\.m\.)(?!\w)|\bo \d{1,2}\b"
        r"|\b(?:noon|midday|midnight|mornings?|afternoons?|evenings?|lunch\w*|nights?|overnight|"
        r"business hours|working hours|office hours|utc|gmt|bst|cet|cest|pacific|eastern|"
        r"południ\w*|rano|wieczor\w*|popołudni\w*|w nocy)\b", re.IGNORECASE),
    AskedFact.PERCENT: re.compile(
        r"\d\s?%|\bper\s?cent|\bpercentage|\bprocent\w*|\bhalf\b|\bpołow\w*|\bnines\b",
        re.IGNORECASE),
    AskedFact.SIZE: re.compile(
        r"\d+(?:[.,]\d+)?\s?(?:[KMGTP]i?B|bytes?|[kmgt]b|characters?|chars|znak\w*|lines?|"
        r"linii|px|pixels?|rows?|wierszy)\b|\bunlimited\b|\bno (?:size )?limit\b|\bbez limitu\b",
        re.IGNORECASE),
    AskedFact.DURATION: re.compile(
        r"\b" + _NUMBER_EN + r"[\s-]+(?:\w+[\s-]+)?" + _TIME_EN + r"\b"
        r"|\b\d+\s?(?:s|m|h|d|w|ms|min|mins|hrs?)\b|\b" + _NUMBER_PL + r"\s+(?:\w+\s+)?"
        + _TIME_PL + r"|\b(?:immediately|indefinitely|permanently|forever|overnight|same day|"
        r"next day|daily|weekly|monthly|annually|yearly|quarterly|hourly|right away|instantly|"
        r"24/7|natychmiast|codziennie)\b", re.IGNORECASE),
}


_DEFAULT_ASKED: Final = re.compile(
    r"\b(?:what(?:'s| is| are| was)?|whats|which)\b[^?.!]{0,40}\bdefaults?\b(?!\s+(?:branch|to\b))|"
    r"\bdefault (?:value|limit|timeout|size|port|password|ttl|setting)s?\b|"
    r"\bjak(?:i|a|ie|iego|ą)\b[^?.!]{0,40}\bdomy[sś]ln\w*(?!\s+(?:branch|gał))|"
    r"\bdomy[sś]ln\w*\s+(?:warto\w*|limit\w*|timeout\w*|port\w*|rozmiar\w*|hasł\w*|ttl)",
    re.IGNORECASE)
"""A question after a default value; not a default branch, nor "default to" (a choice)."""


def asked_fact(question: str) -> AskedFact | None:
    """The kind of fact the question asks for, when it asks one of these."""
    if _MONEY_ASKED.search(question) and not _WHEN_ASKED.search(question):
        return AskedFact.MONEY
    if _FREQUENCY_ASKED.search(question):
        return AskedFact.FREQUENCY
    if _CLOCK_ASKED.search(question):
        return AskedFact.CLOCK
    if _PERCENT_ASKED.search(question):
        return AskedFact.PERCENT
    if _SIZE_ASKED.search(question) and not _SIZE_NOT_ASKED.search(question):
        return AskedFact.SIZE
    if _VERSION_ASKED.search(question) and not _HOW_FIRST.search(question):
        return AskedFact.VERSION
    if _DURATION_ASKED.search(question) and not _LENGTH_NOT_TIME.search(question):
        return AskedFact.DURATION
    if _DEFAULT_ASKED.search(question):
        return AskedFact.DEFAULT
    return None


def states(fact: AskedFact, text: str, question: str = "") -> bool:
    """Whether the text states a fact of this kind (any amount, any schedule, any time; a
    version of the thing the question names)."""
    if fact is AskedFact.VERSION:
        return _states_version(text, versioned_thing(question))
    return _STATED[fact].search(text) is not None


_VERSIONED_EN: Final = re.compile(r"\b([\w.+#-]{2,})\s+versions?\b", re.IGNORECASE)
_VERSIONED_PL: Final = re.compile(r"\bwersj\w*\s+([\w.+#-]{2,})", re.IGNORECASE)
_NOT_A_THING: Final = frozenset(fold(word) for word in (
    "which", "what", "min", "minimum", "exact", "default", "the", "a", "latest", "current",
    "supported", "required", "new", "this", "that", "our", "jest", "są", "mamy", "używamy",
    "chodzi", "ma", "mam", "wspierana", "jaka", "która"))
_VERSION_NUMBER: Final = re.compile(r"^v?\d+(?:\.[\dx*]+)*\+?$|^\d+\.x$", re.IGNORECASE)
_VERSION_WORD: Final = re.compile(r"^(?:versions?|releases?|wersj\w*|v)$", re.IGNORECASE)
_VERSION_TERMS: Final = re.compile(
    r"\b(?:LTS|major|minor|patch|semver|semantic versioning|X\.Y(?:\.Z)?)\b")
VERSION_NEAR_WORDS: Final = 6
"""A version number this many words from the thing (or from "version"), in the same
sentence, is its version."""
THING_PREFIX: Final = 4
"""A page word beginning as the thing does names it ("kubernetesa", "Kubernetes"; "mongo",
"MongoDB")."""


def versioned_thing(question: str) -> str:
    """The thing whose version is asked ("which kubernetes version…", "wersja MySQL…"), as
    the first letters a page word naming it begins with; "" when the question names none."""
    for pattern in (_VERSIONED_EN, _VERSIONED_PL):
        for found in pattern.finditer(question):
            word = fold(found.group(1).strip(".-"))
            if word not in _NOT_A_THING and not word.startswith(("potrzeb", "wymag")):
                return word[:THING_PREFIX]
    return ""


def _states_version(text: str, thing: str) -> bool:
    """A version number within VERSION_NEAR_WORDS words of the thing or of "version" (any
    version number when the question names no thing); or a page that answers in terms of
    releases ("the current Active LTS", "bump the minor"). A text that never names the
    thing states none of its versions ("minimalna wersja coturna": Python's, on the
    upgrade page)."""
    if thing and not any(fold(word).startswith(thing) for word in re.findall(r"\w+", text)):
        return False
    if _VERSION_TERMS.search(text):
        return True
    for sentence in sentences(text):
        words = re.findall(r"[\w.+#*-]+", sentence)
        for index, word in enumerate(words):
            if not _VERSION_NUMBER.match(word.rstrip(".,;:")):
                continue
            near = words[max(0, index - VERSION_NEAR_WORDS):index + VERSION_NEAR_WORDS + 1]
            if not thing or any(_VERSION_WORD.match(other) or fold(other).startswith(thing)
                                for other in near):
                return True
    return False


_COUNT_EN: Final = re.compile(r"\bhow many\s+((?:[\w-]+\s+){0,2}[\w-]+)", re.IGNORECASE)
_COUNT_PL: Final = re.compile(
    r"(?<![oO]\s)(?<!tyle\s)\bile\s+(?:(?:maksymalnie|minimalnie|minimum|max|min|najwyżej|"
    r"najmniej|co najmniej|dokładnie|mniej więcej|łącznie|w sumie)\s+)?"
    r"(?:(?:moich|twoich|swoich|naszych|waszych|jego|jej|ich|tych|takich)\s+)?"
    r"([\w-]+)(?:\s+([\w-]+))?", re.IGNORECASE)
_NOT_COUNTED_EN: Final = re.compile(
    r"(?:do|does|did|can|could|should|will|would|are|is|were|was|have|has|had|we|i|you|they|"
    r"of|in|on|at|per|for|to|must|need|needs|may|might|there|it|more|times)", re.IGNORECASE)
_NOT_COUNTED_PL: Final = re.compile(
    r"(?:zwykle|średnio|jeszcze|razy|raz|to|jest|są|było|będzie|się|mam|mamy|ma|macie|masz|"
    r"mają|musz\w*|może|mogę|możemy|można|mogą|trzeba|należy|wolno|powin\w+|potrzeb\w*|"
    r"kosztuj\w*|koszt\w*|płac\w*|zapłac\w*|wynosi|zajmuj\w*|zajmie|czasu|"
    r"dostaj\w*|dostan\w*|przysługuj\w*|procent\w*|wcześniej|później|\w*trwa\w*|czeka\w*|"
    r"\w+ć|" + _TIME_PL + r")", re.IGNORECASE)
"""Not a counted thing: a verb (any infinitive: "ile czekać"), an adverb, or a time or money
word (DURATION and MONEY). "o ile" and "tyle ile" are conjunctions ("o ile zgłoszę to
wcześniej": provided that), not questions."""
_TIME_OR_COST_PL: Final = re.compile(r"(?:czasu|kosztuj\w*|trwa\w*|" + _TIME_PL + r")",
                                     re.IGNORECASE)
_COUNT_NUMBER: Final = re.compile(
    r"\d+(?:[.,]\d+)?(?:[-–]\d+)?%?|" + _CARDINAL_EN + r"|dozen|single|both|several|few|"
    + _CARDINAL_PL + r"|kilk(?:a|u)|oba|obie", re.IGNORECASE)
"""A word that counts (a whole word: "a", "an" and "half" count nothing on their own)."""
LOANWORD_PREFIX: Final = 5
"""A Polish ending on an English word ("replik", "snapshotów") keeps this many letters of
it: a page word that begins the same is the same word."""


class Counted(NamedTuple):
    """What a "how many …?" / "ile …?" question counts: stems, and whether their words are
    known (English, or Polish the glossary glosses)."""

    things: frozenset[str]
    known: bool


def counted(question: str) -> Counted | None:
    """What the question counts (None for any other question, and for how many days or
    times: DURATION and FREQUENCY read those). A Polish word brings its English words'
    stems too, since the page may be English."""
    english = _COUNT_EN.search(question)
    if english:
        words = english.group(1).split()
        if _TIME_EN_WORD.fullmatch(words[0]):
            return None
        kept = []
        for word in words:
            if _NOT_COUNTED_EN.fullmatch(word):
                break
            kept.append(word)
        things = frozenset(stem(fold(word)) for word in kept
                           if len(word) > 2 and not _TIME_EN_WORD.fullmatch(word))
        return Counted(things, known=True) if things else None
    polish = _COUNT_PL.search(question)
    if polish is None or _NOT_COUNTED_PL.fullmatch(polish.group(1)) or (
            polish.group(2) and _TIME_OR_COST_PL.fullmatch(polish.group(2))):
        return None  # "ile dodatkowego czasu…?" asks how long
    word = polish.group(1)
    glossed = {stem(fold(part)) for gloss in default_glossary().english(word)
               for part in gloss.split()}
    return Counted(frozenset({stem(fold(word)), *glossed}), known=bool(glossed))


def count_unstated(asked: Counted, texts: Iterable[str]) -> bool:
    """Whether no sentence of the texts puts a number beside the counted thing ("2-3
    leads", "at least two individuals … must approve", "reviewers: 2"). A word the glossary
    does not know may be on an English page in words we cannot match ("ile prób…?": the page
    says "retries"), so it is unstated only where the texts mention it without a number; a
    loanword ("snapshotów") is matched by its first letters."""
    mentioned = False
    for sentence in (part for text in texts for part in sentences(text)):
        words = re.findall(r"[\w%.,–-]*\w", sentence)
        if any(_is_counted(fold(word), asked.things) for word in words):
            mentioned = True
            if any(_COUNT_NUMBER.fullmatch(word) for word in words):
                return False
    return mentioned or asked.known


def _is_counted(folded: str, things: frozenset[str]) -> bool:
    key = stem(folded)
    return key in things or any(
        len(thing) > LOANWORD_PREFIX and key[:LOANWORD_PREFIX] == thing[:LOANWORD_PREFIX]
        for thing in things)


_TIME_EN_WORD: Final = re.compile(_TIME_EN, re.IGNORECASE)
