"""The Slack app end to end over real HTTP: signed requests in, Web API calls out."""

from __future__ import annotations

import json
import logging
import threading
from typing import Any

import pytest

from docassist.bot.slack.render import CLEAR_THREAD_ACTION, SHOW_SOURCES_ACTION, render
from docassist.core.ports import ExampleSource, Reading
from docassist.core.results import TurnResult
from docassist.core.text import split_text
from tests.conftest import EngineFactory
from tests.helpers import MODEL_DOWN, ScriptedSelector, rules_selector, slack_seen
from tests.slack.rig import (
    CHANNEL,
    SECRET,
    TEAM,
    SlackRig,
    channel_message,
    feedback_payload,
    mention,
)


def texts(rig: SlackRig) -> list[str]:
    return [post.get("text", "") for post in rig.api.posted()]


def test_mention_is_answered_in_its_thread_with_citations(rig: SlackRig) -> None:
    response = rig.event(mention("Jak odtworzyć bazę danych z kopii?", "100.1"), "Ev1")
    assert response.status_code == 200
    [post] = rig.api.posted()
    assert post["channel"] == CHANNEL and post["thread_ts"] == "100.1"
    blocks = post["blocks"]
    assert blocks[0]["type"] == "section" and "[1]" in blocks[0]["text"]["text"]
    assert "DOC-DB-" not in blocks[0]["text"]["text"]  # the marker, not the long id
    context = next(block for block in blocks if block["type"] == "context")
    assert context["elements"][0]["text"].startswith("[1] `DOC-DB-")
    actions = next(block for block in blocks if block["type"] == "actions")
    assert [e["action_id"] for e in actions["elements"]] == [SHOW_SOURCES_ACTION,
                                                              CLEAR_THREAD_ACTION]


def test_follow_up_in_the_thread_needs_no_mention(rig: SlackRig) -> None:
    rig.event(mention("Co zrobić po zmianie konfiguracji docassist-api?", "200.1"), "Ev1")
    rig.event(channel_message("Jak sprawdzić jej stan?", "200.2", thread_ts="200.1"), "Ev2")
    rig.event(channel_message("unrelated chatter", "300.1"), "Ev3")  # not for us
    rig.event(channel_message("chatter in a foreign thread", "301.2", thread_ts="301.1"), "Ev4")
    posts = rig.api.posted()
    assert [post["thread_ts"] for post in posts] == ["200.1", "200.1"]
    assert "DOC-INSTR-" in slack_seen(posts[1])
    turn = rig.store.turns()[-1]
    assert turn["resolution_status"] == "resolved"


def test_wrong_signature_is_refused_and_nothing_runs(rig: SlackRig) -> None:
    response = rig.event(mention("How do I renew TLS?", "400.1"), "Ev1", signature="v0=bad")
    assert response.status_code == 401
    assert rig.api.posted() == [] and rig.store.turns() == []


def test_retries_and_double_delivery_are_answered_once(rig: SlackRig) -> None:
    event = mention("How do I renew the TLS certificate?", "500.1")
    rig.event(event, "Ev1")
    rig.event(event, "Ev1", retry=1)
    same = channel_message("<@UBOT> How do I renew the TLS certificate?", "500.1")
    rig.event(same, "Ev1-message")  # the same user message as a `message` event
    assert len(rig.api.posted()) == 1 and len(rig.store.turns()) == 1


def test_direct_messages_continue_one_conversation(rig: SlackRig) -> None:
    dm = {"type": "message", "channel": "D1", "channel_type": "im", "user": "U1",
          "team": TEAM}
    rig.event({**dm, "text": "I changed the docassist-api config.", "ts": "600.1"}, "Ev1")
    rig.event({**dm, "text": "How do I check its status?", "ts": "600.2"}, "Ev2")
    posts = rig.api.posted()
    assert [post.get("thread_ts") for post in posts] == [None, None]
    first, second = rig.store.turns()
    assert first["conversation_id"] == second["conversation_id"]
    assert second["resolution_status"] == "resolved"


def test_sources_and_clear_by_button_shortcut_and_word(rig: SlackRig) -> None:
    rig.event(mention("How do I renew the TLS certificate?", "700.1"), "Ev1")
    button = {"type": "block_actions", "team": {"id": TEAM}, "user": {"id": "U1"},
              "container": {"type": "message", "channel_id": CHANNEL, "message_ts": "1.2",
                            "thread_ts": "700.1"},
              "message": {"ts": "1800000000.000001", "thread_ts": "700.1"},
              "channel": {"id": CHANNEL}, "trigger_id": "tr1",
              "actions": [{"action_id": SHOW_SOURCES_ACTION, "action_ts": "700.5"}]}
    assert rig.interactive(button).status_code == 200
    sources = rig.api.posted()[-1]
    assert sources["thread_ts"] == "700.1"
    assert "(turn 1)" in sources["blocks"][0]["text"]["text"]
    clear = {**button, "actions": [{"action_id": CLEAR_THREAD_ACTION, "action_ts": "700.6"}]}
    rig.interactive(clear)
    assert "cleared" in rig.api.posted()[-1]["text"]
    rig.event(mention("show sources", "700.7", thread_ts="700.1"), "Ev2")
    assert "no answer from the documents yet" in rig.api.posted()[-1]["text"]
    rig.event(mention("How do I renew the TLS certificate?", "700.8", thread_ts="700.1"), "Ev3")
    shortcut = {"type": "message_action", "callback_id": "docassist_clear_thread_shortcut",
                "team": {"id": TEAM}, "user": {"id": "U1"}, "channel": {"id": CHANNEL},
                "message": {"ts": "700.8", "thread_ts": "700.1"}, "trigger_id": "tr2"}
    rig.interactive(shortcut)
    rig.event(mention("clear", "700.9", thread_ts="700.1"), "Ev4")
    statuses = [turn["status"] for turn in rig.store.turns()]
    assert statuses == ["answered", "sources_shown", "cleared", "clarification_needed",
                        "answered", "cleared", "cleared"]


def test_slash_commands_answer_ephemerally(rig: SlackRig) -> None:
    rig.command("/docassist-meta", "DOC-TLS")
    rig.command("/docassist-docs", "")
    rig.command("/docassist-help", "")
    meta, docs, help_text = rig.api.posted("chat.postEphemeral")
    assert meta["user"] == "U1" and "DOC-TLS: TLS certificate renewal" in meta["text"]
    assert "`DOC-INSTR`" in docs["text"]
    assert "/docassist-meta" in help_text["text"]
    assert rig.api.posted() == []  # nothing public


def test_model_down_is_said_in_the_thread(rig_factory: Any, make_engine: EngineFactory) -> None:
    rig = rig_factory(make_engine(ScriptedSelector(MODEL_DOWN), human_channel="#ops"))
    rig.event(mention("How do I renew TLS?", "800.1"), "Ev1")
    [post] = rig.api.posted()
    assert post["thread_ts"] == "800.1" and "#ops" in post["text"]


def test_edits_bots_external_users_and_attachments(rig: SlackRig) -> None:
    rig.event(mention("edited", "900.1", subtype="message_changed"), "Ev1")
    rig.event(mention("from a bot", "900.2", bot_id="B9"), "Ev2")
    rig.event(mention("How do I renew TLS?", "900.3", user_team="T-OTHER"), "Ev3")
    rig.event(mention("How do I renew TLS?", "900.4", files=[{"id": "F1"}]), "Ev4")
    posts = rig.api.posted()
    assert "only answer people from our own organisation" in posts[0]["text"]
    assert "don't read attachments" in posts[1]["text"]
    assert posts[2]["thread_ts"] == "900.4" and "blocks" in posts[2]
    assert len(posts) == 3 and len(rig.store.turns()) == 1


def test_failed_posts_are_retried(rig: SlackRig) -> None:
    rig.api.fail("chat.postMessage", 500, 429)
    rig.event(mention("How do I renew TLS?", "950.1"), "Ev1")
    [post] = rig.api.posted()
    assert post["thread_ts"] == "950.1"
    assert rig.store.inbox_rows()[0]["status"] == "done"


def test_long_answers_are_split_and_nothing_is_lost() -> None:
    answer = "\n\n".join(f"Paragraph {i}: " + "word " * 300 for i in range(12))
    result = TurnResult(result_id="r", conversation_id="c", generation=0, turn_id=1,
                        status="answered", answer=answer, language="en")
    messages = render(result)
    pieces = [block["text"]["text"] for message in messages for block in message["blocks"]
              if block["type"] == "section"]
    assert all(len(piece) <= 3000 for piece in pieces)
    assert " ".join(" ".join(pieces).split()) == " ".join(answer.split())
    assert split_text("x" * 7000, 3000) == ["x" * 3000, "x" * 3000, "x" * 1000]


def test_threads_run_in_parallel_and_in_order_within_a_thread(rig: SlackRig) -> None:
    rig.event(mention("Co zrobić po zmianie konfiguracji docassist-api?", "960.1"), "Ev1")
    rig.event(mention("How do I renew the TLS certificate?", "970.1"), "Ev2")
    rig.event(channel_message("Jak sprawdzić jej stan?", "960.2", thread_ts="960.1"), "Ev3")
    rig.event(channel_message("stan to failed", "960.3", thread_ts="960.1"), "Ev4")
    in_thread = [turn for turn in rig.store.turns() if turn["event_id"] in ("Ev1", "Ev3", "Ev4")]
    assert [turn["event_id"] for turn in in_thread] == ["Ev1", "Ev3", "Ev4"]
    assert [turn["turn_id"] for turn in in_thread] == [1, 2, 3]
    assert [post["thread_ts"] for post in rig.api.posted()].count("960.1") == 3


def test_a_post_that_keeps_failing_still_tells_the_user(rig: SlackRig) -> None:
    rig.api.reject_blocks = True
    rig.event(mention("How do I renew TLS?", "980.1"), "Ev1")
    [told] = rig.api.posted()
    assert told["thread_ts"] == "980.1" and "couldn't post my answer" in told["text"]
    row = rig.store.inbox_rows()[0]
    assert row["status"] == "failed" and "invalid_blocks" in row["error"]


def test_a_clarification_is_completed_by_the_reply_in_the_thread(rig: SlackRig) -> None:
    rig.event(mention("How do I check its status?", "990.1"), "Ev1")
    rig.event(channel_message("the docassist-worker service", "990.2", thread_ts="990.1"),
              "Ev2")
    asked, answered = rig.api.posted()
    assert "Which object do you mean?" in asked["text"]
    assert answered["thread_ts"] == "990.1" and "DOC-WORKER-" in slack_seen(answered)
    assert rig.store.turns()[-1]["decided_by"] == "pending"





def test_feedback_is_stored_and_a_bad_vote_offers_a_human(rig: SlackRig) -> None:
    rig.event(mention("How do I renew the TLS certificate?", "1000.1"), "Ev1")
    answer = rig.api.posted()[0]
    feedback = next(b for b in answer["blocks"] if b["type"] == "context_actions")
    element = feedback["elements"][0]
    result_id = rig.store.turns()[0]["result_id"]
    assert element["type"] == "feedback_buttons"
    assert element["positive_button"]["value"] == f"good:{result_id}"
    rig.interactive(feedback_payload(f"good:{result_id}"))
    rig.interactive(feedback_payload(f"bad:{result_id}", user="U2"))
    assert [v["value"] for v in rig.store.feedback()] == [1, -1]
    thanks, offer = rig.api.posted("chat.postEphemeral")
    assert "Thanks" in thanks["text"] and offer["user"] == "U2"
    ask = next(b for b in offer["blocks"] if b["type"] == "actions")["elements"][0]
    assert ask["action_id"] == "docassist_ask_human" and ask["value"] == result_id
    rig.interactive({**feedback_payload("", user="U2"),
                     "actions": [{"action_id": "docassist_ask_human", "value": result_id,
                                  "action_ts": "1000.95"}]})
    human = [post for post in rig.api.posted() if post["channel"] == "C-HUMANS"]
    assert len(human) == 1 and "<@U2>" in human[0]["text"]
    assert "archives/C1/p1000.1" in human[0]["text"]  # a link to the thread


def test_admin_export_uploads_a_csv_and_others_are_refused(rig: SlackRig) -> None:
    rig.event(mention("How do I renew the TLS certificate?", "1100.1"), "Ev1")
    rig.command("/docassist-admin", "export", user="U1")
    refused = rig.api.posted("chat.postEphemeral")[-1]
    assert "administrators only" in refused["text"] and rig.api.uploads == []
    rig.command("/docassist-admin", "export 2000-01-01", user="UADMIN")
    methods = [call.method for call in rig.api.calls]
    assert methods.index("files.getUploadURLExternal") < methods.index(
        "files.completeUploadExternal")
    [upload] = rig.api.uploads
    assert b"result_id" in upload and b"answered" in upload
    assert "in your direct messages" in rig.api.posted("chat.postEphemeral")[-1]["text"]
    rig.command("/docassist-admin", "export yesterday", user="UADMIN")
    assert "not an ISO date" in rig.api.posted("chat.postEphemeral")[-1]["text"]
    rig.command("/docassist-admin", "export 7d", user="UADMIN")  # ages, as `traces export`
    assert len(rig.api.uploads) == 2 and b"answered" in rig.api.uploads[1]
    rig.command("/docassist-admin", "stats", user="UADMIN")
    stats = rig.api.posted("chat.postEphemeral")[-1]
    assert stats["blocks"][0]["type"] == "header" and "answered: 1" in stats["blocks"][1][
        "text"]["text"]


def test_over_the_rate_limit_the_user_is_told_when_to_retry(rig: SlackRig) -> None:
    rig.adapter.limiter.per_user = 2
    for index in range(3):
        rig.event(mention(f"How do I renew TLS, take {index}?", f"1600.{index + 1}"),
                  f"Ev{index}")
    rig.event(mention("How do I renew TLS, take 0?", "1600.1"), "Ev0", retry=1)  # a retry
    posts = rig.api.posted()
    assert len(posts) == 3 and len(rig.store.turns()) == 2
    assert "please try again in" in posts[-1]["text"] and posts[-1]["thread_ts"] == "1600.3"


def test_slack_secrets_reach_no_log_and_no_trace(rig: SlackRig,
                                                 caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    rig.event(mention("How do I renew the TLS certificate?", "1700.1"), "Ev1")
    rig.api.fail("chat.postMessage", 500)  # an error path logs too
    rig.event(mention("Restart docassist-api now", "1700.2"), "Ev2")
    dumped = json.dumps([rig.store.turns(), rig.store.tool_calls(), rig.store.inbox_rows()])
    for secret in ("xoxb-test", SECRET):
        assert secret not in caplog.text and secret not in dumped
    assert "chat.postMessage" in caplog.text  # the SDK did log its calls, without the token


class GatedModel:
    """A selector that answers like the rules once `gate` opens: a slow model."""

    backend, model = "gated", "gated-v1"
    examples: ExampleSource | None = None

    def __init__(self, gate: threading.Event) -> None:
        self.gate = gate
        self.rules = rules_selector()

    def propose(self, request: Any) -> str:
        assert self.gate.wait(20)
        return self.rules.propose(request)

    def reading(self, request: Any) -> Reading | None:
        return self.rules.reading(request)


def test_a_follow_up_sent_before_the_first_answer_is_not_dropped(
        rig_factory: Any, make_engine: EngineFactory) -> None:
    gate = threading.Event()
    rig = rig_factory(make_engine(GatedModel(gate)))
    rig.event(mention("Co zrobić po zmianie konfiguracji docassist-api?", "980.1"), "Ev1",
              wait=False)
    rig.event(channel_message("Jak sprawdzić jej stan?", "980.2", thread_ts="980.1"), "Ev2",
              wait=False)  # no mention, and no answer in the thread yet
    gate.set()
    assert rig.adapter.worker.wait_idle()
    first, second = rig.api.posted()
    assert first["thread_ts"] == second["thread_ts"] == "980.1"
    assert rig.store.turns()[-1]["resolution_status"] == "resolved"
