"""Slack AI-app features: the assistant pane, streamed answers and their fallback."""

from __future__ import annotations

from slack_sdk import WebClient

from docassist.bot.slack.limits import STREAM_APPEND_SECONDS
from docassist.bot.slack.stream import SlackStream
from docassist_testkit.fakes.model_server import ModelServer, openai_stream
from docassist_testkit.fakes.slack_api import FakeSlackApi
from tests.helpers import slack_seen
from tests.slack.rig import PANE, SlackRig, mention


def test_assistant_pane_prompts_title_status_and_answer(rig: SlackRig) -> None:
    rig.event({"type": "assistant_thread_started", "event_ts": "1.0",
               "assistant_thread": {"user_id": "U1", "channel_id": "D1", "thread_ts": "1200.1",
                                    "context": {"channel_id": "C1", "team_id": "T1"}}}, "EvA")
    # Set in the background (a Web API call is no part of the ack).
    [prompts] = rig.api.wait_posted("assistant.threads.setSuggestedPrompts")
    assert prompts["channel_id"] == "D1" and prompts["thread_ts"] == "1200.1"
    assert len(prompts["prompts"]) == 4 and "DOC" not in prompts["prompts"][0]["message"]
    assert prompts["prompts"][0]["message"].startswith("What does “")
    rig.event({**PANE, "type": "message", "text": "Jak odtworzyć bazę danych z kopii?",
               "ts": "1200.2", "thread_ts": "1200.1"}, "EvB")
    [title] = rig.api.wait_posted("assistant.threads.setTitle")
    assert title["title"] == "Jak odtworzyć bazę danych z kopii?"
    statuses = [call["status"] for call in rig.api.posted("assistant.threads.setStatus")]
    assert statuses[0] == "Szukam w dokumentach…" and "Writing the answer…" in statuses
    [answer] = rig.api.posted()
    assert answer["channel"] == "D1" and answer["thread_ts"] == "1200.1"
    assert "DOC-DB-" in slack_seen(answer)




def test_an_answer_streams_its_first_sentence_at_once_and_the_rest_with_the_stop(
        streaming_rig: tuple[SlackRig, ModelServer]) -> None:
    rig, server = streaming_rig
    chunk = rig.adapter.engine.retriever.search("How do I renew the TLS certificate?", 1)[0]
    server.script("/v1/chat/completions", openai_stream(
        "Renew 30 days", f" ahead [{chunk.chunk.chunk_id}]. Then", " reload the gateway "
        f"[{chunk.chunk.chunk_id}]."))
    rig.event(mention("How do I renew the TLS certificate?", "1300.1"), "Ev1")
    methods = [call.method for call in rig.api.calls
               if call.method.startswith("chat.") and "Stream" in call.method]
    # The model sent both sentences at once: the second goes with the stop, not alone.
    assert methods == ["chat.startStream", "chat.stopStream"]
    started = rig.api.posted("chat.startStream")[0]
    assert (started["thread_ts"], started["recipient_user_id"]) == ("1300.1", "U1")
    assert rig.api.streamed() == ["Renew 30 days ahead [1]. ", "Then reload the gateway [1]. "]
    final = rig.api.posted("chat.stopStream")[0]["blocks"]
    assert f"[1] `{chunk.chunk.chunk_id}`" in str(final)  # the sources resolve the marker
    assert {block["type"] for block in final} >= {"context", "actions", "context_actions"}
    assert rig.api.posted() == []  # no separate post: the stream is the answer


def test_streaming_falls_back_to_a_single_post(streaming_rig: tuple[SlackRig, ModelServer]
                                               ) -> None:
    rig, server = streaming_rig
    rig.api.fail("chat.startStream", 400)
    cited = rig.adapter.engine.retriever.search("How do I renew the TLS certificate?", 1)[
        0].chunk.chunk_id
    server.script("/v1/chat/completions", openai_stream(f"Renew early [{cited}]. ",
                                                        f"Then reload [{cited}]."))
    rig.event(mention("How do I renew the TLS certificate?", "1400.1"), "Ev1")
    [post] = rig.api.posted()
    assert post["thread_ts"] == "1400.1"
    assert "Renew early [1]. Then reload [1]." in post["blocks"][0]["text"]["text"]
    assert f"[1] `{cited}`" in slack_seen(post)  # the marker resolved in the sources block
    assert rig.api.posted("chat.appendStream") == []


def test_a_dm_thread_outside_the_pane_is_still_answered(rig: SlackRig) -> None:
    rig.api.fail("assistant.threads.setTitle", 400)
    rig.event({**PANE, "type": "message", "text": "How do I renew the TLS certificate?",
               "ts": "1500.2", "thread_ts": "1500.1"}, "EvC")
    [answer] = rig.api.posted()
    assert answer["thread_ts"] == "1500.1" and "DOC-TLS-" in slack_seen(answer)


def test_sentences_apart_are_appended_as_they_come_and_those_together_in_one_call() -> None:
    now = [100.0]
    with FakeSlackApi() as api:
        stream = SlackStream(WebClient(token="xoxb-test", base_url=api.url), "C1", "1.1",
                             "T1", "U1", clock=lambda: now[0])
        stream.append("One.")  # starts the stream
        stream.append("Two.")  # right behind it: held
        now[0] += STREAM_APPEND_SECONDS
        stream.append("Three <b>.")  # a pause before it: sent, with what was held
        stream.append("Four.")
        stream.abandon()  # the held sentence goes with the stop
        methods = [call.method for call in api.calls]
        pieces = api.streamed()
    assert methods == ["chat.startStream", "chat.appendStream", "chat.stopStream"]
    assert pieces == ["One. ", "Two. Three &lt;b&gt;. ", "Four. "]
