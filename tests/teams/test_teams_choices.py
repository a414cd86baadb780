"""Clarifications as card actions in Teams: a click (an `Action.Submit` whose data names the
question) completes the pending request as the typed reply would; a stale one runs nothing."""

from __future__ import annotations

from typing import Any

from docassist.bot.teams import cards
from tests.teams.rig import TeamsRig, actions


def choices(teams: TeamsRig) -> list[dict[str, Any]]:
    asked = teams.connector.messages()[-1]
    return [data for data in actions(asked) if data[cards.ACTION_KEY] == cards.CHOICE]


def test_a_card_choice_completes_the_request(teams: TeamsRig) -> None:
    teams.post(teams.activity("How do I check its status?"))
    [first, *_] = choices(teams)
    assert first["result_id"] == teams.store.turns()[-1]["result_id"]
    teams.post(teams.activity(None, value=first))
    answered = teams.connector.messages()[-1]
    assert "DOC-" in answered.text
    clicked = teams.store.turns()[-1]
    assert clicked["decided_by"] == "pending" and clicked["tool_status"] == "tool_completed"


def test_a_card_choice_answers_inline_with_expect_replies(teams: TeamsRig) -> None:
    teams.post(teams.activity("Show the metadata of the TLS certificate document"))
    tls = next(data for data in choices(teams) if data["reply"] == "DOC-TLS")
    response = teams.post(teams.activity(None, value=tls), expect_replies=True)
    [reply] = response.json()["activities"]
    assert "DOC-TLS" in str(reply)
    assert teams.store.turns()[-1]["status"] == "metadata_shown"


def test_a_stale_card_choice_runs_nothing(teams: TeamsRig) -> None:
    teams.post(teams.activity("How do I check its status?"))
    first = choices(teams)[0]
    teams.post(teams.activity("the docassist-worker service"))
    tools = len(teams.store.tool_calls())
    teams.post(teams.activity(None, value=first))
    assert "no longer waiting" in teams.connector.messages()[-1].text
    stale = teams.store.turns()[-1]
    assert stale["status"] == "invalid_message" and stale["decision_reason"] == "stale_choice"
    assert len(teams.store.tool_calls()) == tools
