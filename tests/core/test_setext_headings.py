"""A Setext heading (a one-line paragraph underlined with `===` or `---`) names its section,
as CommonMark reads it; some handbook pages and decision records are written so (42 of the
5,550 pages in samples/). A `---` that underlines no paragraph stays a rule."""

from __future__ import annotations

from docassist.core.documents import parse_document

PAGE = """Worker configuration
====================

Workers share the main process's database.

Scaling out
-----------

Add a worker per 1,000 active users.

- a list item
---

A paragraph of two lines
that a rule follows directly.
---

```text
not a heading
---
```

Status
------
Accepted.
"""


def test_an_underlined_line_is_a_heading() -> None:
    parsed = parse_document("workers.md", "workers", PAGE)
    assert parsed.info.title == "Worker configuration"
    assert [chunk.section for chunk in parsed.chunks] == [
        "Worker configuration", "Scaling out", "Status"]
    intro, _, status = (chunk.text for chunk in parsed.chunks)
    assert "Workers share the main process's database." in intro
    assert "====" not in intro and "Scaling out" not in intro
    assert status.endswith("Accepted.")


def test_a_rule_that_underlines_no_paragraph_stays_in_its_section() -> None:
    """Under a list item, under a two-line paragraph, inside code: not a heading."""
    scaling = parse_document("workers.md", "workers", PAGE).chunks[1].text
    assert "- a list item\n---" in scaling
    assert "that a rule follows directly.\n---" in scaling
    assert "not a heading\n---" in scaling
