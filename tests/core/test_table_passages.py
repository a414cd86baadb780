"""A long table is cut between rows, so a passage can open inside it: its header row is put
back from the chunk the table starts in, or its rows say nothing of what each cell is."""

from __future__ import annotations

import re
from pathlib import Path

from docassist.core import passages
from docassist.core.extractive import ExtractiveAnswerer
from docassist.storage import Bm25Retriever, Store, index_paths
from tests.conftest import EngineFactory
from tests.helpers import message

OFFICES = [(f"Office {n:02d}", f"Building {n}", f"+48 22 555 {n:02d} {n:02d}")
           for n in range(1, 40)]
ROWS = "\n".join(f"| {name} | {building} | {phone} |" for name, building, phone in OFFICES)
PAGE = f"""---
id: DOC-OFFICES
title: Offices
---
# Offices

## Reception desks

Every office has a reception desk; call it before a visit.

| Office | Building | Reception phone |
|---|---|---|
{ROWS.replace("| Office 33 |", "| Gdańsk harbour |")}

## Visiting hours

Visitors are welcome from nine to five.
"""


def test_a_passage_that_opens_inside_a_table_shows_its_header_row(
        make_engine: EngineFactory, store: Store, tmp_path: Path) -> None:
    (tmp_path / "offices.md").write_text(PAGE, encoding="utf-8")
    index_paths(store, [tmp_path])
    quoted = next(hit.chunk for hit in Bm25Retriever(store).search("Gdańsk harbour", 10)
                  if "Gdańsk harbour" in hit.chunk.text)
    assert passages.continues_table(passages.chunk_body(quoted.text))  # the table was cut
    engine = make_engine(retriever=Bm25Retriever(store),
                         answerer=ExtractiveAnswerer(catalog=store))
    result = engine.handle(message("What is the reception phone of the Gdańsk harbour office?"))
    assert result is not None and result.status == "answered"
    assert re.findall(r"\[([^\]]+-\d{4})\]", result.answer)[0] == quoted.chunk_id
    lines = result.answer.splitlines()
    header = lines.index("Office — Building — Reception phone")
    assert lines.index("Gdańsk harbour — Building 33 — +48 22 555 33 33") > header


def test_the_fact_a_which_question_asks_for_is_the_row_not_the_header(
        make_engine: EngineFactory, store: Store, tmp_path: Path) -> None:
    (tmp_path / "offices.md").write_text(PAGE, encoding="utf-8")
    index_paths(store, [tmp_path])
    engine = make_engine(retriever=Bm25Retriever(store),
                         answerer=ExtractiveAnswerer(catalog=store))
    result = engine.handle(message("Which reception phone does the Gdańsk harbour office have?"))
    assert result is not None and result.status == "answered"
    assert result.answer.startswith("Gdańsk harbour — Building 33 — +48 22 555 33 33 [")
    assert "Office — Building — Reception phone" in result.answer


def test_without_a_catalog_the_rows_are_shown_as_they_are(
        make_engine: EngineFactory, store: Store, tmp_path: Path) -> None:
    (tmp_path / "offices.md").write_text(PAGE, encoding="utf-8")
    index_paths(store, [tmp_path])
    engine = make_engine(retriever=Bm25Retriever(store), answerer=ExtractiveAnswerer())
    result = engine.handle(message("What is the reception phone of the Gdańsk harbour office?"))
    assert result is not None and result.status == "answered"
    assert "Gdańsk harbour — Building 33" in result.answer
    assert "Office — Building — Reception phone" not in result.answer


def test_a_table_header_is_the_row_above_its_rule() -> None:
    body = "Intro line.\n\n| A | B |\n|---|---|\n| 1 | 2 |"
    assert passages.table_header(body) == ["| A | B |", "|---|---|"]
    assert passages.table_header("No table here.") is None
    assert passages.continues_table("| 3 | 4 |\n| 5 | 6 |")
    assert not passages.continues_table("| A | B |\n|---|---|")
    assert not passages.continues_table("Text first.\n| 1 | 2 |")

