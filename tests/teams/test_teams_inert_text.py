"""Document text is data in Teams: the hostile document's text, title and owner reach the
fake connector only inside TextRuns (which Adaptive Cards never read as markdown), and the
only link is the catalog url."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from docassist.bot.teams import cards
from docassist.storage import Store
from tests import hostile
from tests.teams.rig import TeamsRig


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    path, _ = hostile.hostile_database(tmp_path)
    return path


def run(text: str, **style: Any) -> dict[str, Any]:
    return {"type": "TextRun", "text": text, **style}


def rich(*inlines: dict[str, Any], spacing: str) -> dict[str, Any]:
    return {"type": "RichTextBlock", "inlines": list(inlines), "spacing": spacing}


def catalog_link(text: str, **style: Any) -> dict[str, Any]:
    return run(text, selectAction={"type": "Action.OpenUrl", "url": hostile.CATALOG_URL},
               **style)


def test_an_answer_card_shows_document_text_as_written(teams: TeamsRig, store: Store) -> None:
    chunk = hostile.chunk_id(store)
    teams.post(teams.activity(hostile.QUESTION))
    [reply] = teams.connector.messages()
    [card] = reply.cards
    cite = catalog_link("[1]", isSubtle=True, size="Small")  # resolved under "Sources"
    first, silence, command, read, now, runbook = hostile.SENTENCES
    small = {"size": "Small", "isSubtle": True}
    *shown, first_row, second_row = card["body"]
    assert first_row["type"] == second_row["type"] == "ActionSet"
    assert shown == [
        rich(run(f"From “{hostile.TITLE}”, section “Zebra alarm paging”:"), spacing="None"),
        rich(run(first.rstrip()), spacing="Small"),  # the page's own lines (issue 40)
        rich(run(silence), run(command, fontType="Monospace"), run(read),
             run(now, weight="Bolder"), run(runbook), cite, spacing="Small"),
        {"type": "TextBlock", "text": "Sources", "wrap": True, "weight": "Bolder",
         "spacing": "Medium"},
        rich(run("[1]\u00a0", **small), run(chunk, fontType="Monospace", **small),
             run(" ", **small),
             catalog_link(f"{hostile.TITLE} v1.0 — Zebra alarm paging", **small),
             spacing="None")]
    assert [action["data"]["docassist"] for action in cards.actions(card)] == [
        "show_sources", "clear", "feedback", "feedback"]


def test_metadata_and_catalog_cards_show_document_text_as_written(
        teams: TeamsRig, tmp_path: Path) -> None:
    teams.post(teams.activity("meta DOC-ZEBRA"))
    teams.post(teams.activity("docs"))
    meta, docs = teams.connector.messages()
    [meta_card] = meta.cards
    *meta_shown, buttons = meta_card["body"]
    assert buttons["type"] == "ActionSet"
    assert meta_shown == [
        rich(run(f"DOC-ZEBRA: {hostile.TITLE}"), spacing="None"),
        rich(run(f"Version: 1.0 · owner: {hostile.OWNER} · language: en · updated: "
                 "2026-11-01 · chunks: 1"), spacing="Small"),
        rich(run(f"Link: {hostile.CATALOG_URL}"), spacing="Small")]  # not the server's file
    assert str(tmp_path) not in json.dumps(meta_card)
    [docs_card] = docs.cards
    assert docs_card["body"] == [
        {"type": "TextBlock", "text": "Documents in the catalog:", "wrap": True,
         "weight": "Bolder"},
        rich(run("•\u00a0"), run("DOC-ZEBRA", fontType="Monospace"), run(" "),
             catalog_link(hostile.TITLE), run(" (v1.0)"), spacing="None")]
