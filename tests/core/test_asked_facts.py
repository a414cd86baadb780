"""Which kind of fact a question asks for, and whether a passage states one
(core/asked_facts.py)."""

from __future__ import annotations

import pytest

from docassist.core.asked_facts import AskedFact, asked_fact, count_unstated, counted, states


@pytest.mark.parametrize(("question", "fact"), [
    ("how much does a chaosscon ticket cost?", AskedFact.MONEY),
    ("what do we actually get paid for just being on call?", AskedFact.MONEY),
    ("what's the mileage rate we can claim back?", AskedFact.MONEY),
    ("ile kosztuje miesięcznie jeden dev klaster?", AskedFact.MONEY),
    ("czy reviewerzy dostają jakąś kasę za review?", AskedFact.MONEY),
    ("how often are we supposed to rotate the auth0 client credentials?", AskedFact.FREQUENCY),
    ("jak często leci pipeline divergence?", AskedFact.FREQUENCY),
    ("how long does loki keep our console logs?", AskedFact.DURATION),
    ("how many business days do I have to file the report?", AskedFact.DURATION),
    ("ile czasu prometheus trzyma metryki?", AskedFact.DURATION),
    ("po ilu minutach bezczynności wylogować usera?", AskedFact.DURATION),
    ("na jak długo mogę wygenerować credentiale do kafki?", AskedFact.DURATION),
    # A setting that is a length of time, asked by its name.
    ("what velero TTL are we supposed to set for the backups?", AskedFact.DURATION),
    ("what's the idle timeout on the ALB in front of the apps?", AskedFact.DURATION),
    ("jaki maksymalny czas ważności tokenu ustawić w polityce?", AskedFact.DURATION),
    ("what time does the nightly backup start?", AskedFact.CLOCK),
    ("at what time is the team standup?", AskedFact.CLOCK),
    ("o której godzinie leci deploy na produkcję?", AskedFact.CLOCK),
    ("o ktorej jest planning w czwartki?", AskedFact.CLOCK),
    ("which postgres version does the billing db run?", AskedFact.VERSION),
    ("is there a minimum agent version for the new runners?", AskedFact.VERSION),
    ("jakiej wersji terraforma używamy w repo infra?", AskedFact.VERSION),
    ("jaka minimalna wersja javy jest wspierana?", AskedFact.VERSION),
    ("what coverage % does the quality gate require?", AskedFact.PERCENT),
    ("is there a minimum unit test coverage for the api repos?", AskedFact.PERCENT),
    ("ile procent ruchu idzie na canary?", AskedFact.PERCENT),
    ("jaki próg pokrycia testami mamy na CI?", AskedFact.PERCENT),
    ("is there a max file size for uploads to the portal?", AskedFact.SIZE),
    ("jaki jest limit rozmiaru obrazu w registry?", AskedFact.SIZE),
    ("whats the default value of max_shards for remote write?", AskedFact.DEFAULT),
    ("jaki jest domyślny evaluation_interval?", AskedFact.DEFAULT),
])
def test_the_fact_a_question_asks_for(question: str, fact: AskedFact) -> None:
    assert asked_fact(question) == fact


@pytest.mark.parametrize("question", [
    "can we pay them the incentive by bank transfer?",  # how, not how much
    "at what error rate does the alert fire?",  # a rate, not money
    "is there a guideline for how long a zulip topic name should be?",  # a length
    "na ile moich spotkań będzie przychodził?",  # how many meetings, not how long
    "whats the monthly deadline for requesting the salary run in nmbrs?",  # when, not how much
    "when do we get paid? which days of the month",
    "How do I renew the TLS certificate?",
    "what time range should the graphs cover?",  # a span, not a time of day
    "what time zone are the release dates in?",
    "co to za reguła, o której ciągle mówicie?",  # "o której": which, not what time
    "what version suffix do preview packages get?",  # the scheme, not a version
    "skąd pipeline wie, której wersji terraforma użyć?",  # how it is chosen
    "can I spend my 10% time on the design system?",  # names a percentage, asks none
    "what's the minimum size of the release team?",  # how many people: COUNT
    "what wording do we show when a file is over the size limit?",  # what to say
    "what is our default branch called?",  # a branch named default, not a default value
    "should we default to the latest api version?",  # a choice to make
    "Jak zgłosić incydent?",
    # The validity date named, situations asked.
    "w jakich sytuacjach poza samą datą ważności link powinien przestać działać?",
    "how do I lower the TTL before the cutover?",  # how, not what
])
def test_a_question_that_asks_none_of_them(question: str) -> None:
    assert asked_fact(question) is None


@pytest.mark.parametrize(("fact", "text"), [
    (AskedFact.MONEY, "the reimbursement rate is 57.5 cents (USD) per mile"),
    (AskedFact.MONEY, "15% of day rate for every 8 hours that you're on call"),
    (AskedFact.MONEY, "Tickets are $150; speakers attend for free."),
    (AskedFact.MONEY, "Koszt to 200 zł miesięcznie."),
    (AskedFact.FREQUENCY, "The keys are rotated every 90 days by a scheduled job."),
    (AskedFact.FREQUENCY, "Kopia powstaje codziennie o 2:00."),
    (AskedFact.DURATION, "Logs are kept for fourteen days, then deleted."),
    (AskedFact.DURATION, "Certificates are valid for one year."),
    (AskedFact.DURATION, "Metryki są trzymane przez 30 dni."),
    (AskedFact.DURATION, "Dostęp wygasa po ośmiu godzinach."),
    (AskedFact.CLOCK, "The backup runs every day at 01:30."),
    (AskedFact.CLOCK, "Standup is at 9.30am, on the team call."),
    (AskedFact.CLOCK, "We meet on Tuesdays, 4 p.m. Eastern."),
    (AskedFact.CLOCK, "Pick a slot early in the morning Pacific Time."),
    (AskedFact.CLOCK, "Deploy startuje o 14 czasu polskiego."),
    (AskedFact.VERSION, "The runners need agent 2.311.0 or later."),
    (AskedFact.VERSION, "Use JDK 17; newer releases up to 21 work too."),
    (AskedFact.VERSION, "Pick the current Active LTS release of Node.js."),
    (AskedFact.VERSION, "Bump the minor version when a resource is recreated."),
    (AskedFact.PERCENT, "The gate fails below 80 % line coverage."),
    (AskedFact.PERCENT, "Agree a target coverage percentage as a team."),
    (AskedFact.SIZE, "Uploads are limited to 500 MB per file."),
    (AskedFact.SIZE, "The definition file has a 30,000 character limit."),
    (AskedFact.DEFAULT, "Unless set, the interval is one minute."),
    (AskedFact.DEFAULT, "Domyślnie limit jest wyłączony."),
])
def test_a_passage_that_states_the_fact(fact: AskedFact, text: str) -> None:
    assert states(fact, text)


@pytest.mark.parametrize(("fact", "text"), [
    (AskedFact.MONEY, "Being on call is paid as an allowance, claimed on the expenses form."),
    (AskedFact.FREQUENCY, "Rotate the credentials in the Auth0 dashboard, then redeploy."),
    (AskedFact.DURATION, "Logs are shipped to the SIEM and kept there under its policy."),
    (AskedFact.CLOCK, "The standup is a short daily call; the invite is in the team calendar."),
    (AskedFact.CLOCK, "Planning happens every other Thursday in the big room."),
    (AskedFact.VERSION, "Pin the toolchain in the repository so every build uses the same one."),
    (AskedFact.PERCENT, "Coverage is reported to SonarCloud on every pull request."),
    (AskedFact.SIZE, "Large files belong in Git LFS; keep the repository small."),
    (AskedFact.DEFAULT, "Raise max_shards only when the queue falls behind."),
])
def test_a_passage_on_the_topic_that_does_not(fact: AskedFact, text: str) -> None:
    assert not states(fact, text)


@pytest.mark.parametrize(("question", "text", "stated"), [
    ("jaka jest minimalna wersja coturna?",
     "The minimum supported Python version has been increased from v3.7 to v3.8.",
     False),  # another thing's version
    ("jaka jest minimalna wersja coturna?", "Synapse needs coturn 4.5 or later.", True),
    ("which node version do we use?", "The minimum supported Python version is 3.8.", False),
    ("which node version do we use?", "Our services run on Node.js 20 LTS.", True),
    ("which version do we pin?", "Pin version 2.3 in the lock file.", True),  # no thing named
])
def test_a_version_is_stated_only_beside_the_thing_named(question: str, text: str,
                                                         stated: bool) -> None:
    assert states(AskedFact.VERSION, text, question) is stated


@pytest.mark.parametrize(("question", "things"), [
    ("how many hero scenarios do we need to bring to the arch board review",
     {"her", "scenario"}),
    ("how many vacation days do we get per year?", {"vacat"}),
    ("ile osób minimum musi być w user study?", {"osob", "peopl", "person"}),
    ("jaki node type i ile replik ma backend-redis?", {"replik", "replic"}),
])
def test_what_a_how_many_question_counts(question: str, things: set[str]) -> None:
    asked = counted(question)
    assert asked is not None and asked.things == things


@pytest.mark.parametrize("question", [
    "how many days do we get per year?",  # how long: DURATION reads it
    "ile dni urlopu mi przysługuje?",
    "ile razy w roku robimy przegląd?",  # how often
    "ile zwykle trwa ćwiczenie?",
    "ile potrwa review?",  # how long
    "ile czekać na akceptację?",  # an infinitive: how long to wait
    "czy mogę pracować zdalnie, o ile zgłoszę to wcześniej?",  # "o ile": provided that
    "ile kosztuje klaster?",  # money
    "How do I renew the TLS certificate?",
])
def test_a_question_that_counts_nothing(question: str) -> None:
    assert counted(question) is None


def test_a_count_is_stated_only_beside_the_counted_thing() -> None:
    heroes = counted("how many hero scenarios do we need?")
    assert heroes is not None
    assert count_unstated(heroes, ["Bring your hero scenarios to the review.",
                                   "The review takes 2 weeks."])
    assert not count_unstated(heroes, ["Bring 3 to 5 hero scenarios to the review."])
    people = counted("ile osób zmieści się w sali?")
    assert people is not None
    assert not count_unstated(people, ["The room fits up to twelve people."])
    # Every number word the length-of-time rule knows counts here too (these did not).
    assert not count_unstated(people, ["Sala mieści siedem osób."])
    assert not count_unstated(people, ["Sala mieści do ośmiu osób."])
    assert not count_unstated(people, ["The hall fits forty people."])
    snapshots = counted("ile snapshotów jest trzymanych?")  # a loanword: its first letters
    assert snapshots is not None and not snapshots.known
    assert not count_unstated(snapshots, ["Redis keeps 14 daily snapshots."])
    assert count_unstated(snapshots, ["Redis keeps daily snapshots in each zone."])


def test_a_word_the_glossary_does_not_know_is_unstated_only_where_it_is_mentioned() -> None:
    attempts = counted("ile prób robi retry policy?")  # "prób": attempts, not in the glossary
    assert attempts is not None and not attempts.known
    assert not count_unstated(attempts, ["The default policy retries 3 times."])
