"""What a Teams user sees: the cards the bot sends over the fake connector, rendered by
Microsoft's `adaptivecards` package in headless Chromium (one launch for all of them), and
checked on the rendered DOM: a line per point and step, monospace commands, every button."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from bs4 import BeautifulSoup, Tag

from docassist.bot.teams import cards
from docassist.core import i18n
from docassist.core.results import TurnResult
from docassist.models.adapters import ModelAnswerer
from docassist.models.base import RetryPolicy
from docassist.models.openai import OpenAIModel
from docassist_testkit import render_page as page
from docassist_testkit.fakes.model_server import ModelServer, openai_stream
from tests.conftest import EngineFactory
from tests.helpers import rules_selector
from tests.teams.rig import TeamsRig

STEPS_QUESTION = "How do I reload docassist-gateway after a certificate change?"


def browser() -> str:
    found = page.chromium()
    if found is None or not page.renderer_installed():
        if os.environ.get("CI"):
            pytest.fail("chromium or testkit/render/node_modules is missing (scripts/test "
                        "installs both)")
        pytest.skip("chromium or the adaptivecards package is not installed")
    return found


def steps_answer(chunk: str) -> str:
    return ("To reload the gateway:\n"
            f"1. Copy the new files into /etc/docassist/tls/. [{chunk}]\n"
            f"2. Reload it with `sudo systemctl reload docassist-gateway` [{chunk}]\n"
            "3. Check the log:\n"
            "```\njournalctl -u docassist-gateway -n 50\n```")


def long_answer() -> TurnResult:
    steps = "\n".join(f"{n}. Step {n}: " + "check the settings carefully " * 15
                      for n in range(1, 61))
    return TurnResult(result_id="long", conversation_id="c", generation=0, turn_id=1,
                      status="answered", answer=f"Do this:\n{steps}", language="en")


@pytest.fixture
def model_rig(teams_factory: Any, make_engine: EngineFactory) -> Iterator[
        tuple[TeamsRig, ModelServer]]:
    with ModelServer() as server, httpx.Client(timeout=5) as client:
        model = OpenAIModel("m", client, base_url=f"{server.url}/v1",
                            policy=RetryPolicy(attempts=1))
        yield teams_factory(make_engine(rules_selector(), answerer=ModelAnswerer(model))), server


def conversation_cards(teams: TeamsRig, model_rig: tuple[TeamsRig, ModelServer]
                       ) -> dict[str, list[dict[str, Any]]]:
    """Cards as the Teams tests make them: sent by the bot, captured by the fake connector."""
    teams.post(teams.activity("Jak odnowić certyfikat TLS?"))
    teams.post(teams.activity(None, value={"docassist": "show_sources"}))
    teams.post(teams.activity("meta DOC-TLS"))
    teams.post(teams.activity("Restart docassist-api now"))
    teams.post(teams.activity("docs"))
    teams.post(teams.activity("How do I check its status?",
                              conversation=teams.channel_thread("5001"),
                              conversation_type="channel", activity_id="5001", mention=True))
    rig, server = model_rig
    chunk = rig.adapter.engine.retriever.search(STEPS_QUESTION, 1)[0].chunk.chunk_id
    server.script("/v1/chat/completions", openai_stream(steps_answer(chunk)))
    # A group chat: the answer streams into one post, which the finished answer's card
    # replaces (a personal chat streams plain text, and only the sources come as a card).
    rig.post(rig.activity(STEPS_QUESTION, conversation="19:group-chat-2@thread.v2",
                          conversation_type="groupChat", activity_id="s-1", mention=True))
    names = ["answer", "sources", "metadata", "refusal", "catalog", "clarification"]
    sent = teams.connector.messages()
    found = {name: reply.cards for name, reply in zip(names, sent, strict=True)}
    steps = rig.connector.updated[-1] if rig.connector.updated else rig.connector.messages()[-1]
    return {**found, "steps": steps.cards, "long": cards.render(long_answer()),
            "single_newlines": [cards.card([cards.text_block("Intro:\n• one\n• two")])]}


def lines(card: Tag) -> list[str]:
    """The card's rendered text elements, one string each, as the browser shows them."""
    return [" ".join(element.get_text().split())
            for element in card.select(".ac-richTextBlock, .ac-textBlock")]


def buttons(card: Tag) -> list[str]:
    return [str(button.get("title")) for button in card.select("button.ac-pushButton")]


def monospace(card: Tag) -> list[str]:
    return [run.get_text() for run in card.select(".ac-textRun")
            if "monospace" in str(run.get("style"))]


def test_teams_cards_render_as_lines_with_monospace_commands_and_buttons(
        teams: TeamsRig, model_rig: tuple[TeamsRig, ModelServer], tmp_path: Path) -> None:
    found = browser()
    payloads = conversation_cards(teams, model_rig)
    html = page.write_page(payloads, tmp_path / "cards.html", look=False)
    dom = BeautifulSoup(page.run_chromium(found, html, tmp_path / "profile", "--dump-dom"),
                        "html.parser")
    rendered = {str(section["data-name"]): section.select(".ac-adaptiveCard")
                for section in dom.select("section")}
    assert {name: len(list_) for name, list_ in rendered.items()} == {
        name: len(list_) for name, list_ in payloads.items()}
    pl = [i18n.text(key, "pl") for key in ("button_show_sources", "button_clear_thread",
                                           "feedback_good", "feedback_bad")]
    en = [i18n.text(key, "en") for key in ("button_show_sources", "button_clear_thread",
                                           "feedback_good", "feedback_bad")]

    [answer] = rendered["answer"]
    shown = lines(answer)
    assert shown[0].startswith("Według dokumentacji:")
    points = [line for line in shown[1:]
              if re.match(r"(• |\d+\. )", line) and re.search(r"\[\d+\]$", line)]
    assert len(points) >= 2  # each point or step its own element, its citation inside it
    assert any(code.startswith("openssl s_client -connect") for code in monospace(answer))
    assert "Źródła" in shown and buttons(answer) == pl
    assert [a["href"] for a in answer.select("a.ac-anchor")] == [
        "https://intranet.example.com/docs/DOC-TLS"] * len(answer.select("a.ac-anchor"))

    [steps] = rendered["steps"]
    shown = lines(steps)
    assert [line[:3] for line in shown[1:4]] == ["1. ", "2. ", "3. "]
    assert shown[2].startswith("2. Reload it with sudo systemctl reload docassist-gateway [")
    assert monospace(steps)[:2] == ["sudo systemctl reload docassist-gateway",
                                    "journalctl -u docassist-gateway -n 50"]
    assert buttons(steps) == en

    [sources] = rendered["sources"]
    assert "(tura 1)" in lines(sources)[0] and buttons(sources) == pl[:2]
    source_line = r"• \[DOC-TLS-\w+-\d{4}\] TLS certificate renewal \(v2\.1\) — .+"
    listed = [line for line in lines(sources)[1:] if re.fullmatch(source_line, line)]
    apart = [line for line in lines(sources) if line == i18n.text("sources_also_given", "pl")]
    # Each source once, on its own line; those the answer did not quote under their own line.
    assert len(listed) == len(lines(sources)) - 1 - len(apart) >= 2 and len(apart) <= 1
    assert len(set(listed)) == len(listed)
    assert [a.get_text()[:9] for a in sources.select("a.ac-anchor")] == ["[DOC-TLS-"] * len(
        listed)
    [metadata] = rendered["metadata"]
    assert lines(metadata)[0] == "DOC-TLS: TLS certificate renewal"
    # "meta DOC-TLS" names no language: the Polish thread keeps Polish.
    assert lines(metadata)[1].startswith("Wersja: 2.1 · właściciel: Security Team")
    assert buttons(metadata) == pl[:2]
    [refusal] = rendered["refusal"]
    assert len(lines(refusal)) == 1 and buttons(refusal) == en[:2]
    [catalog] = rendered["catalog"]
    assert len(lines(catalog)) == 1 + 7 and "DOC-TLS" in monospace(catalog)
    [clarification] = rendered["clarification"]
    assert "Which object do you mean?" in " ".join(lines(clarification))
    # The candidates come first as buttons (issue 23), then the thread's two.
    *choices, show, clear = buttons(clarification)
    assert "the docassist-api service" in choices and [show, clear] == en[:2]

    *first, last = rendered["long"]
    assert first and all(buttons(card) == [] for card in first) and buttons(last) == en
    every_line = [line for card in rendered["long"] for line in lines(card)]
    assert every_line == ["Do this:", *(f"{n}. Step {n}: " + " ".join(
        ["check the settings carefully"] * 15) for n in range(1, 61))]

    # The control: one TextBlock with single newlines is one run-on paragraph in Teams'
    # renderer, which is what the cards above avoid.
    [control] = rendered["single_newlines"]
    assert [p.get_text() for p in control.select("p")] == ["Intro:\n• one\n• two"]
