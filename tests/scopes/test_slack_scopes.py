"""Scopes over the loopback Slack fake: channels with different scopes, a DM, an externally
shared channel, a narrowed channel's old sources, and the admin `scopes` command."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from docassist.bot.slack.render import SHARE_ACTION, SHOW_SOURCES_ACTION
from docassist.bot.stale_courier import StaleNoteCourier
from docassist.core import i18n
from docassist.sources.sync import sync_all
from docassist.storage import Store
from docassist.storage.dense import HybridRetriever
from tests.scopes.scoped_corpus import TLS_QUESTION, scoped_engine, split_into_collections
from tests.slack.rig import TEAM, SlackRig, mention
from tests.stale_zebra import QUESTION as ZEBRA_QUESTION
from tests.stale_zebra import ZEBRA_V2


@pytest.fixture
def rig(rig_factory: Any, store: Store, hybrid: HybridRetriever) -> SlackRig:
    split_into_collections(store)
    built: SlackRig = rig_factory(scoped_engine(store, hybrid))
    return built


def said(rig: SlackRig, channel: str, thread: str | None) -> str:
    return json.dumps([m.get("text", "") + json.dumps(m.get("blocks", []))
                       for m in rig.api.messages(channel, thread)])


def test_two_channels_with_different_scopes_get_different_sources(rig: SlackRig) -> None:
    rig.store.set_scope("slack:C-SEC", ["security"], "UADMIN")
    rig.event(mention(TLS_QUESTION, "10.1", channel="C-SEC"), "Ev1")
    rig.event(mention(TLS_QUESTION, "20.1", channel="C-GEN"), "Ev2")
    assert "DOC-TLS-" in said(rig, "C-SEC", "10.1")
    general = said(rig, "C-GEN", "20.1")
    assert "DOC-TLS" not in general and "TLS certificate renewal" not in general
    audiences = [row["audience"] for row in rig.store.turns()]
    assert audiences == ["channel:slack:C-SEC", "channel:slack:C-GEN"]


def test_a_direct_message_gets_the_users_collections(rig: SlackRig) -> None:
    rig.store.set_scope("user:slack:U1", ["security"], "UADMIN")
    rig.event({"type": "message", "channel_type": "im", "channel": "D1", "user": "U1",
               "text": TLS_QUESTION, "ts": "30.1", "team": TEAM}, "Ev1")
    assert "DOC-TLS-" in said(rig, "D1", None) + said(rig, "D1", "30.1")
    assert rig.store.turns()[-1]["audience"] == "private:slack"


def test_an_externally_shared_channel_gets_only_shareable_collections(rig: SlackRig) -> None:
    rig.store.set_scope("slack:C-EXT", ["security", "default"], "UADMIN")

    def shared_event(ts: str, event_id: str) -> None:
        body = {"token": "t", "team_id": TEAM, "api_app_id": "A1", "type": "event_callback",
                "event_id": event_id, "event_time": 1, "is_ext_shared_channel": True,
                "event": mention(TLS_QUESTION, ts, channel="C-EXT")}
        assert rig.send(json.dumps(body), "application/json").status_code == 200

    shared_event("40.1", "Ev1")
    refused = said(rig, "C-EXT", "40.1")
    assert "DOC-TLS" not in refused and "TLS certificate renewal" not in refused
    assert rig.store.turns()[-1]["audience"] == "shared:slack:C-EXT"
    rig.command("/docassist-admin", "scopes share security", user="UADMIN")
    shared_event("41.1", "Ev2")
    assert "DOC-TLS-" in said(rig, "C-EXT", "41.1")


def test_narrowing_a_channel_withholds_an_older_answers_sources(rig: SlackRig) -> None:
    rig.command("/docassist-admin", "scopes set slack:C1 security default", user="UADMIN")
    rig.event(mention(TLS_QUESTION, "50.1"), "Ev1")
    assert "DOC-TLS-" in said(rig, "C1", "50.1")
    rig.command("/docassist-admin", "scopes set slack:C1 default", user="UADMIN")
    assert "slack:C1 → default" in rig.api.posted("chat.postEphemeral")[-1]["text"]
    button = {"type": "block_actions", "team": {"id": TEAM}, "user": {"id": "U1"},
              "container": {"type": "message", "channel_id": "C1", "message_ts": "1.2",
                            "thread_ts": "50.1"},
              "message": {"ts": "1800000000.000001", "thread_ts": "50.1"},
              "channel": {"id": "C1"}, "trigger_id": "tr1",
              "actions": [{"action_id": SHOW_SOURCES_ACTION, "action_ts": "50.5"}]}
    assert rig.interactive(button).status_code == 200
    shown = rig.api.posted()[-1]
    text = shown.get("text", "") + json.dumps(shown.get("blocks", []))
    assert "withheld" in text and "DOC-TLS" not in text
    assert [c["admin"] for c in rig.store.scope_changes()] == ["slack:UADMIN"] * 2


def test_scopes_is_for_admins_only(rig: SlackRig, caplog: pytest.LogCaptureFixture) -> None:
    rig.command("/docassist-admin", "scopes set slack:C1 security", user="U1")
    refused = rig.api.posted("chat.postEphemeral")[-1]
    assert "administrators only" in refused["text"]
    assert rig.store.scope_mappings() == {} and rig.store.scope_changes() == []
    assert rig.store.turns() == [] and rig.store.tool_calls() == []  # no turn, no tool
    assert any("refused /docassist-admin" in r.getMessage() for r in caplog.records)


def test_an_unknown_collection_changes_nothing(rig: SlackRig) -> None:
    rig.command("/docassist-admin", "scopes set slack:C1 securty", user="UADMIN")
    told = rig.api.posted("chat.postEphemeral")[-1]["text"]
    assert "Unknown collection: securty" in told and "security" in told
    assert rig.store.scope_mappings() == {} and rig.store.scope_changes() == []
    assert rig.store.turns() == [] and rig.store.tool_calls() == []
    rig.command("/docassist-admin", "scopes set C1 security", user="UADMIN")
    assert "Unknown subject" in rig.api.posted("chat.postEphemeral")[-1]["text"]
    assert rig.store.scope_mappings() == {}


def test_a_button_in_an_externally_shared_thread_stays_shared(rig: SlackRig) -> None:
    """A button press carries no `is_ext_shared_channel`: the thread remembers it."""
    rig.store.set_scope("slack:C-EXT", ["security", "default"], "UADMIN")
    rig.store.set_shareable("security", True, "UADMIN")
    body = {"token": "t", "team_id": TEAM, "api_app_id": "A1", "type": "event_callback",
            "event_id": "Ev1", "event_time": 1, "is_ext_shared_channel": True,
            "event": mention(TLS_QUESTION, "60.1", channel="C-EXT")}
    rig.send(json.dumps(body), "application/json")
    assert "DOC-TLS-" in said(rig, "C-EXT", "60.1")
    rig.store.set_shareable("security", False, "UADMIN")  # the channel itself still maps it
    button = {"type": "block_actions", "team": {"id": TEAM}, "user": {"id": "U1"},
              "container": {"type": "message", "channel_id": "C-EXT", "message_ts": "1.2",
                            "thread_ts": "60.1"},
              "message": {"ts": "1800000000.000001", "thread_ts": "60.1"},
              "channel": {"id": "C-EXT"}, "trigger_id": "tr1",
              "actions": [{"action_id": SHOW_SOURCES_ACTION, "action_ts": "60.5"}]}
    rig.interactive(button)
    shown = rig.api.posted()[-1]
    text = shown.get("text", "") + json.dumps(shown.get("blocks", []))
    assert "withheld" in text and "DOC-TLS" not in text
    assert rig.store.turns()[-1]["audience"] == "shared:slack:C-EXT"


def test_prompts_and_the_document_list_follow_the_users_scope(rig: SlackRig) -> None:
    rig.store.set_scope("user:slack:U1", ["hr"], "UADMIN")
    rig.event({"type": "assistant_thread_started", "event_ts": "1.0",
               "assistant_thread": {"user_id": "U1", "channel_id": "D1", "thread_ts": "70.1",
                                    "context": {"channel_id": "C1", "team_id": TEAM}}}, "EvA")
    [prompts] = rig.api.wait_posted("assistant.threads.setSuggestedPrompts")
    assert [p["message"] for p in prompts["prompts"]] == [
        "What does “Requesting access to DocAssist systems” say?"]
    rig.command("/docassist-docs", "", user="U2")  # unmapped: default only
    listed = json.dumps(rig.api.posted("chat.postEphemeral")[-1])
    assert "DOC-INSTR" in listed
    assert not any(d in listed for d in ("DOC-TLS", "DOC-ACCESS", "DOC-DB"))
    rig.command("/docassist-docs", "", user="U1")
    listed = json.dumps(rig.api.posted("chat.postEphemeral")[-1])
    assert "DOC-ACCESS" in listed and "DOC-INSTR" not in listed


def test_a_stale_note_names_a_document_only_if_the_thread_may_still_see_it(
        rig: SlackRig, zebra: Path) -> None:
    rig.store.set_scope("slack:C1", ["default"], "UADMIN")
    rig.event(mention(ZEBRA_QUESTION, "80.1"), "Ev1")
    rig.event(mention(ZEBRA_QUESTION, "81.1", channel="C2"), "Ev2")  # unmapped: default
    assert "DOC-ZEBRA-" in said(rig, "C1", "80.1") and "DOC-ZEBRA-" in said(rig, "C2", "81.1")
    rig.store.set_scope("slack:C1", ["security"], "UADMIN")  # C1 narrowed
    zebra.write_text(ZEBRA_V2)
    answers = len(rig.api.posted())  # the answers name the page too: only later posts count
    sync_all(rig.store, stale_days=14)
    StaleNoteCourier(rig.store, "slack", rig.adapter.stale_notes.post).deliver_once()
    notes = [p for p in rig.api.posted()[answers:] if "Zebra alarm" in p.get("text", "")]
    assert [(note["channel"], note["thread_ts"]) for note in notes] == [("C2", "81.1")]


def test_a_private_answer_from_the_askers_scope_is_not_offered_to_the_channel(
        rig_factory: Any, store: Store, hybrid: HybridRetriever) -> None:
    """In a private-answers channel the asker's own collections answer (ephemeral); sharing
    is offered, and allowed at a click, only when the channel may see every cited document."""
    split_into_collections(store)
    private: SlackRig = rig_factory(scoped_engine(store, hybrid),
                                    private_channels=frozenset({"C1"}))
    store.set_scope("user:slack:U1", ["security", "default"], "UADMIN")  # C1: default
    private.event(mention(TLS_QUESTION, "90.1"), "Ev1")
    answer = private.api.posted("chat.postEphemeral")[-1]
    assert "DOC-TLS-" in json.dumps(answer["blocks"]) and private.api.posted() == []
    assert SHARE_ACTION not in json.dumps(answer["blocks"])
    assert private.store.turns()[-1]["audience"] == "private:slack"
    result_id = private.store.turns()[-1]["result_id"]
    private.interactive({
        "type": "block_actions", "team": {"id": TEAM}, "user": {"id": "U1"},
        "container": {"type": "message", "channel_id": "C1", "message_ts": "9.1",
                      "is_ephemeral": True},
        "channel": {"id": "C1"}, "trigger_id": "tr-share",
        "actions": [{"action_id": SHARE_ACTION, "value": result_id, "action_ts": "9.1"}]})
    assert private.api.posted() == []  # refused: nothing reaches the channel
    assert private.api.posted("chat.postEphemeral")[-1]["text"] == i18n.text(
        "share_not_allowed", "en")
    store.set_scope("slack:C1", ["security", "default"], "UADMIN")  # now the channel may
    private.event(mention(TLS_QUESTION, "91.1"), "Ev2")
    assert SHARE_ACTION in json.dumps(private.api.posted("chat.postEphemeral")[-1]["blocks"])
