"""Citations in chat are numbered markers; the sources block resolves each to its chunk id
and title (issue 40: long path ids drowned the answer). `ask --json` keeps the ids inline and
adds `citations`."""

from __future__ import annotations

import re
from pathlib import Path

from rich.console import Console

from docassist.bot.slack import render as slack
from docassist.bot.teams import cards
from docassist.bot.terminal.chat import render_result
from docassist.core.documents import CITATION
from docassist.core.results import TurnResult
from docassist.storage import Store
from docassist_testkit.fakes.teams_connector import card_text
from tests.cli_run import one_json, run
from tests.conftest import EngineFactory, ranked_engine_over
from tests.helpers import message

LAPTOPS = """# Laptops

## Ordering a laptop

1. Open the IT portal and choose **New laptop**.
2. Pick the standard model unless your manager approved another one.
3. Delivery takes three working days; the laptop arrives at your office's reception.
"""


def _answer_from_a_deep_tree(tmp_path: Path, make_engine: EngineFactory,
                             store: Store) -> TurnResult:
    folder = tmp_path / "handbook" / "departments" / "people-ops" / "tools" / "equipment"
    folder.mkdir(parents=True)
    (folder / "laptops-and-other-equipment-faq.md").write_text(LAPTOPS, encoding="utf-8")
    engine = ranked_engine_over(make_engine, store, tmp_path / "handbook")
    result = engine.handle(message("How do I order a laptop?"))
    assert result is not None and result.status == "answered"
    return result


def test_chat_shows_markers_and_the_sources_block_resolves_them(
        tmp_path: Path, make_engine: EngineFactory, store: Store) -> None:
    result = _answer_from_a_deep_tree(tmp_path, make_engine, store)
    cited = list(dict.fromkeys(CITATION.findall(result.answer)))
    assert cited and all(len(chunk_id) > 30 for chunk_id in cited)  # a long path id

    [post] = slack.render(result)
    text = "\n".join(block["text"]["text"] for block in post["blocks"]
                     if block["type"] == "section")
    assert not any(chunk_id in text for chunk_id in cited) and "[1]" in text
    [context] = [block for block in post["blocks"] if block["type"] == "context"]
    listed = [element["text"] for element in context["elements"]]
    assert [re.match(r"\[(\d+)\] `([^`]+)`", line).groups() for line in listed] == [  # type: ignore[union-attr]
        (str(number), chunk_id) for number, chunk_id in enumerate(cited, start=1)]
    assert all("Laptops" in line for line in listed)

    [card] = cards.render(result)
    shown = card_text(card)
    answer_part, _, sources_part = shown.partition("\n" + "Sources")
    assert "[1]" in answer_part and not any(chunk_id in answer_part for chunk_id in cited)
    assert all(f"[{n}]\u00a0{chunk_id}" in sources_part
               for n, chunk_id in enumerate(cited, start=1))

    console = Console(width=200, record=True)
    console.print(render_result(result))
    terminal = console.export_text()
    body, _, sources = terminal.partition("Sources:")
    assert "[1]" in body and not any(chunk_id in body for chunk_id in cited)
    assert all(f"[{n}] {chunk_id}" in sources for n, chunk_id in enumerate(cited, start=1))


def test_sources_shown_lists_ids_without_markers(
        tmp_path: Path, make_engine: EngineFactory, store: Store) -> None:
    """"show sources" is itself the list: its ids stay ids (no marker resolves them)."""
    result = _answer_from_a_deep_tree(tmp_path, make_engine, store)
    shown = TurnResult.model_validate({**result.model_dump(), "status": "sources_shown"})
    [post] = slack.render(shown)
    [context] = [block for block in post["blocks"] if block["type"] == "context"]
    assert all(element["text"].startswith("`") for element in context["elements"])


def test_ask_json_keeps_inline_ids_and_adds_citations(db_path: Path) -> None:
    done = run("ask", "How do I renew the TLS certificate?", "--json", db=db_path)
    result = one_json(done.stdout)
    inline = list(dict.fromkeys(CITATION.findall(result["answer"])))
    assert inline and [c["chunk_id"] for c in result["citations"]] == inline
    assert [c["marker"] for c in result["citations"]] == list(range(1, len(inline) + 1))
    first = result["citations"][0]
    assert first["document_id"] == "DOC-TLS" and first["title"] == "TLS certificate renewal"
    assert first["url"] == "https://intranet.example.com/docs/DOC-TLS"
