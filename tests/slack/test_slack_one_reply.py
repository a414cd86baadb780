"""One reply per user message, whatever Slack's retries and concurrent deliveries do: refusals
and notes go through the inbox like answers; the rate limit counts a message once and
applies to commands and buttons too; one vote per user per answer, one escalation per
answer; the assistant pane's status is set once; thread broadcasts are answered, system
messages are not."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from docassist.core.tools import ToolRegistry
from docassist_testkit.fakes.loopback import wait_until
from tests.db_locks import LockHolder
from tests.helpers import recording, slack_seen
from tests.slack.rig import (
    CHANNEL,
    PANE,
    TEAM,
    SlackRig,
    channel_message,
    feedback_payload,
    mention,
)

TRY_AGAIN = "please try again in"


def thread_posts(rig: SlackRig, thread_ts: str) -> list[dict[str, Any]]:
    return [post for post in rig.api.posted() if post.get("thread_ts") == thread_ts]


def delivered_three_times(rig: SlackRig, event: dict[str, Any], event_id: str) -> list[int]:
    """The first delivery and Slack's two retries."""
    return [rig.event(event, event_id, retry=retry).status_code for retry in (None, 1, 2)]


def notice_of(row: dict[str, Any]) -> dict[str, Any] | None:
    notice: dict[str, Any] | None = json.loads(row["message"]).get("notice")
    return notice


def test_refusals_and_notes_are_posted_once_whatever_the_retries(
        rig: SlackRig, registry: ToolRegistry) -> None:
    rig.adapter.limiter.per_user = 3
    with recording(registry, *registry.names()) as recorders:
        external = mention("How do I renew TLS?", "100.1", user_team="T-OTHER")
        assert delivered_three_times(rig, external, "EvExternal") == [200, 200, 200]
        file_only = mention("", "200.1", files=[{"id": "F1"}])
        assert delivered_three_times(rig, file_only, "EvFile") == [200, 200, 200]
        limited = mention("How do I renew TLS?", "300.1")
        rig.adapter.limiter.per_user = 2  # the two events above took the budget
        assert delivered_three_times(rig, limited, "EvLimited") == [200, 200, 200]
    [refusal] = thread_posts(rig, "100.1")
    assert "only answer people from our own organisation" in refusal["text"]
    [note] = thread_posts(rig, "200.1")
    assert "don't read attachments" in note["text"]
    [hint] = thread_posts(rig, "300.1")
    assert TRY_AGAIN in hint["text"]
    assert all(recorder.calls == [] for recorder in recorders.values())
    assert rig.store.turns() == []  # no turn ran for any of them
    rows = {row["event_id"]: row for row in rig.store.inbox_rows()}
    assert {event: row["status"] for event, row in rows.items()} == {
        "EvExternal": "done", "EvFile": "done", "EvLimited": "done"}
    assert [(notice_of(rows[event]) or {}).get("kind")
            for event in ("EvExternal", "EvFile", "EvLimited")
            ] == ["external_user", "attachments_only", "rate_limited"]
    assert json.loads(rows["EvLimited"]["message"]).get("text", "") == ""  # keeps no text


def test_a_file_with_a_question_gets_one_note_and_one_answer(rig: SlackRig) -> None:
    event = mention("How do I renew the TLS certificate?", "400.1", files=[{"id": "F1"}])
    delivered_three_times(rig, event, "EvFileQuestion")
    note, answer = thread_posts(rig, "400.1")
    assert "don't read attachments" in note["text"] and "DOC-TLS-" in slack_seen(answer)
    assert [turn["status"] for turn in rig.store.turns()] == ["answered"]


def test_concurrent_duplicates_take_the_budget_once(rig: SlackRig, db_path: Path) -> None:
    rig.adapter.limiter.per_user = 2
    event = mention("How do I renew the TLS certificate?", "500.1")
    holder = LockHolder(db_path)  # the deliveries meet while the inbox waits for the lock
    statuses: list[int] = []
    senders = [threading.Thread(target=lambda retry=retry: statuses.append(
        rig.event(event, "EvDup", retry=retry, wait=False).status_code))
        for retry in (None, 1, 2, 3)]
    for sender in senders:
        sender.start()
    threading.Timer(0.8, holder.close).start()
    for sender in senders:
        sender.join(10)
    assert rig.adapter.worker.wait_idle()
    assert statuses == [200] * 4
    [answer] = rig.api.posted()
    assert "DOC-TLS-" in slack_seen(answer)  # and no "too many questions" beside it
    rig.event(mention("What should I do after changing the docassist-api config?", "600.1"),
              "EvNext")  # the user's next real question still fits the budget of 2
    assert "DOC-INSTR-" in slack_seen(thread_posts(rig, "600.1")[0])
    rig.event(mention("How do I renew the TLS certificate?", "700.1"), "EvThird")
    assert TRY_AGAIN in thread_posts(rig, "700.1")[0]["text"]  # the limit still holds
    assert len(rig.store.turns()) == 2


def button(action_id: str, action_ts: str, thread_ts: str) -> dict[str, Any]:
    return {"type": "block_actions", "team": {"id": TEAM}, "user": {"id": "U1"},
            "container": {"type": "message", "channel_id": CHANNEL, "message_ts": "1.2",
                          "thread_ts": thread_ts},
            "message": {"ts": "1800000000.000001", "thread_ts": thread_ts},
            "channel": {"id": CHANNEL}, "trigger_id": f"tr-{action_ts}",
            "actions": [{"action_id": action_id, "action_ts": action_ts}]}


def test_buttons_and_slash_commands_obey_the_rate_limit(rig: SlackRig,
                                                        registry: ToolRegistry) -> None:
    rig.adapter.limiter.per_user = 3
    rig.event(mention("How do I renew the TLS certificate?", "800.1"), "Ev1")
    with recording(registry, "get_document_metadata") as recorders:
        for index in range(5):
            rig.interactive(button("docassist_show_sources", f"800.{index + 2}", "800.1"))
        rig.command("/docassist-meta", "DOC-TLS")
        rig.command("/docassist-docs", "")
        rig.command("/docassist-help", "")
    statuses = [turn["status"] for turn in rig.store.turns()]
    assert statuses == ["answered", "sources_shown", "sources_shown"]  # 3 in the minute
    public = thread_posts(rig, "800.1")
    assert len(public) == 3  # the answer and two sources: nothing more in the thread
    hints = [post for post in rig.api.posted("chat.postEphemeral") if TRY_AGAIN in post["text"]]
    # six presses and commands refused, the user told once when to retry (issue 39)
    assert len(hints) == 1 and hints[0]["user"] == "U1"
    assert recorders["get_document_metadata"].calls == []


def test_one_vote_per_user_per_answer_and_one_escalation(rig: SlackRig) -> None:
    rig.event(mention("How do I renew the TLS certificate?", "1000.1"), "Ev1")
    result_id = rig.store.turns()[0]["result_id"]
    for verdict in ("good", "good", "good", "bad"):
        rig.interactive(feedback_payload(f"{verdict}:{result_id}"))
    for _ in range(3):
        rig.interactive(feedback_payload(f"bad:{result_id}", user="U2"))
    votes = {row["user_sha256"]: row["value"] for row in rig.store.feedback()}
    assert len(rig.store.feedback()) == 2 and sorted(votes.values()) == [-1, -1]  # last counts
    ask = {"action_id": "docassist_ask_human", "value": result_id, "action_ts": "1000.95"}
    for user in ("U2", "U2", "U1", "U2"):
        rig.interactive({**feedback_payload("", user=user), "actions": [ask]})
    human = [post for post in rig.api.posted() if post["channel"] == "C-HUMANS"]
    assert len(human) == 1 and "<@U2>" in human[0]["text"]
    replies = [post["text"] for post in rig.api.posted("chat.postEphemeral")
               if "C-HUMANS" in post["text"]]
    assert len(replies) == 4 and sum("already" in text for text in replies) == 3


def test_an_escalation_that_could_not_be_posted_can_be_asked_again(rig: SlackRig) -> None:
    rig.event(mention("How do I renew the TLS certificate?", "1100.1"), "Ev1")
    result_id = rig.store.turns()[0]["result_id"]
    ask = {"action_id": "docassist_ask_human", "value": result_id, "action_ts": "1100.9"}
    rig.api.fail("chat.postMessage", 500, 500, 500)  # Slack down for the SDK's retries too
    rig.interactive({**feedback_payload("", user="U2"), "actions": [ask]})
    assert wait_until(lambda: any("couldn't post" in post["text"]  # after the SDK's retries
                                  for post in rig.api.posted("chat.postEphemeral")))
    rig.interactive({**feedback_payload("", user="U2"), "actions": [ask]})
    human = [post for post in rig.api.posted() if post["channel"] == "C-HUMANS"]
    assert len(human) == 1 and "passed your question" in rig.api.posted(
        "chat.postEphemeral")[-1]["text"]


def test_a_retry_after_the_answer_leaves_the_pane_status_alone(rig: SlackRig) -> None:
    event = {**PANE, "type": "message", "text": "How do I renew the TLS certificate?",
             "ts": "1200.2", "thread_ts": "1200.1"}
    rig.event(event, "EvPane")
    statuses = [call["status"] for call in rig.api.posted("assistant.threads.setStatus")]
    assert statuses == ["Searching documents…", "Writing the answer…"]
    rig.event(event, "EvPane", retry=1)
    rig.event(event, "EvPane", retry=2)
    again = [call["status"] for call in rig.api.posted("assistant.threads.setStatus")]
    assert again == statuses  # not "Searching documents…" again, with nothing to clear it
    assert len(rig.api.posted()) == 1
    assert len(rig.api.wait_posted("assistant.threads.setTitle")) == 1


def test_a_broadcast_reply_is_answered_and_system_messages_are_not(
        rig: SlackRig, registry: ToolRegistry) -> None:
    rig.event(mention("How do I renew the TLS certificate?", "1300.1"), "Ev1")
    broadcast = channel_message("Jak odtworzyć bazę danych z kopii?", "1300.2",
                                thread_ts="1300.1", subtype="thread_broadcast")
    rig.event(broadcast, "EvBroadcast")
    first, second = thread_posts(rig, "1300.1")
    assert "DOC-TLS-" in slack_seen(first) and "DOC-DB-" in slack_seen(second)
    with recording(registry, *registry.names()) as recorders:
        for index, subtype in enumerate(("channel_name", "pinned_item", "channel_join",
                                         "channel_topic", "group_join")):
            rig.event(channel_message("How do I renew TLS?", f"1300.{index + 3}",
                                      thread_ts="1300.1", subtype=subtype), f"EvSys{index}")
    assert len(thread_posts(rig, "1300.1")) == 2
    assert all(recorder.calls == [] for recorder in recorders.values())
    assert [row["event_id"] for row in rig.store.inbox_rows()] == ["Ev1", "EvBroadcast"]
    assert len(rig.store.turns()) == 2


def test_a_refusal_does_not_make_the_thread_the_bots(rig: SlackRig) -> None:
    rig.adapter.limiter.per_user = 1
    rig.event(mention("How do I renew TLS?", "1400.2", thread_ts="1400.1",
                      user_team="T-OTHER"), "EvExternal")  # counts, and is refused
    rig.event(mention("How do I renew TLS?", "1500.2", thread_ts="1500.1"), "EvLimited")
    for root in ("1400.1", "1500.1"):  # later chatter in those threads, without a mention
        rig.event(channel_message("lunch at noon?", f"{root[:4]}.3", thread_ts=root),
                  f"EvChatter{root}")
    assert [len(thread_posts(rig, root)) for root in ("1400.1", "1500.1")] == [1, 1]
    assert [row["event_id"] for row in rig.store.inbox_rows()] == ["EvExternal", "EvLimited"]


def test_a_replayed_slash_command_runs_once(rig: SlackRig) -> None:
    """Issue 39: a signed command sent again within Slack's window (same trigger id)."""
    for _ in range(3):
        assert rig.command("/docassist-meta", "DOC-TLS", trigger_id="tr-1").status_code == 200
    rig.command("/docassist-meta", "DOC-TLS", trigger_id="tr-2")
    assert wait_until(lambda: len(rig.api.posted("chat.postEphemeral")) == 2)
    assert [turn["status"] for turn in rig.store.turns()] == ["metadata_shown"] * 2
    assert all("DOC-TLS" in post["text"] for post in rig.api.posted("chat.postEphemeral"))


def test_a_vote_or_ask_a_human_naming_another_channels_answer_is_refused(
        rig: SlackRig) -> None:
    """Issue 39: a crafted button value with another conversation's answer id."""
    rig.event(mention("How do I renew the TLS certificate?", "1100.1"), "EvOther")
    result_id = rig.store.turns()[0]["result_id"]
    elsewhere = {**feedback_payload(f"bad:{result_id}", user="U7"),
                 "container": {"type": "message", "channel_id": "C-OTHER", "message_ts": "2.1",
                               "thread_ts": "2.1"}, "channel": {"id": "C-OTHER"}}
    rig.interactive(elsewhere)
    ask = {"action_id": "docassist_ask_human", "value": result_id, "action_ts": "2.9"}
    rig.interactive({**elsewhere, "actions": [ask]})
    assert rig.store.feedback() == []
    assert not [post for post in rig.api.posted() if post["channel"] == "C-HUMANS"]
    told = [post for post in rig.api.posted("chat.postEphemeral") if post["channel"] == "C-OTHER"]
    assert [post["text"] for post in told] == [
        "That answer is not from this conversation, so nothing was recorded."] * 2
    assert [turn["status"] for turn in rig.store.turns()] == ["answered"]
