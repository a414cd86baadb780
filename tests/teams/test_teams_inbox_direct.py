"""Teams direct requests (`docs`, `help`, `stats`, votes) go through the inbox: a redelivered
activity is answered once, and after a crash a reply whose posted id was stored is not
posted again (the state a process leaves when it dies between the post and `done`)."""

from __future__ import annotations

from typing import Any

from microsoft_agents.activity import ChannelAccount, ConversationAccount, ConversationReference

from docassist.bot.teams.audience import PLATFORM
from docassist.bot.teams.direct import DirectRequest
from docassist.core.messages import ChatMessage, ConversationKey
from docassist.core.turn import TurnEngine
from docassist.storage import Store
from docassist_testkit.fakes.teams_connector import FakeConnector
from tests.teams.rig import ADMIN, PERSONAL, TENANT, TeamsRig, actions

KEY = ConversationKey(platform=PLATFORM, workspace=TENANT, channel=PERSONAL, thread="chat")


def test_redelivered_commands_and_votes_are_answered_once(teams: TeamsRig) -> None:
    docs = teams.activity("docs", activity_id="d-1")
    stats = teams.activity("stats", activity_id="d-2", user=ADMIN)
    for activity in (docs, docs, stats, stats):
        assert teams.post(activity).status_code == 202
    teams.post(teams.activity("How do I renew the TLS certificate?"))
    good = next(d for d in actions(teams.connector.messages()[-1]) if d.get("verdict") == "good")
    vote = teams.activity(None, value=good, activity_id="d-3")
    teams.post(vote)
    teams.post(vote)
    texts = [sent.text for sent in teams.connector.messages()]
    assert sum("DOC-INSTR" in text for text in texts) == 1
    assert sum("Turns:" in text for text in texts) == 1
    assert sum("Thanks for the feedback" in text for text in texts) == 1
    assert all(row["status"] == "done" and row["posted_id"]
               for row in teams.store.inbox_rows())


def test_help_inline_with_expect_replies(teams: TeamsRig) -> None:
    response = teams.post(teams.activity("pomoc"), expect_replies=True)
    [reply] = response.json()["activities"]
    assert "Polecenia: meta ID-DOKUMENTU" in reply["text"]
    assert teams.connector.sent == []


def _message(connector: FakeConnector, event: str, **fields: Any) -> ChatMessage:
    reference = ConversationReference(
        channel_id="msteams", service_url=connector.url, activity_id=event,
        conversation=ConversationAccount(id=PERSONAL, conversation_type="personal"),
        bot=ChannelAccount(id="28:docassist-bot"), user=ChannelAccount(id="29:u"))
    return ChatMessage(key=KEY, user="aad-user-1", event_id=f"{PERSONAL}|{event}",
                       reply_to=reference.model_dump_json(by_alias=True, exclude_none=True),
                       **fields)


def test_after_a_crash_a_posted_reply_is_not_posted_again(
        teams_factory: Any, engine: TurnEngine, store: Store) -> None:
    with FakeConnector() as connector:
        docs = DirectRequest("docs", "en").dump()
        posted_docs = _message(connector, "c-1", text="docs", direct=docs)
        unposted_docs = _message(connector, "c-2", text="docs", direct=docs)
        answered = _message(connector, "c-3", text="How do I renew the TLS certificate?")
        for message in (posted_docs, unposted_docs, answered):
            assert store.enqueue(message) is not None
        assert engine.handle(answered) is not None  # answered: the turn is committed
        # What the dead process wrote right after its posts, before marking them done:
        store.record_posted(PLATFORM, str(posted_docs.event_id), "reply-earlier-1")
        store.record_posted(PLATFORM, str(answered.event_id), "reply-earlier-2")
        teams = teams_factory(engine)  # the restarted process resumes the inbox
        assert teams.adapter.worker.wait_idle()
        [resent] = connector.messages()
        assert resent.reply_to_id == "c-2" and "DOC-INSTR" in resent.text
        assert [row["status"] for row in store.inbox_rows()] == ["done", "done", "done"]
