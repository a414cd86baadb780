"""A page's table of contents (list items that only link within the page) names every
section's heading, so it read as answering whatever the page covers: a new operator asked
which branch protection settings are required and was given the contents and the intro."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from docassist.core import passages
from docassist.core.extractive import ExtractiveAnswerer
from docassist.core.ports import SearchHit
from docassist.core.turn import TurnEngine
from docassist.storage import Bm25Retriever, Store, index_paths
from docassist.storage.reader import default_reader
from tests.conftest import EngineFactory
from tests.helpers import message

PAGE = """# Securing repositories

- [Securing repositories](#securing-repositories)
  - [Removing sensitive information](#removing-sensitive-information)
  - [Access controls](#access-controls)
    - [Organisation-level settings](#organisation-level-settings)
    - [Repository-specific settings](#repository-specific-settings)
  - [Code security](#code-security)
    - [Branch protection](#branch-protection)
  - [Reporting security problems](#reporting-security-problems)

This guide lays out security practice for our GitHub repositories, a minimum to build on,
alongside the other practices that make code secure as a whole.

## Access controls

Give teams, not people, access; review the members every quarter.

## Branch protection

- Require pull request reviews from code owners.
- Require signed commits.
- Dismiss stale approvals when new commits are pushed.

## Reporting security problems

Add a SECURITY.md that says where to report a vulnerability.
"""


def test_a_contents_list_is_not_shown_in_a_passage() -> None:
    body = PAGE.split("\n", 2)[2].split("## Access")[0]
    assert passages.render(body).lines == [
        "This guide lays out security practice for our GitHub repositories, a minimum to "
        "build on, alongside the other practices that make code secure as a whole."]
    code = "```md\n- [Setup](#setup)\n```"
    assert passages.without_contents(code) == code  # in code it is an example


@pytest.mark.parametrize(("question", "reader"), [
    ("what branch protection settings are required for our repos?", False),
    ("jakie ustawienia branch protection są wymagane w naszych repo?", True),
])
def test_the_section_the_contents_lists_answers(make_engine: EngineFactory, store: Store,
                                                tmp_path: Path, question: str,
                                                reader: bool) -> None:
    (tmp_path / "securing.md").write_text(PAGE)
    index_paths(store, [tmp_path])
    engine: TurnEngine = make_engine(retriever=Bm25Retriever(store), answerer=ExtractiveAnswerer(
        catalog=store, reader=default_reader() if reader else None))
    result = engine.handle(message(question))
    assert result is not None and result.status == "answered", result
    cited = [engine.catalog.chunk(found) for found in re.findall(r"\[([^\]]+-\d{4})\]",
                                                                  result.answer)]
    assert [chunk.section for chunk in cited if chunk] == ["Branch protection"]
    assert "Require signed commits." in result.answer and "(#" not in result.answer


def test_a_page_whose_contents_alone_was_retrieved_is_answered_from_the_section(
        store: Store, tmp_path: Path) -> None:
    """As over the real page: retrieval returned only the opening section (the contents
    hold the question's words), and the page's other sections come at score 0."""
    (tmp_path / "securing.md").write_text(PAGE)
    index_paths(store, [tmp_path])
    document = store.document("DOC-SECURING")
    assert document is not None
    chunks = [chunk for n in range(1, document.chunk_count + 1)
              if (chunk := store.chunk(f"{document.document_id}-{document.content_sha256[:10]}"
                                       f"-{n:04d}")) is not None]
    hits = [SearchHit(chunk, document, 0.9 if n == 0 else 0.0) for n, chunk in enumerate(chunks)]
    answer = ExtractiveAnswerer(catalog=store, reader=default_reader()).compose(
        "jakie ustawienia branch protection są wymagane w naszych repo?", hits, "pl")
    assert "Require signed commits." in answer and "This guide" not in answer
