""""Ask a human" after a 👎 in Teams: until the help channel's team was seen, the user is sent
to DOCASSIST_HUMAN_CHANNEL; then one post in the channel per answer, with a link back."""

from __future__ import annotations

from typing import Any

from docassist.core.turn import TurnEngine
from tests.teams.rig import TENANT, TeamsRig, actions

TEAM = "19:team-general@thread.tacv2"
HELP = "19:helpdesk@thread.tacv2"


def ask_human(teams: TeamsRig) -> dict[str, Any]:
    teams.post(teams.activity("How do I renew the TLS certificate?"))
    bad = next(d for d in actions(teams.connector.messages()[-1]) if d.get("verdict") == "bad")
    teams.post(teams.activity(None, value=bad))
    return next(d for d in actions(teams.connector.messages()[-1])
                if d["docassist"] == "ask_human")


def installed_in_the_team(teams: TeamsRig) -> None:
    teams.post({"type": "installationUpdate", "id": "inst-1", "action": "add",
                "channelId": "msteams", "serviceUrl": teams.connector.url,
                "from": {"id": "29:admin"}, "recipient": {"id": "28:docassist-bot"},
                "conversation": {"id": TEAM, "conversationType": "channel",
                                 "tenantId": TENANT},
                "channelData": {"team": {"id": TEAM}, "channel": {"id": HELP},
                                "tenant": {"id": TENANT}}})


def test_until_the_team_is_known_the_user_is_sent_to_the_help_channel(
        teams_factory: Any, engine: TurnEngine) -> None:
    teams = teams_factory(engine, teams_human_channel=HELP, human_channel="#it-help")
    teams.post(teams.activity(None, value=ask_human(teams)))
    assert "Please ask in #it-help" in teams.connector.messages()[-1].text
    assert not [s for s in teams.connector.sent if s.conversation_id == HELP]
    assert len(teams.store.turns()) == 1  # the clicks ran no turn, no tool


def test_once_known_one_post_per_answer_with_a_link_back(
        teams_factory: Any, engine: TurnEngine) -> None:
    teams = teams_factory(engine, teams_human_channel=HELP)
    installed_in_the_team(teams)
    ask = ask_human(teams)
    teams.post(teams.activity(None, value=ask))
    teams.post(teams.activity(None, value=ask, user="aad-user-2"))
    [posted] = [s for s in teams.connector.sent if s.conversation_id == HELP]
    assert posted.reply_to_id is None  # a new message in the channel, not a reply
    assert "needs help" in posted.text
    assert "https://teams.microsoft.com/l/chat/a%3Apersonal-chat-1/0" in posted.text
    told_first, told_second = [s.text for s in teams.connector.messages()][-2:]
    assert "passed your question to the help channel" in told_first
    assert "already been passed" in told_second


def test_a_failed_post_is_told_and_a_later_click_tries_again(
        teams_factory: Any, engine: TurnEngine) -> None:
    teams = teams_factory(engine, teams_human_channel=HELP)
    installed_in_the_team(teams)
    ask = ask_human(teams)
    teams.connector.fail(500)  # the channel post
    teams.post(teams.activity(None, value=ask))
    assert not [s for s in teams.connector.sent if s.conversation_id == HELP]
    assert "couldn't post" in teams.connector.messages()[-1].text
    teams.post(teams.activity(None, value=ask))
    assert len([s for s in teams.connector.sent if s.conversation_id == HELP]) == 1
