"""Teams level with Slack: answers stream in personal chats (typing activities with
`streaminfo`, then a final message), channels get one card, expectReplies gets everything
inline; a failing stream falls back to the whole card."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from docassist.bot.teams import cards
from docassist.models.adapters import ModelAnswerer
from docassist.models.base import RetryPolicy
from docassist.models.openai import OpenAIModel
from docassist_testkit.fakes.model_server import ModelServer, openai_chat, openai_stream
from tests.conftest import EngineFactory
from tests.helpers import rules_selector
from tests.teams.rig import CHANNEL, TeamsRig

QUESTION = "How do I renew the TLS certificate?"


@pytest.fixture
def streaming(teams_factory: Any, make_engine: EngineFactory) -> Iterator[
        tuple[TeamsRig, ModelServer, str]]:
    with ModelServer() as server, httpx.Client(timeout=5) as client:
        model = OpenAIModel("m", client, base_url=f"{server.url}/v1",
                            policy=RetryPolicy(attempts=1))
        rig: TeamsRig = teams_factory(make_engine(rules_selector(),
                                                  answerer=ModelAnswerer(model)))
        cited = rig.adapter.engine.retriever.search(QUESTION, 1)[0].chunk.chunk_id
        yield rig, server, cited


def script_stream(server: ModelServer, cited: str) -> None:
    server.script("/v1/chat/completions", openai_stream(
        "Renew 30 days", f" ahead [{cited}]. Then", f" reload the gateway [{cited}]."))


def stream_info(activity: dict[str, Any]) -> dict[str, Any]:
    [info] = [e for e in activity.get("entities") or [] if e.get("type") == "streaminfo"]
    found: dict[str, Any] = info
    return found


def test_a_personal_chat_answer_streams_sentence_by_sentence(
        streaming: tuple[TeamsRig, ModelServer, str]) -> None:
    teams, server, cited = streaming
    script_stream(server, cited)
    teams.post(teams.activity(QUESTION))
    sent = [s.activity for s in teams.connector.sent]
    typing = [a for a in sent if a["type"] == "typing"]
    assert [a["text"] for a in typing] == [
        "Renew 30 days ahead \\[1\\].",
        "Renew 30 days ahead \\[1\\]. Then reload the gateway \\[1\\]."]  # markers
    first, second = (stream_info(a) for a in typing)
    assert (first["streamType"], first["streamSequence"]) == ("streaming", 1)
    assert "streamId" not in first  # Teams names the stream in its answer to the first
    stream_id = "reply-1"  # the fake connector's id for the first activity it was sent
    assert (second["streamType"], second["streamSequence"], second["streamId"]) == (
        "streaming", 2, stream_id)
    [final] = [a for a in sent if a["type"] == "message"]
    assert stream_info(final) == {"type": "streaminfo", "streamId": stream_id,
                                  "streamType": "final"}
    assert final["text"] == typing[-1]["text"]
    [trailer] = [a["content"] for a in final["attachments"]]
    assert any(cited in str(block) for block in trailer["body"])  # the sources
    kinds = {d[cards.ACTION_KEY] for d in (a["data"] for a in cards.actions(trailer))}
    assert {"show_sources", "clear", "feedback"} <= kinds
    inbox_row = teams.store.inbox_rows()[0]
    assert inbox_row["status"] == "done" and inbox_row["posted_id"]


def test_a_channel_answer_is_posted_once_and_updated_in_place(
        streaming: tuple[TeamsRig, ModelServer, str]) -> None:
    teams, server, cited = streaming
    script_stream(server, cited)
    thread = teams.channel_thread("5001")
    teams.post(teams.activity(QUESTION, conversation=thread, conversation_type="channel",
                              activity_id="5001", mention=True))
    [posted] = teams.connector.sent  # one message, no typing activities
    assert posted.activity["type"] == "message" and posted.conversation_id == thread
    assert posted.activity["text"] == "Renew 30 days ahead \\[1\\]."
    growing, final = teams.connector.updated
    assert {growing.reply_to_id, final.reply_to_id} == {"reply-1"}  # the posted message
    assert {growing.conversation_id, final.conversation_id} == {thread}
    assert growing.activity["text"].endswith("Then reload the gateway \\[1\\].")
    [card] = [a["content"] for a in final.activity["attachments"]]
    assert "[1]" in str(card) and cited in str(card) and cards.actions(card)  # whole answer
    assert teams.store.inbox_rows()[0]["posted_id"] == "reply-1"


def test_a_refused_first_post_leaves_the_answer_to_be_posted_whole(
        streaming: tuple[TeamsRig, ModelServer, str]) -> None:
    teams, server, cited = streaming
    script_stream(server, cited)
    teams.connector.fail(400)  # the first sentence's post is refused ...
    teams.post(teams.activity(QUESTION, conversation=teams.channel_thread("5003"),
                              conversation_type="channel", activity_id="5003", mention=True))
    [whole] = teams.connector.sent  # ... so the answer is posted whole, once
    assert "[1]" in whole.text and cited in whole.text and whole.activity.get("attachments")
    assert teams.connector.updated == []


def test_an_answer_that_does_not_stream_is_posted_whole(teams: TeamsRig) -> None:
    """The extractive answerer releases no sentences early: one card, no updates."""
    teams.post(teams.activity(QUESTION, conversation=teams.channel_thread("5002"),
                              conversation_type="channel", activity_id="5002", mention=True))
    [sent] = teams.connector.sent
    assert sent.activity["type"] == "message" and "DOC-TLS-" in sent.text
    assert CHANNEL in sent.conversation_id and teams.connector.updated == []


def test_expect_replies_never_streams(streaming: tuple[TeamsRig, ModelServer, str]) -> None:
    teams, server, cited = streaming
    server.script("/v1/chat/completions", openai_chat(f"Renew 30 days ahead [{cited}]."))
    response = teams.post(teams.activity(QUESTION), expect_replies=True)
    [reply] = response.json()["activities"]
    attachments = str(reply["attachments"])
    assert reply["type"] == "message" and "[1]" in attachments and cited in attachments
    assert teams.connector.sent == []


def test_a_stream_that_fails_falls_back_to_the_whole_card(
        streaming: tuple[TeamsRig, ModelServer, str]) -> None:
    teams, server, cited = streaming
    script_stream(server, cited)
    teams.connector.fail(400)  # the first typing activity is refused
    teams.post(teams.activity(QUESTION))
    [answer] = teams.connector.messages()
    assert "entities" not in answer.activity or not any(
        e.get("type") == "streaminfo" for e in answer.activity["entities"])
    assert "[1]" in answer.text and cited in answer.text and "Renew 30 days ahead" in answer.text
