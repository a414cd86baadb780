"""Reference-style Markdown links (`[PRs][prs]`, `[service monitoring][]`) show as their words,
and their definitions (`[prs]: https://…`) are no line of the answer: a new operator's answers
over the GDS Way showed them raw."""

from __future__ import annotations

from docassist.core import passages

BODY = """Open [PRs][prs] early and ask for [service monitoring][] before launch.

- Read the [2023 study][ibm] first.
- Tag a release as [beta] or [ops] when it is one.
- Read the cell as rows[0][1] or data["a"]["b"].

[prs]: https://example.org/pull-requests
  [ibm]: https://example.org/study "The study"
"""


def test_a_reference_link_is_its_words_and_its_definition_no_line() -> None:
    assert passages.render(BODY).lines == [
        "Open PRs early and ask for service monitoring before launch.",
        "• Read the 2023 study first.",
        "• Tag a release as [beta] or [ops] when it is one.",  # brackets alone are words
        '• Read the cell as rows[0][1] or data["a"]["b"].',  # code, not links
    ]
