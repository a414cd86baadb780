"""A page on the question's topic that states no fact of the kind asked (an amount, how often,
how long) is not answered from: the reply says the documents do not state it and names the
page, and the trace keeps the reason. The near-miss unanswerable questions of the held-out
sets are mostly of this shape ("ile kosztuje miesięcznie jeden dev klaster?")."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_run import demo_pages_with, one_json, run, trace_rows

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


def _indexed(tmp_path: Path, amount: str) -> Path:
    return demo_pages_with(tmp_path, "on-call.md", ON_CALL.format(amount=amount))


@pytest.mark.parametrize(("question", "said"), [
    ("how much do we get paid for being on call?",
     "The closest document, On-call rota (DOC-ONCALL), is on this subject but states no "
     "amount."),
    ("ile dostaję wynagrodzenia za dyżur on-call?",
     "Najbliższy dokument, On-call rota (DOC-ONCALL), jest na ten temat, ale nie podaje "
     "kwoty."),
])
def test_a_page_that_states_no_amount_is_not_answered_from(tmp_path: Path, question: str,
                                                            said: str) -> None:
    db = _indexed(tmp_path, amount="")
    done = run("ask", question, "--thread", "T1", "--json", db=db, DOCASSIST_MODEL="rules")
    assert done.returncode == 0, done.stderr
    reply = one_json(done.stdout)
    assert reply["status"] == "no_answer", reply["answer"]
    assert reply["answer"].endswith(said)
    assert reply["sources"] == []
    (row,) = trace_rows(tmp_path, db)
    assert row["status"] == "no_answer"
    assert row["warnings"] == ["unstated_money"]
    assert row["tool_calls"][0]["tool_name"] == "answer_from_documents"


def test_the_same_page_with_its_amount_answers(tmp_path: Path) -> None:
    db = _indexed(tmp_path, amount=" The allowance is 15% of your day rate for every 8 hours.")
    done = run("ask", "how much do we get paid for being on call?", "--json", db=db,
               DOCASSIST_MODEL="rules")
    assert done.returncode == 0, done.stderr
    reply = one_json(done.stdout)
    assert reply["status"] == "answered", reply["answer"]
    assert "15% of your day rate" in reply["answer"]
    assert reply["sources"][0]["document_id"] == "DOC-ONCALL"


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


def test_a_page_that_never_counts_what_is_asked_is_not_answered_from(tmp_path: Path) -> None:
    db = demo_pages_with(tmp_path, "review.md", REVIEW.format(count=""))
    done = run("ask", "how many hero scenarios do we need for the architecture board review?",
               "--json", db=db, DOCASSIST_MODEL="rules")
    assert done.returncode == 0, done.stderr
    reply = one_json(done.stdout)
    assert reply["status"] == "no_answer", reply["answer"]
    assert reply["answer"].endswith(
        "The closest document, Architecture board review (DOC-REVIEW), is on this subject "
        "but states no number.")
    assert reply["sources"] == []
    (row,) = trace_rows(tmp_path, db)
    assert row["status"] == "no_answer"
    assert row["warnings"] == ["unstated_count"]
    assert row["tool_calls"][0]["tool_name"] == "answer_from_documents"


def test_the_same_page_with_its_count_answers(tmp_path: Path) -> None:
    db = demo_pages_with(tmp_path, "review.md", REVIEW.format(
        count=" Three to five hero scenarios are enough."))
    done = run("ask", "how many hero scenarios do we need for the architecture board review?",
               "--json", db=db, DOCASSIST_MODEL="rules")
    assert done.returncode == 0, done.stderr
    reply = one_json(done.stdout)
    assert reply["status"] == "answered", reply["answer"]
    assert reply["sources"][0]["document_id"] == "DOC-REVIEW"


STANDUP = """---
id: DOC-STANDUP
title: Team rituals
language: en
---
## Daily standup

The whole team joins the daily standup on the team call to share what they are working on
and what blocks them.{time}

## Retrospective

Every other Friday the team looks back on the sprint.
"""


@pytest.mark.parametrize(("question", "said"), [
    ("what time is the daily standup? starting monday",
     "The closest document, Team rituals (DOC-STANDUP), is on this subject but states no "
     "time of day."),
    ("o której jest daily standup?",
     "Najbliższy dokument, Team rituals (DOC-STANDUP), jest na ten temat, ale nie podaje "
     "godziny."),
])
def test_a_page_that_states_no_time_of_day_is_not_answered_from(tmp_path: Path, question: str,
                                                                said: str) -> None:
    db = demo_pages_with(tmp_path, "rituals.md", STANDUP.format(time=""))
    done = run("ask", question, "--json", db=db, DOCASSIST_MODEL="rules")
    assert done.returncode == 0, done.stderr
    reply = one_json(done.stdout)
    assert reply["status"] == "no_answer", reply["answer"]
    assert reply["answer"].endswith(said)
    assert reply["sources"] == []
    (row,) = trace_rows(tmp_path, db)
    assert row["warnings"] == ["unstated_clock"]
    assert row["tool_calls"][0]["tool_name"] == "answer_from_documents"


def test_the_same_page_with_its_time_answers(tmp_path: Path) -> None:
    db = demo_pages_with(tmp_path, "rituals.md",
                         STANDUP.format(time=" It starts at 9:30 every morning."))
    done = run("ask", "what time is the daily standup? starting monday", "--json", db=db,
               DOCASSIST_MODEL="rules")
    reply = one_json(done.stdout)
    assert reply["status"] == "answered", reply["answer"]
    assert "9:30" in reply["answer"]


TOOLCHAIN = """---
id: DOC-TOOLCHAIN
title: Build toolchain
language: en
---
## Terraform

Infrastructure code is planned and applied by the pipeline with Terraform; pin the provider
versions in `versions.tf` and run `terraform fmt` before pushing. Workspaces keep 3 states.{pin}
"""


@pytest.mark.parametrize(("question", "said"), [
    ("which terraform version do the pipelines run? need to match it locally",
     "The closest document, Build toolchain (DOC-TOOLCHAIN), is on this subject but states "
     "no version."),
    ("jakiej wersji terraforma używa pipeline?",
     "Najbliższy dokument, Build toolchain (DOC-TOOLCHAIN), jest na ten temat, ale nie "
     "podaje wersji."),
])
def test_a_page_that_states_no_version_of_the_thing_is_not_answered_from(
        tmp_path: Path, question: str, said: str) -> None:
    """The page holds a number ("3 states"), but no version of Terraform."""
    db = demo_pages_with(tmp_path, "toolchain.md", TOOLCHAIN.format(pin=""))
    done = run("ask", question, "--json", db=db, DOCASSIST_MODEL="rules")
    reply = one_json(done.stdout)
    assert reply["status"] == "no_answer", reply["answer"]
    assert reply["answer"].endswith(said)
    (row,) = trace_rows(tmp_path, db)
    assert row["warnings"] == ["unstated_version"]
    assert row["tool_calls"][0]["tool_name"] == "answer_from_documents"


def test_the_same_page_with_the_version_answers(tmp_path: Path) -> None:
    db = demo_pages_with(tmp_path, "toolchain.md",
                         TOOLCHAIN.format(pin=" The pipelines run Terraform 1.9.5."))
    done = run("ask", "which terraform version do the pipelines run? need to match it locally",
               "--json", db=db, DOCASSIST_MODEL="rules")
    reply = one_json(done.stdout)
    assert reply["status"] == "answered", reply["answer"]
    assert "1.9.5" in reply["answer"]


COVERAGE = """---
id: DOC-COVERAGE
title: Code quality gate
language: en
---
## Test coverage

Every pull request reports its unit test coverage to SonarCloud, and the quality gate checks
it before the pull request can be merged.{threshold}
"""


@pytest.mark.parametrize(("question", "said"), [
    ("what's the minimum test coverage % before a PR can merge?",
     "The closest document, Code quality gate (DOC-COVERAGE), is on this subject but states no "
     "percentage."),
    ("jaki jest minimalny próg code coverage przed mergem?",
     "Najbliższy dokument, Code quality gate (DOC-COVERAGE), jest na ten temat, ale nie "
     "podaje wartości procentowej."),
])
def test_a_page_that_states_no_percentage_is_not_answered_from(tmp_path: Path, question: str,
                                                                said: str) -> None:
    db = demo_pages_with(tmp_path, "quality.md", COVERAGE.format(threshold=""))
    done = run("ask", question, "--json", db=db, DOCASSIST_MODEL="rules")
    reply = one_json(done.stdout)
    assert reply["status"] == "no_answer", reply["answer"]
    assert reply["answer"].endswith(said)
    (row,) = trace_rows(tmp_path, db)
    assert row["warnings"] == ["unstated_percent"]
    assert row["tool_calls"][0]["tool_name"] == "answer_from_documents"


def test_the_same_page_with_its_threshold_answers(tmp_path: Path) -> None:
    db = demo_pages_with(tmp_path, "quality.md",
                         COVERAGE.format(threshold=" The gate fails below 80% coverage."))
    done = run("ask", "what's the minimum test coverage % before a PR can merge?", "--json",
               db=db, DOCASSIST_MODEL="rules")
    reply = one_json(done.stdout)
    assert reply["status"] == "answered", reply["answer"]
    assert "80%" in reply["answer"]


UPLOADS = """---
id: DOC-UPLOADS
title: Asset uploads
language: en
---
## Uploading attachments

Publishers upload attachments through the asset manager, which scans every file for
viruses before it is published.{limit}
"""


def test_a_page_that_states_no_size_is_not_answered_from(tmp_path: Path) -> None:
    db = demo_pages_with(tmp_path, "uploads.md", UPLOADS.format(limit=""))
    done = run("ask", "is there a max file size for attachments in the asset manager?",
               "--json", db=db, DOCASSIST_MODEL="rules")
    reply = one_json(done.stdout)
    assert reply["status"] == "no_answer", reply["answer"]
    assert reply["answer"].endswith(
        "The closest document, Asset uploads (DOC-UPLOADS), is on this subject but states no "
        "size.")
    (row,) = trace_rows(tmp_path, db)
    assert row["warnings"] == ["unstated_size"]
    assert row["tool_calls"][0]["tool_name"] == "answer_from_documents"
    (tmp_path / "limit").mkdir()
    with_limit = demo_pages_with(tmp_path / "limit", "uploads.md",
                                 UPLOADS.format(limit=" Files are limited to 500 MB each."))
    answered = one_json(run("ask", "is there a max file size for attachments in the asset "
                            "manager?", "--json", db=with_limit, DOCASSIST_MODEL="rules").stdout)
    assert answered["status"] == "answered" and "500 MB" in answered["answer"]
