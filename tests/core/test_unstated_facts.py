"""A page on the question's topic that states no fact of the kind asked (an amount, how often,
how long) is not answered from: the reply says the documents do not state it and names the
page, and the trace keeps the reason. The near-miss unanswerable questions of the held-out
sets are mostly of this shape ("ile kosztuje miesięcznie jeden dev klaster?").

Every page below goes into one of two indexes, built once per worker: one where no page states
its fact, one where each does. Each test asks a copy, so its trace rows are its own."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import pytest

from tests.cli_run import copy_of, demo_pages_with_all, one_json, run, trace_rows

ON_CALL = """---
id: DOC-ONCALL
title: On-call rota
language: en
---
## What you get for being on call

Being on call out of hours is paid as an on-call allowance, claimed through the monthly
expenses form.{amount}

## Swapping shifts

Swap a shift with a colleague and update the rota in the team calendar.
"""

REVIEW = """---
id: DOC-REVIEW
title: Architecture board review
language: en
---
## Preparing for the review

Bring your hero scenarios and the API surface to the architecture board review.{count}

## After the review

The architect files the board's feedback as issues on the repository.
"""

STANDUP = """---
id: DOC-STANDUP
title: Team rituals
language: en
---
## Daily standup

The whole team joins the daily standup on the team call to share what they are working on
and what blocks them.{fact}

## Retrospective

Every other Friday the team looks back on the sprint.
"""
TOOLCHAIN = """---
id: DOC-TOOLCHAIN
title: Build toolchain
language: en
---
## Terraform

Infrastructure code is planned and applied by the pipeline with Terraform; pin the provider
versions in `versions.tf` and run `terraform fmt` before pushing. Workspaces keep 3 states.{fact}
"""
COVERAGE = """---
id: DOC-COVERAGE
title: Code quality gate
language: en
---
## Test coverage

Every pull request reports its unit test coverage to SonarCloud, and the quality gate checks
it before the pull request can be merged.{fact}
"""
UPLOADS = """---
id: DOC-UPLOADS
title: Asset uploads
language: en
---
## Uploading attachments

Publishers upload attachments through the asset manager, which scans every file for
viruses before it is published.{fact}
"""


SCRAPING = """---
id: DOC-SCRAPING
title: Scrape jobs
language: en
---
## Sample limit

Set `sample_limit` on a scrape job to protect the server from a target that suddenly exposes
far more series; a scrape over the limit fails as a whole.{fact}
"""
MAINTENANCE = """---
id: DOC-MAINTENANCE
title: Store maintenance
language: en
---
## Defragmentation

Defragment the store after a large compaction to give the freed space back to the file
system. Run it on one member at a time, never on all members at once.{fact}

## Compaction

Compaction runs every 5 minutes and keeps one hour of history.
"""
DEFRAG_TIME = " A defragmentation takes about a minute per gigabyte of data."


class Unstated(NamedTuple):
    """A page without the asked fact (`text` with "{fact}" empty), and with it (`fact`)."""

    page: str
    text: str
    fact: str
    question: str
    said: str
    """How the refusal ends."""
    shown: str
    """What the answer from the page with the fact shows ("": not asked of it)."""


ASKED_OF_PAGES_WITHOUT_IT = [
    Unstated("rituals.md", STANDUP, " It starts at 9:30 every morning.",
             "what time is the daily standup? starting monday",
             "Team rituals (DOC-STANDUP), is on this subject but states no time of day.",
             "9:30"),
    Unstated("rituals.md", STANDUP, "", "o której jest daily standup?",
             "Team rituals (DOC-STANDUP), jest na ten temat, ale nie podaje godziny.", ""),
    # The page holds a number ("3 states"), but no version of Terraform.
    Unstated("toolchain.md", TOOLCHAIN, " The pipelines run Terraform 1.9.5.",
             "which terraform version do the pipelines run? need to match it locally",
             "Build toolchain (DOC-TOOLCHAIN), is on this subject but states no version.",
             "1.9.5"),
    Unstated("toolchain.md", TOOLCHAIN, "", "jakiej wersji terraforma używa pipeline?",
             "Build toolchain (DOC-TOOLCHAIN), jest na ten temat, ale nie podaje wersji.", ""),
    Unstated("quality.md", COVERAGE, " The gate fails below 80% coverage.",
             "what's the minimum test coverage % before a PR can merge?",
             "Code quality gate (DOC-COVERAGE), is on this subject but states no percentage.",
             "80%"),
    Unstated("quality.md", COVERAGE, "", "jaki jest minimalny próg code coverage przed mergem?",
             "Code quality gate (DOC-COVERAGE), jest na ten temat, ale nie podaje wartości "
             "procentowej.", ""),
    Unstated("uploads.md", UPLOADS, " Files are limited to 500 MB each.",
             "is there a max file size for attachments in the asset manager?",
             "Asset uploads (DOC-UPLOADS), is on this subject but states no size.", "500 MB"),
    Unstated("scraping.md", SCRAPING, " By default there is no limit.",
             "whats the default sample_limit on a scrape job? one target exploded",
             "Scrape jobs (DOC-SCRAPING), is on this subject but states no default.",
             "By default there is no limit"),
    Unstated("scraping.md", SCRAPING, "", "jaki jest domyślny sample_limit dla scrape joba?",
             "Scrape jobs (DOC-SCRAPING), jest na ten temat, ale nie podaje wartości "
             "domyślnej.", ""),
]
WARNINGS = {STANDUP: "unstated_clock", TOOLCHAIN: "unstated_version",
            COVERAGE: "unstated_percent", UPLOADS: "unstated_size", SCRAPING: "unstated_default"}
AMOUNT = " The allowance is 15% of your day rate for every 8 hours."
COUNT = " Three to five hero scenarios are enough."


@pytest.fixture(scope="module")
def without_facts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo pages and every page above, none stating its fact."""
    return demo_pages_with_all(tmp_path_factory.mktemp("without"), {
        "on-call.md": ON_CALL.format(amount=""), "review.md": REVIEW.format(count=""),
        "maintenance.md": MAINTENANCE.format(fact=""),
        **{case.page: case.text.format(fact="") for case in ASKED_OF_PAGES_WITHOUT_IT}})


@pytest.fixture(scope="module")
def with_facts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo pages and every page above, each stating its fact."""
    return demo_pages_with_all(tmp_path_factory.mktemp("with"), {
        "on-call.md": ON_CALL.format(amount=AMOUNT), "review.md": REVIEW.format(count=COUNT),
        "maintenance.md": MAINTENANCE.format(fact=DEFRAG_TIME),
        **{case.page: case.text.format(fact=case.fact)
           for case in ASKED_OF_PAGES_WITHOUT_IT if case.fact}})


def assert_refused(without_facts: Path, tmp_path: Path, question: str, said: str,
                   warning: str) -> None:
    """Asked over a copy of the index without the facts: refused, the reply ends with
    `said`, no sources, and one trace row with `warning` and the search that ran."""
    db = copy_of(without_facts, tmp_path)
    done = run("ask", question, "--thread", "T1", "--json", db=db, DOCASSIST_MODEL="rules")
    assert done.returncode == 0, done.stderr
    reply = one_json(done.stdout)
    assert reply["status"] == "no_answer", reply["answer"]
    assert reply["answer"].endswith(said)
    assert reply["sources"] == []
    (row,) = trace_rows(tmp_path, db)
    assert row["status"] == "no_answer"
    assert row["warnings"] == [warning]
    assert row["tool_calls"][0]["tool_name"] == "answer_from_documents"


@pytest.mark.parametrize(("question", "said"), [
    ("how much do we get paid for being on call?",
     "The closest document, On-call rota (DOC-ONCALL), is on this subject but states no "
     "amount."),
    ("ile dostaję wynagrodzenia za dyżur on-call?",
     "Najbliższy dokument, On-call rota (DOC-ONCALL), jest na ten temat, ale nie podaje "
     "kwoty."),
])
def test_a_page_that_states_no_amount_is_not_answered_from(
        without_facts: Path, tmp_path: Path, question: str, said: str) -> None:
    assert_refused(without_facts, tmp_path, question, said, "unstated_money")


def test_the_same_page_with_its_amount_answers(with_facts: Path) -> None:
    done = run("ask", "how much do we get paid for being on call?", "--json", db=with_facts,
               DOCASSIST_MODEL="rules")
    assert done.returncode == 0, done.stderr
    reply = one_json(done.stdout)
    assert reply["status"] == "answered", reply["answer"]
    assert "15% of your day rate" in reply["answer"]
    assert reply["sources"][0]["document_id"] == "DOC-ONCALL"

def test_a_page_that_never_counts_what_is_asked_is_not_answered_from(
        without_facts: Path, tmp_path: Path) -> None:
    assert_refused(
        without_facts, tmp_path,
        "how many hero scenarios do we need for the architecture board review?",
        "The closest document, Architecture board review (DOC-REVIEW), is on this subject "
        "but states no number.", "unstated_count")


def test_the_same_page_with_its_count_answers(with_facts: Path) -> None:
    done = run("ask", "how many hero scenarios do we need for the architecture board review?",
               "--json", db=with_facts, DOCASSIST_MODEL="rules")
    assert done.returncode == 0, done.stderr
    reply = one_json(done.stdout)
    assert reply["status"] == "answered", reply["answer"]
    assert reply["sources"][0]["document_id"] == "DOC-REVIEW"

@pytest.mark.parametrize("case", ASKED_OF_PAGES_WITHOUT_IT, ids=lambda case: case.question)
def test_a_page_that_states_no_fact_of_the_asked_kind_is_not_answered_from(
        without_facts: Path, tmp_path: Path, case: Unstated) -> None:
    """A time of day, a version of the thing named, a percentage, a size (stop 78); a default
    value (stop 79)."""
    assert_refused(without_facts, tmp_path, case.question, case.said, WARNINGS[case.text])


@pytest.mark.parametrize("case", [case for case in ASKED_OF_PAGES_WITHOUT_IT if case.shown],
                         ids=lambda case: case.question)
def test_the_same_page_with_the_fact_answers(with_facts: Path, case: Unstated) -> None:
    reply = one_json(run("ask", case.question, "--json", db=with_facts,
                         DOCASSIST_MODEL="rules").stdout)
    assert reply["status"] == "answered", reply["answer"]
    assert case.shown in reply["answer"]


@pytest.mark.parametrize(("question", "said"), [
    ("how long does a defragmentation of the store take? need to plan the window",
     "The closest document, Store maintenance (DOC-MAINTENANCE), is on this subject, but its "
     "passage on it states no time or duration."),
    ("jak długo trwa defragmentation store'a? planuję okno serwisowe",
     "Najbliższy dokument, Store maintenance (DOC-MAINTENANCE), jest na ten temat, ale w "
     "części o tym nie podaje czasu ani terminu."),
])
def test_a_passage_without_the_fact_is_not_answered_from_when_the_page_has_it_elsewhere(
        without_facts: Path, tmp_path: Path, question: str, said: str) -> None:
    """The page states a length of time, but under Compaction: the passage that speaks of
    defragmentation states none, so it does not answer how long a defragmentation takes."""
    assert_refused(without_facts, tmp_path, question, said, "unstated_duration")


def test_the_passage_with_the_fact_answers(with_facts: Path) -> None:
    reply = one_json(run("ask", "how long does a defragmentation of the store take?", "--json",
                         db=with_facts, DOCASSIST_MODEL="rules").stdout)
    assert reply["status"] == "answered", reply["answer"]
    assert "a minute per gigabyte" in reply["answer"]
    assert reply["sources"][0]["document_id"] == "DOC-MAINTENANCE"
