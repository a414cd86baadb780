"""Which words of a question are names a page must mention to answer it, and when a page
mentions one (core/named_terms.py)."""

from __future__ import annotations

import pytest

from docassist.core.learned import question_parts, with_context
from docassist.core.named_terms import named_terms, unmentioned
from docassist.core.state import HistoryMessage


@pytest.mark.parametrize(("question", "names"), [
    ("can our app on cloud.gov serve gRPC / HTTP/2 traffic end to end?", ["gRPC", "HTTP"]),
    ("czy na bazie postgres z aws-rds mogę włączyć rozszerzenie PostGIS?", ["PostGIS"]),
    ("do we have an official account on Mastodon or Bluesky?", ["Mastodon", "Bluesky"]),
    ("czy da się ustawić priorytet issue prosto z Zulipa, bez GitHuba?", ["GitHuba"]),
])
def test_names_are_what_is_written_as_names(question: str, names: list[str]) -> None:
    assert named_terms(question) == names


@pytest.mark.parametrize("question", [
    "Where do I file the SOW for ADO?",  # short acronyms: teams shorten their own words
    "which IPs does traffic from our apps come from, when SSOing?",
    "the roadmap labels stuff P0/P1/P2 - what does P0 actually mean?",
    "a11y audit flagged our date of birth q on my m2 mac, 3rd time",
    "we have 1.5GB left and a 2GB instance, and the 90-day limit?",
    # What a user types from their own screen: a host, a ticket, a version.
    "how do I renew the TLS certificate on web-0142 for INC-4521 after v2.3.1?",
    "which plan is redis-3node on?",
    "dodałem kolegę jako TheDev@github i nie działa",
    "Can I take a day off on Monday in December?",
    "How do I report an incident?",  # the first word of a sentence
    "ok. Then what do I do?",
    "czy biuro jest otwarte w Wielki Piątek?",  # a Polish question's capitals: translated
    "robię triage PR-ów dla release teamu",
])
def test_words_that_are_not_names(question: str) -> None:
    assert named_terms(question) == []


def test_a_name_is_mentioned_inflected_or_in_any_case() -> None:
    assert unmentioned(["GitHuba"], ["Open an issue on GitHub."]) == []
    assert unmentioned(["Mastodonie"], ["We post on mastodon.social."]) == []
    assert unmentioned(["PostGIS"], ["Extensions: postgis, pg_trgm."]) == []
    assert unmentioned(["PostGIS"], ["Extensions: pg_trgm, postgres_fdw."]) == ["PostGIS"]
    # An ending is taken off only when four letters stay: "Zulu" does not become "zul".
    assert unmentioned(["Zulu"], ["The Zulip stream."]) == ["Zulu"]


def test_unmentioned_names_are_those_no_text_holds() -> None:
    texts = ["External domain service", "Serve HTTP/2 through the load balancer."]
    assert unmentioned(named_terms("can our app serve gRPC / HTTP/2 traffic end to end?"),
                       texts) == ["gRPC"]
    assert unmentioned(named_terms("How do I renew the TLS certificate?"), texts) == []


def test_the_earlier_question_beside_a_follow_up_starts_a_sentence_of_its_own() -> None:
    query = with_context("and what if it doesn't come back after the restart?", [
        HistoryMessage(role="user", content="What do I do after changing the config?")])
    assert named_terms(query) == ["What"]  # as one text: capitalised inside a sentence
    assert question_parts(query) == ["and what if it doesn't come back after the restart?",
                                     "What do I do after changing the config?"]
    assert [name for part in question_parts(query) for name in named_terms(part)] == []
    assert question_parts("Is Bluesky supported?") == ["Is Bluesky supported?"]


@pytest.mark.parametrize(("question", "names"), [
    # Chat writes names in lower case: a word general English rarely uses is one.
    ("are we allowed to use copilot or chatgpt on our code?", ["chatgpt"]),
    ("we use haproxy not nginx, is there an example config for serving it on a sub-path?",
     ["haproxy"]),
    ("moving off mongo. for the data move, are we using DMS or mongodump?", ["mongodump"]),
    ("Haproxy or nginx, which one do we run in front of the apps?", ["haproxy"]),
    ("which KMS do we support, is it vault only or thales too?", []),  # "thales" is common
])
def test_a_lower_case_word_english_rarely_uses_is_a_name(question: str,
                                                         names: list[str]) -> None:
    assert named_terms(question) == names


@pytest.mark.parametrize("question", [
    "shuold i open the servcie ticket for the webniar?",  # one edit from a common word
    "how long do unconsumed msgs stay on the queue?",  # a common word with a prefix; no vowels
    "after rebasing my branch, which merge option do i choose?",  # "re" + "basing"
    "we're splitting into 3 workstreams, who should attend the scrum of scrums?",  # compound
    "running a demo tmrw, can my co-host set up the breakout rooms?",
    # A rare word outside the asking sentence is context, not the thing asked about.
    "our app forwards logs to splunk via a log drain. should i bind it to the space?",
    # Polish typed without its letters reads as English by its stop words alone.
    "jak dodac ludzi spoza GSA do naszej google grupy? wysylam invite i nic",
    "czy monorepo to dobry pomysl?",
])
def test_rare_words_that_are_not_names(question: str) -> None:
    assert named_terms(question) == []


def test_a_lower_case_name_is_mentioned_in_the_singular_or_the_plural() -> None:
    assert unmentioned(["yubikeys"], ["Every engineer gets a YubiKey."]) == []
    assert unmentioned(["yubikey"], ["Use hardware MFA on the root accounts."]) == ["yubikey"]


def test_a_capitalised_name_keeps_its_english_ending() -> None:
    """The plural is taken off lower-case names only, as the capitalised names' rule was
    measured without it."""
    assert unmentioned(["YubiKeys"], ["Every engineer gets a YubiKey."]) == ["YubiKeys"]
