"""A 👎 in Slack asks why: a modal opened from the button's trigger_id, its submission stored
with the vote (the words only with DOCASSIST_SAVE_RAW), in exports and in the report."""

from __future__ import annotations

import json
from typing import Any

from docassist.bot.slack.feedback import FEEDBACK_REASON_VIEW
from docassist.storage.exports import trace_rows
from tests.slack.rig import CHANNEL, SlackRig, feedback_payload, mention


def submission(view: dict[str, Any], reason: str | None, text: str | None = None,
               user: str = "U1") -> dict[str, Any]:
    values: dict[str, Any] = {"reason_text": {"reason_text": {"type": "plain_text_input",
                                                              "value": text}}}
    if reason is not None:
        values["reason"] = {"reason": {"type": "radio_buttons",
                                       "selected_option": {"value": reason}}}
    return {"type": "view_submission", "team": {"id": "T1"}, "user": {"id": user},
            "view": {"id": "V1", "type": "modal", "callback_id": view["callback_id"],
                     "private_metadata": view["private_metadata"],
                     "state": {"values": values}}}


def answer_and_vote_bad(rig: SlackRig, ts: str) -> tuple[str, dict[str, Any]]:
    rig.event(mention("How do I renew the TLS certificate?", ts), f"Ev{ts}")
    result_id = rig.store.turns()[-1]["result_id"]
    rig.interactive({**feedback_payload(f"bad:{result_id}"), "trigger_id": "trig-1"})
    [opened] = rig.api.posted("views.open")
    assert opened["trigger_id"] == "trig-1"
    view = opened["view"] if isinstance(opened["view"], dict) else json.loads(opened["view"])
    return result_id, view


def test_a_bad_vote_opens_the_modal_and_its_reason_is_stored(rig: SlackRig) -> None:
    result_id, view = answer_and_vote_bad(rig, "1000.1")
    assert json.loads(view["private_metadata"])["result_id"] == result_id
    assert view["callback_id"] == FEEDBACK_REASON_VIEW
    radios = view["blocks"][0]["element"]
    assert [o["value"] for o in radios["options"]] == [
        "wrong", "outdated", "incomplete", "not_what_i_asked", "other"]
    assert "Ask a human" in json.dumps(rig.api.posted("chat.postEphemeral")[-1])  # as before
    response = rig.interactive(submission(view, "outdated", "the cert path moved"))
    assert response.status_code == 200 and response.text == ""  # the modal closes
    thanks = rig.api.posted("chat.postEphemeral")[-1]
    assert "Outdated" in thanks["text"] and thanks["channel"] == CHANNEL
    assert thanks["thread_ts"] == "1000.1"  # the thread of the voted answer
    [vote] = rig.store.feedback()
    assert (vote["value"], vote["reason"], vote["reason_text"]) == (-1, "outdated", None)
    [row] = trace_rows(rig.store)
    assert row["feedback"] == -1 and row["feedback_reasons"] == [{"reason": "outdated"}]
    assert "the cert path moved" not in json.dumps(trace_rows(rig.store))


def test_a_modal_without_a_reason_shows_the_error_and_stores_nothing(rig: SlackRig) -> None:
    _, view = answer_and_vote_bad(rig, "20.1")
    ephemerals = len(rig.api.posted("chat.postEphemeral"))
    response = rig.interactive(submission(view, None, "just words"))
    assert response.status_code == 200
    assert response.json() == {"response_action": "errors",
                               "errors": {"reason": "Please pick a reason."}}
    assert rig.store.feedback()[0]["reason"] is None
    assert len(rig.api.posted("chat.postEphemeral")) == ephemerals


def test_a_reason_for_an_answer_that_is_gone_is_told(rig: SlackRig) -> None:
    _, view = answer_and_vote_bad(rig, "30.1")
    meta = json.loads(view["private_metadata"])
    gone = {**view, "private_metadata": json.dumps({**meta, "result_id": "ffffffffffffffff"})}
    rig.interactive(submission(gone, "wrong"))
    told = rig.api.posted("chat.postEphemeral")[-1]
    assert "could not find the answer" in told["text"]
    assert [vote["reason"] for vote in rig.store.feedback()] == [None]
    assert len(rig.store.tool_calls()) == 1  # only the answer's own search


def test_a_forged_modal_is_refused(rig: SlackRig) -> None:
    body = {"type": "view_submission", "user": {"id": "U1"},
            "view": {"type": "modal", "callback_id": FEEDBACK_REASON_VIEW,
                     "private_metadata": "not json",
                     "state": {"values": {}}}}
    assert rig.interactive(body).status_code == 400
    assert rig.store.feedback() == []
