"""Middleman handbooks (the GDS Way, MoJ's, HMCTS's) head plain `.md` pages
`# <%= current_page.data.title %>`: a new operator saw that code as the section of answers
and sources. People see the page's title; search reads the heading as indexed."""

from __future__ import annotations

from pathlib import Path

from docassist.core.documents import shown_section
from docassist.storage import Store
from tests.conftest import EngineFactory, ranked_engine_over
from tests.helpers import message

PAGE = """---
title: Pair programming
---
# <%= current_page.data.title %>

Pair programming means two developers work on one change at one machine. Swap the keyboard
every thirty minutes, and take a break together every two hours.
"""


def test_a_heading_of_template_code_shows_as_the_page_title(
        tmp_path: Path, make_engine: EngineFactory, store: Store) -> None:
    (tmp_path / "handbook").mkdir()
    (tmp_path / "handbook" / "pair-programming.md").write_text(PAGE, encoding="utf-8")
    engine = ranked_engine_over(make_engine, store, tmp_path / "handbook")
    [chunk] = [chunk for chunk in store.current_chunks()
               if chunk.document_id == "DOC-PAIR-PROGRAMMING"]
    assert chunk.section == "<%= current_page.data.title %>"  # indexed as written
    result = engine.handle(message("How often should we swap the keyboard when pairing?"))
    assert result is not None and result.status == "answered"
    assert "<%" not in result.answer and "Pair programming" in result.answer
    assert [source.section for source in result.sources] == ["Pair programming"]


def test_other_tags_are_dropped_and_plain_labels_kept() -> None:
    title = "Pair programming"
    assert shown_section("<%= current_page.data.title %> (2/3)", title) == f"{title} (2/3)"
    assert shown_section('<%= partial "banner" %>', title) == title
    assert shown_section("Swapping <%= x %>roles", title) == "Swapping roles"
    assert shown_section("Why pair?", title) == "Why pair?"
