"""Private answers in Slack: in a private channel the answer is ephemeral with "Share in
channel", which posts the same answer (citations intact) once; refusals are short ephemeral
notes, and nothing else runs."""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest

from docassist.bot.slack.render import SHARE_ACTION
from docassist.core.turn import TurnEngine
from tests.helpers import slack_seen
from tests.slack.rig import CHANNEL, TEAM, SlackRig, mention

QUESTION = "How do I renew the TLS certificate?"


@pytest.fixture
def private(rig_factory: Any, engine: TurnEngine) -> SlackRig:
    built: SlackRig = rig_factory(engine, private_channels=frozenset({CHANNEL}))
    return built


def share_button(post: dict[str, Any]) -> dict[str, Any]:
    return next(e for b in post["blocks"] if b["type"] == "actions" for e in b["elements"]
                if e["action_id"] == SHARE_ACTION)


def click_share(rig: SlackRig, result_id: str, user: str = "U1", ts: str = "9.1") -> None:
    payload = {"type": "block_actions", "team": {"id": TEAM}, "user": {"id": user},
               "container": {"type": "message", "channel_id": CHANNEL, "message_ts": ts,
                             "is_ephemeral": True},
               "channel": {"id": CHANNEL}, "trigger_id": f"tr-{ts}-{user}",
               "actions": [{"action_id": SHARE_ACTION, "value": result_id, "action_ts": ts}]}
    assert rig.interactive(payload).status_code == 200


def ask(rig: SlackRig, ts: str) -> tuple[dict[str, Any], str]:
    rig.event(mention(QUESTION, ts), f"Ev{ts}")
    assert rig.api.posted() == []  # nothing public, nothing streamed
    answer = rig.api.posted("chat.postEphemeral")[-1]
    assert answer["user"] == "U1" and answer["thread_ts"] == ts
    return answer, rig.store.turns()[-1]["result_id"]


def test_a_private_answer_is_shared_once_with_its_citations(private: SlackRig) -> None:
    answer, result_id = ask(private, "10.1")
    assert "DOC-TLS-" in slack_seen(answer)
    assert share_button(answer)["value"] == result_id
    click_share(private, result_id)
    [shared] = private.api.posted()
    assert shared["channel"] == CHANNEL and shared["thread_ts"] == "10.1"
    assert shared["blocks"][0] == answer["blocks"][0]  # the same answer, citations intact
    context = [b for b in shared["blocks"] if b["type"] == "context"]
    assert "DOC-TLS" in str(context[0]) and "Shared by <@U1>" in str(context[-1])
    assert not [b for b in shared["blocks"] if b["type"] in ("actions", "context_actions")]
    click_share(private, result_id, ts="9.2")  # a second click: a short note, no post
    assert len(private.api.posted()) == 1
    assert "already in the channel" in private.api.posted("chat.postEphemeral")[-1]["text"]
    assert [row["posted_id"] for row in private.store.inbox_rows()] == ["ephemeral"]


def test_a_share_by_someone_else_is_refused(private: SlackRig) -> None:
    _, result_id = ask(private, "20.1")
    tools = len(private.store.tool_calls())
    click_share(private, result_id, user="U2")
    told = private.api.posted("chat.postEphemeral")[-1]
    assert told["user"] == "U2" and "Only the person who asked" in told["text"]
    assert private.api.posted() == [] and len(private.store.tool_calls()) == tools
    assert len(private.store.turns()) == 1


def test_a_withdrawn_answer_cannot_be_shared(private: SlackRig) -> None:
    _, result_id = ask(private, "30.1")
    private.event(mention("clear", "30.2", thread_ts="30.1"), "Ev-clear")
    click_share(private, result_id)
    assert "can no longer be shared" in private.api.posted("chat.postEphemeral")[-1]["text"]
    assert private.api.posted() == []
    click_share(private, "f" * 16)  # an answer that never was
    assert "can no longer be shared" in private.api.posted("chat.postEphemeral")[-1]["text"]
    assert [t["status"] for t in private.store.turns()] == ["answered", "cleared"]


def test_a_failed_share_is_told_and_can_be_tried_again(private: SlackRig) -> None:
    _, result_id = ask(private, "40.1")
    private.api.fail("chat.postMessage", 400)
    click_share(private, result_id)
    assert "couldn't post" in private.api.posted("chat.postEphemeral")[-1]["text"]
    click_share(private, result_id, ts="9.3")
    assert len(private.api.posted()) == 1


def test_other_channels_stay_public(rig_factory: Any, engine: TurnEngine) -> None:
    rig = rig_factory(engine, private_channels=frozenset({"C-OTHER"}))
    rig.event(mention(QUESTION, "50.1"), "Ev1")
    [post] = rig.api.posted()
    assert not [e for b in post["blocks"] if b["type"] == "actions" for e in b["elements"]
                if e["action_id"] == SHARE_ACTION]


def test_a_resumed_private_answer_already_posted_is_not_posted_again(
        private: SlackRig) -> None:
    """The process died after the ephemeral post (its id stored) and before `done`; the
    other event died before its post (no id stored)."""
    private.store.save_raw = True  # done rows keep what an `answered` row holds (as in
    # test_slack_load), so they can be turned back into what the killed process left
    ask(private, "60.1")
    ask(private, "61.1")
    private.api.calls = [call for call in private.api.calls
                         if call.body.get("thread_ts") != "61.1"]  # that post never happened
    with sqlite3.connect(private.store.path) as connection:
        connection.execute("UPDATE inbox SET status = 'answered'")
        connection.execute("UPDATE inbox SET posted_id = NULL WHERE event_id = 'Ev61.1'")
    assert private.adapter.worker.resume() == 2
    assert private.adapter.worker.wait_idle()
    threads = [post["thread_ts"] for post in private.api.posted("chat.postEphemeral")]
    assert threads == ["60.1", "61.1"]  # only the missing answer was posted
    assert {row["status"] for row in private.store.inbox_rows()} == {"done"}


def test_an_ephemeral_clarification_is_completed_by_its_button(private: SlackRig) -> None:
    private.event(mention("How do I check its status?", "70.1"), "Ev70")
    asked = private.api.posted("chat.postEphemeral")[-1]
    [*_, button] = next(b for b in asked["blocks"]
                        if b.get("block_id") == "docassist_choices")["elements"]
    # A click on an ephemeral message: Slack sends no message and no thread with it.
    private.interactive({
        "type": "block_actions", "team": {"id": TEAM}, "user": {"id": "U1"},
        "container": {"type": "message", "channel_id": CHANNEL, "message_ts": "70.9",
                      "is_ephemeral": True},
        "channel": {"id": CHANNEL}, "trigger_id": "tr-70",
        "actions": [{"action_id": button["action_id"], "value": button["value"],
                     "action_ts": "70.5"}]})
    answered = private.api.posted("chat.postEphemeral")[-1]
    assert answered["thread_ts"] == "70.1" and "DOC-" in slack_seen(answered)
    first, second = private.store.turns()
    assert first["conversation_id"] == second["conversation_id"]
    assert second["decided_by"] == "pending"


def test_a_refusal_in_a_private_channel_is_private_too(private: SlackRig) -> None:
    private.event(mention(QUESTION, "80.1", user_team="T-OTHER"), "Ev80")
    [told] = private.api.posted("chat.postEphemeral")
    assert told["user"] == "U1" and told["thread_ts"] == "80.1"
    assert private.api.posted() == [] and private.store.turns() == []
