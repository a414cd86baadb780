"""The Teams endpoint end to end over real HTTP: Activities posted to `POST /api/messages`,
replies captured by a fake connector at the activity's `serviceUrl` or returned inline with
`deliveryMode: expectReplies`."""

from __future__ import annotations

import logging
import re
from typing import Any

import httpx
import pytest

from docassist.bot.teams import cards
from docassist.bot.teams.server import (
    TeamsCredentials,
)
from docassist.core.messages import ConversationKey
from docassist.core.results import TurnResult
from docassist.core.tools import ToolRegistry
from docassist_testkit.fakes.teams_connector import card_text
from tests.conftest import EngineFactory
from tests.helpers import MODEL_DOWN, ScriptedSelector, recording
from tests.teams.rig import ADMIN, BOT, CHANNEL, PERSONAL, TENANT, TeamsRig, actions


def test_channel_mention_is_answered_in_its_thread_as_a_card(teams: TeamsRig) -> None:
    thread = teams.channel_thread("1001")
    response = teams.post(teams.activity(
        "How do I renew the TLS certificate?", conversation=thread,
        conversation_type="channel", activity_id="1001", mention=True))
    assert response.status_code == 202
    [reply] = teams.connector.messages()
    assert reply.conversation_id == thread and reply.reply_to_id == "1001"
    assert reply.authorization is None  # anonymous mode sends no token
    [card] = reply.cards
    assert card["type"] == "AdaptiveCard"
    labels = [i for i, block in enumerate(card["body"]) if block.get("text") == "Sources"]
    [label] = labels
    answer = card["body"][:label]
    sources = [block for block in card["body"][label + 1:] if block["type"] != "ActionSet"]
    assert any("[1]" in cards.element_text(block) for block in answer)
    assert not any("DOC-TLS-" in cards.element_text(block) for block in answer)
    assert [re.match(r"\[(\d+)\]\u00a0DOC-TLS-", cards.element_text(block)).group(1)  # type: ignore[union-attr]
            for block in sources] == [str(n) for n in range(1, len(sources) + 1)]
    assert all(block["inlines"][1]["fontType"] == "Monospace" for block in sources)
    assert [data["docassist"] for data in actions(reply)] == [
        "show_sources", "clear", "feedback", "feedback"]
    [turn] = teams.store.turns()
    assert turn["platform"] == "teams" and turn["status"] == "answered"
    state = teams.store.load(ConversationKey(platform="teams", workspace=TENANT, channel=CHANNEL,
                                             thread="1001"))
    assert state.state.history[0].content == "How do I renew the TLS certificate?"  # no mention


def test_personal_chat_follow_up_continues_the_conversation(teams: TeamsRig) -> None:
    teams.post(teams.activity("Co zrobić po zmianie konfiguracji docassist-api?"))
    teams.post(teams.activity("Jak sprawdzić jej stan?"))
    first, second = teams.connector.messages()
    assert first.conversation_id == second.conversation_id == PERSONAL
    assert "DOC-INSTR-" in second.text and "Źródła" in second.text
    one, two = teams.store.turns()
    assert one["conversation_id"] == two["conversation_id"]
    assert two["resolution_status"] == "resolved"


def test_a_clarification_is_completed_in_the_thread(teams: TeamsRig) -> None:
    thread = teams.channel_thread("2001")
    teams.post(teams.activity("How do I check its status?", conversation=thread,
                              conversation_type="channel", activity_id="2001", mention=True))
    teams.post(teams.activity("the docassist-worker service", conversation=thread,
                              conversation_type="channel", mention=True))
    asked, answered = teams.connector.messages()
    assert "Which object do you mean?" in asked.text
    assert answered.conversation_id == thread and "DOC-WORKER-" in answered.text
    assert teams.store.turns()[-1]["decided_by"] == "pending"


def test_card_actions_show_sources_and_clear(teams: TeamsRig) -> None:
    teams.post(teams.activity("How do I renew the TLS certificate?"))
    teams.post(teams.activity(None, value={"docassist": "show_sources"}))
    teams.post(teams.activity(None, value={"docassist": "clear"}))
    teams.post(teams.activity("show sources"))
    teams.post(teams.activity("How do I renew the TLS certificate?"))
    teams.post(teams.activity("clear"))
    statuses = [turn["status"] for turn in teams.store.turns()]
    assert statuses == ["answered", "sources_shown", "cleared", "clarification_needed",
                        "answered", "cleared"]
    replies = teams.connector.messages()
    assert "(turn 1)" in replies[1].text and "•\u00a0[DOC-TLS-" in replies[1].text
    [shown] = replies[1].cards
    cited = [run for block in shown["body"] for run in block.get("inlines", [])
             if run["text"].startswith("[DOC-TLS-")]
    assert cited and all(run["selectAction"]["url"].endswith("/DOC-TLS") for run in cited)
    assert "cleared" in replies[2].text
    assert not [data for data in actions(replies[2]) if data["docassist"] == "clear"]


def test_metadata_docs_and_help_commands(teams: TeamsRig) -> None:
    teams.post(teams.activity("meta DOC-TLS"))
    teams.post(teams.activity("meta"))
    teams.post(teams.activity("docs"))
    teams.post(teams.activity("pomoc"))
    meta, usage, docs, help_text = teams.connector.messages()
    assert "DOC-TLS: TLS certificate renewal" in meta.text
    assert "meta DOC-" in usage.text
    assert "•\u00a0DOC-INSTR " in docs.text and "•\u00a0DOC-TLS " in docs.text
    ids = [block["inlines"][1] for block in docs.cards[0]["body"][1:]]
    assert {"type": "TextRun", "text": "DOC-TLS", "fontType": "Monospace"} in ids
    assert "Polecenia: meta ID-DOKUMENTU" in help_text.text
    assert [turn["status"] for turn in teams.store.turns()] == ["metadata_shown"]


def test_stats_is_for_admins_only(teams: TeamsRig, caplog: pytest.LogCaptureFixture) -> None:
    teams.post(teams.activity("How do I renew the TLS certificate?"))
    teams.post(teams.activity("stats", user="aad-someone"))
    teams.post(teams.activity("stats", user=ADMIN))
    _, refused, stats = teams.connector.messages()
    assert "for DocAssist administrators only" in refused.text
    assert "aad-someone" not in caplog.text and "refused stats" in caplog.text
    [card] = stats.cards
    assert "Turns: 1" in card_text(card)
    facts = next(block for block in card["body"] if block["type"] == "FactSet")["facts"]
    assert {"title": "answered", "value": "1"} in facts


def test_feedback_action_is_stored(teams: TeamsRig) -> None:
    teams.post(teams.activity("How do I renew the TLS certificate?"))
    [answer] = teams.connector.messages()
    bad = next(d for d in actions(answer) if d.get("verdict") == "bad")
    teams.post(teams.activity(None, value=bad))
    assert "Thanks for the feedback" in teams.connector.messages()[-1].text
    [vote] = teams.store.feedback()
    assert vote["result_id"] == bad["result_id"] and int(vote["value"]) < 0


def test_a_duplicate_activity_is_answered_once(teams: TeamsRig) -> None:
    activity = teams.activity("How do I renew the TLS certificate?", activity_id="dup-1")
    assert teams.post(activity).status_code == 202
    assert teams.post(activity).status_code == 202
    inline = teams.activity("What should I do after changing the docassist-api config?",
                            activity_id="dup-2")
    first = teams.post(inline, expect_replies=True).json()["activities"]
    again = teams.post(inline, expect_replies=True).json()["activities"]
    assert len(first) == 1 and again == []
    assert len(teams.connector.messages()) == 1 and len(teams.store.turns()) == 2


def test_expect_replies_returns_the_card_inline(teams: TeamsRig) -> None:
    response = teams.post(teams.activity("Jak odnowić certyfikat TLS?"), expect_replies=True)
    assert response.status_code == 200
    [reply] = response.json()["activities"]
    content = reply["attachments"][0]["content"]
    assert "DOC-TLS-" in card_text(content) and "Źródła" in card_text(content)
    assert teams.connector.sent == []  # nothing went through the connector


def test_model_down_is_said_in_the_conversation(teams_factory: Any,
                                                make_engine: EngineFactory) -> None:
    teams = teams_factory(make_engine(ScriptedSelector(MODEL_DOWN), human_channel="#ops"))
    teams.post(teams.activity("How do I renew TLS?"))
    [reply] = teams.connector.messages()
    assert "#ops" in reply.text
    assert teams.store.turns()[0]["status"] == "handoff"


def test_failed_replies_are_retried_then_the_user_is_told(teams: TeamsRig) -> None:
    teams.connector.fail(500)
    teams.post(teams.activity("How do I renew the TLS certificate?"))
    [reply] = teams.connector.messages()
    assert "DOC-TLS-" in reply.text
    assert teams.store.inbox_rows()[0]["status"] == "done"
    teams.connector.fail(500, 500, 500)
    teams.post(teams.activity("What should I do after changing the docassist-api config?"))
    assert "couldn't post my answer" in teams.connector.messages()[-1].text
    assert teams.store.inbox_rows()[1]["status"] == "failed"


def test_with_auth_on_unauthenticated_requests_are_refused(
        teams_factory: Any, make_engine: EngineFactory, registry: ToolRegistry,
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    with recording(registry, "answer_from_documents") as calls:
        teams = teams_factory(make_engine(), TeamsCredentials("app-1", TENANT, "s3cret"))
        activity = teams.activity("How do I renew the TLS certificate?")
        missing = teams.post(activity)
        garbage = teams.post(activity, headers={"Authorization": "Bearer not-a-jwt"})
        wrong_scheme = teams.post(activity, headers={"Authorization": "Basic dXNlcjpwYXNz"})
    assert [r.status_code for r in (missing, garbage, wrong_scheme)] == [401, 401, 401]
    assert "s3cret" not in missing.text + garbage.text + wrong_scheme.text + caplog.text
    assert calls["answer_from_documents"].calls == []
    assert teams.store.inbox_rows() == [] and teams.store.turns() == []
    assert teams.connector.sent == []
    assert httpx.get(teams.url.replace("/api/messages", "/healthz")).json() == {"ok": True}


def test_a_token_without_a_key_id_is_refused_with_401_not_a_500(
        teams_factory: Any, make_engine: EngineFactory, registry: ToolRegistry) -> None:
    """Issue 39: the SDK looked the token's `kid` up and raised KeyError (a 500)."""
    import jwt

    token = jwt.encode({"aud": "app-1", "iss": "https://api.botframework.com",
                        "exp": 4_102_444_800}, "any-key-at-all-32-bytes-long-xxxx",
                       algorithm="HS256")
    with recording(registry, "answer_from_documents") as calls:
        teams = teams_factory(make_engine(), TeamsCredentials("app-1", TENANT, "s3cret"))
        refused = teams.post(teams.activity("How do I renew the TLS certificate?"),
                             headers={"Authorization": f"Bearer {token}"})
    assert refused.status_code == 401
    assert calls["answer_from_documents"].calls == []
    assert teams.store.inbox_rows() == [] and teams.store.turns() == []


def test_long_answers_are_split_across_cards_and_nothing_is_lost() -> None:
    answer = "\n\n".join(f"Paragraph {i}: " + "word " * 400 for i in range(12))
    result = TurnResult(result_id="r", conversation_id="c", generation=0, turn_id=1,
                        status="answered", answer=answer, language="en")
    rendered = cards.render(result)
    assert len(rendered) > 1 and cards.actions(rendered[-1]) and not cards.actions(rendered[0])
    texts = [card_text(card) for card in rendered]
    assert all(len(text) <= cards.CARD_TEXT_LIMIT for text in texts)
    assert " ".join(" ".join(texts).split()) == " ".join(answer.split())


def test_added_to_a_team_it_introduces_itself_once(teams: TeamsRig) -> None:
    update = teams.activity(None, conversation=CHANNEL, conversation_type="channel")
    update = {**update, "type": "conversationUpdate", "membersAdded": [BOT]}
    teams.post(update)
    teams.post({**update, "id": "someone-joins", "membersAdded": [{"id": "29:bob"}]})
    [hello] = teams.connector.messages()
    assert "Commands: meta DOCUMENT-ID, docs, clear, help" in hello.text
    assert teams.store.turns() == []


def test_files_are_not_read_but_the_text_is_answered(teams: TeamsRig) -> None:
    html = {"contentType": "text/html", "content": "<p>How do I renew the TLS certificate?</p>"}
    teams.post({**teams.activity("How do I renew the TLS certificate?"), "attachments": [html]})
    file = {"contentType": "application/vnd.microsoft.teams.file.download.info",
            "name": "config.yaml", "content": {"downloadUrl": "http://127.0.0.1:9/f"}}
    teams.post({**teams.activity("How do I renew the TLS certificate?"),
                "attachments": [html, file]})
    teams.post({**teams.activity(None), "attachments": [file]})
    answer, note, second_answer, only_note = teams.connector.messages()
    assert "DOC-TLS-" in answer.text and "DOC-TLS-" in second_answer.text
    assert "don't read attachments" in note.text and "don't read attachments" in only_note.text
    assert len(teams.store.turns()) == 2
