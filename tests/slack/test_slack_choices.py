"""Clarifications as buttons in Slack: one button per candidate; a click completes the pending
request exactly as a typed reply would (same inbox, same turn path, same trace), and a click
on a question that no longer waits runs nothing."""

from __future__ import annotations

from typing import Any

from docassist.bot.slack.render import CHOICES_BLOCK
from tests.helpers import slack_seen
from tests.slack.rig import CHANNEL, TEAM, SlackRig, channel_message, mention


def choice_buttons(post: dict[str, Any]) -> list[dict[str, Any]]:
    block = next(b for b in post["blocks"] if b.get("block_id") == CHOICES_BLOCK)
    assert block["type"] == "actions"
    return list(block["elements"])


def click(rig: SlackRig, button: dict[str, Any], thread_ts: str, action_ts: str,
          user: str = "U1") -> None:
    payload = {"type": "block_actions", "team": {"id": TEAM}, "user": {"id": user},
               "container": {"type": "message", "channel_id": CHANNEL,
                             "message_ts": "1800000000.000001", "thread_ts": thread_ts},
               "message": {"ts": "1800000000.000001", "thread_ts": thread_ts},
               "channel": {"id": CHANNEL}, "trigger_id": f"tr-{action_ts}",
               "actions": [{"action_id": button["action_id"], "value": button["value"],
                            "action_ts": action_ts}]}
    assert rig.interactive(payload).status_code == 200


def test_a_click_completes_the_request_as_the_typed_reply_does(rig: SlackRig) -> None:
    rig.event(mention("Co zrobić po zmianie konfiguracji docassist-api i docassist-worker?",
                      "10.1"), "Ev1")
    rig.event(mention("Jak sprawdzić jej stan?", "10.2", thread_ts="10.1"), "Ev2")
    asked = rig.api.posted()[-1]
    buttons = choice_buttons(asked)
    labels = [b["text"]["text"] for b in buttons]
    assert any("docassist-worker" in label for label in labels) and len(labels) >= 2
    worker = next(b for b in buttons if "docassist-worker" in b["text"]["text"])
    click(rig, worker, "10.1", "10.5")
    answered = rig.api.posted()[-1]
    assert answered["thread_ts"] == "10.1" and "DOC-" in slack_seen(answered)
    clicked = rig.store.turns()[-1]
    assert clicked["status"] == "answered" and clicked["decided_by"] == "pending"
    assert clicked["tool_status"] == "tool_completed"

    # The same conversation in a thread of its own, typed instead of clicked: the same trace.
    # (Not in the first thread: there the click's answer is history, and a completed question
    # may read otherwise with one more exchange before it.)
    rig.event(mention("Co zrobić po zmianie konfiguracji docassist-api i docassist-worker?",
                      "11.1"), "Ev3")
    rig.event(mention("Jak sprawdzić jej stan?", "11.2", thread_ts="11.1"), "Ev4")
    rig.event(channel_message(worker["value"].partition("|")[2], "11.3", thread_ts="11.1"),
              "Ev5")
    typed = rig.store.turns()[-1]
    same = ("status", "decided_by", "decision_status", "action", "tool_status",
            "resolution_status", "standalone_sha256", "language")
    assert {k: typed[k] for k in same} == {k: clicked[k] for k in same}


def test_a_document_question_offers_the_documents(rig: SlackRig) -> None:
    rig.event(mention("Show the metadata of the TLS certificate document", "20.1"), "Ev1")
    asked = rig.api.posted()[-1]
    assert rig.store.turns()[-1]["status"] == "clarification_needed"
    buttons = choice_buttons(asked)
    tls = next(b for b in buttons if b["text"]["text"] == "DOC-TLS")
    click(rig, tls, "20.1", "20.5")
    assert "DOC-TLS: TLS certificate renewal" in rig.api.posted()[-1]["text"]
    assert rig.store.turns()[-1]["status"] == "metadata_shown"


def test_a_click_on_a_stale_question_runs_nothing(rig: SlackRig) -> None:
    rig.event(mention("How do I check its status?", "30.1"), "Ev1")
    first = choice_buttons(rig.api.posted()[-1])[0]
    rig.event(mention("the docassist-worker service", "30.2", thread_ts="30.1"), "Ev2")
    turns_before = len(rig.store.turns())
    tools_before = len(rig.store.tool_calls())
    click(rig, first, "30.1", "30.5")  # that question was answered by the typed reply
    told = rig.api.posted()[-1]
    assert told["thread_ts"] == "30.1" and "no longer waiting" in told["text"]
    assert not [b for b in told["blocks"] if b.get("block_id") == CHOICES_BLOCK]
    stale = rig.store.turns()[-1]
    assert len(rig.store.turns()) == turns_before + 1
    assert stale["status"] == "invalid_message" and stale["decision_reason"] == "stale_choice"
    assert stale["tool_name"] is None and len(rig.store.tool_calls()) == tools_before


def test_a_click_naming_an_unknown_question_keeps_the_pending_one(rig: SlackRig) -> None:
    rig.event(mention("How do I check its status?", "40.1"), "Ev1")
    [*_, worker] = choice_buttons(rig.api.posted()[-1])
    forged = {**worker, "value": "0000000000000000|" + worker["value"].partition("|")[2]}
    click(rig, forged, "40.1", "40.5")
    assert "no longer waiting" in rig.api.posted()[-1]["text"]
    assert rig.store.turns()[-1]["decision_reason"] == "stale_choice"
    assert rig.store.tool_calls() == []
    click(rig, worker, "40.1", "40.6")  # the real question still waits for its answer
    assert rig.store.turns()[-1]["decided_by"] == "pending"


def test_a_redelivered_click_is_answered_once(rig: SlackRig) -> None:
    rig.event(mention("How do I check its status?", "50.1"), "Ev1")
    [*_, button] = choice_buttons(rig.api.posted()[-1])
    click(rig, button, "50.1", "50.5")
    click(rig, button, "50.1", "50.5")
    assert len(rig.store.turns()) == 2 and len(rig.api.posted()) == 2


def test_a_choice_without_its_question_is_refused(rig: SlackRig) -> None:
    response = rig.interactive({
        "type": "block_actions", "team": {"id": TEAM}, "user": {"id": "U1"},
        "container": {"type": "message", "channel_id": CHANNEL, "message_ts": "1.1"},
        "message": {"ts": "1.1"}, "channel": {"id": CHANNEL}, "trigger_id": "t",
        "actions": [{"action_id": "docassist_choice_0", "value": "no-separator"}]})
    assert response.status_code == 400
    assert rig.store.turns() == [] and rig.api.posted() == []
