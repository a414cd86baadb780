"""A 👎 in Teams asks why with a card (a choice of reasons, optional words); its submit is
stored with the vote, the words only with DOCASSIST_SAVE_RAW."""

from __future__ import annotations

from typing import Any

from docassist.bot.teams import cards
from tests.teams.rig import TeamsRig, actions


def bad_vote(teams: TeamsRig) -> dict[str, Any]:
    teams.post(teams.activity("How do I renew the TLS certificate?"))
    [answer] = teams.connector.messages()
    bad = next(d for d in actions(answer) if d.get("verdict") == "bad")
    teams.post(teams.activity(None, value=bad))
    asked = teams.connector.messages()[-1]
    [card] = asked.cards
    choice_set = next(e for e in card["body"] if e["type"] == "Input.ChoiceSet")
    assert [c["value"] for c in choice_set["choices"]] == [
        "wrong", "outdated", "incomplete", "not_what_i_asked", "other"]
    [submit, ask] = actions(asked)
    assert submit == {"docassist": "feedback_reason", "result_id": bad["result_id"]}
    assert ask == {"docassist": "ask_human", "result_id": bad["result_id"]}
    return submit


def test_a_bad_vote_asks_why_and_the_reason_is_stored(teams: TeamsRig) -> None:
    submit = bad_vote(teams)
    assert "Thanks for the feedback" in teams.connector.messages()[-1].text
    teams.post(teams.activity(None, value={**submit, cards.REASON_INPUT: "wrong",
                                           cards.REASON_TEXT_INPUT: "step 2 fails"}))
    assert "I noted the reason: Wrong" in teams.connector.messages()[-1].text
    [vote] = teams.store.feedback()
    assert (vote["value"], vote["reason"], vote["reason_text"]) == (-1, "wrong", None)


def test_a_submit_without_a_reason_stores_nothing(teams: TeamsRig) -> None:
    submit = bad_vote(teams)
    teams.post(teams.activity(None, value={**submit, cards.REASON_INPUT: "bogus"}))
    assert "Please pick a reason" in teams.connector.messages()[-1].text
    assert teams.store.feedback()[0]["reason"] is None


def test_a_reason_for_an_unknown_answer_is_told(teams: TeamsRig) -> None:
    submit = bad_vote(teams)
    teams.post(teams.activity(None, value={**submit, "result_id": "f" * 16,
                                           cards.REASON_INPUT: "outdated"}))
    assert "could not find the answer" in teams.connector.messages()[-1].text
    assert [vote["reason"] for vote in teams.store.feedback()] == [None]
    assert len(teams.store.turns()) == 1


def test_a_vote_naming_another_conversations_answer_is_refused(teams: TeamsRig) -> None:
    """Issue 39: a crafted card value with an answer id from another conversation."""
    teams.post(teams.activity("How do I renew the TLS certificate?"))
    result_id = teams.store.turns()[0]["result_id"]
    other = teams.activity(None, value={"docassist": "feedback", "verdict": "bad",
                                        "result_id": result_id})
    other["conversation"] = {**other["conversation"], "id": "a:another-chat"}
    teams.post(other)
    assert "not from this conversation" in teams.connector.messages()[-1].text
    assert teams.store.feedback() == []
