"""Turns decide their collections from the audience: channels, the asker's own scope in
private, shareable collections only in externally shared channels, the operator's choice;
out of scope = unknown everywhere a document can surface; traces record the audience."""

from __future__ import annotations

import json

import pytest
from slack_sdk import WebClient

from docassist.core.messages import ChatMessage, Command, ConversationKey
from docassist.core.ports import MembershipLookup
from docassist.core.results import TurnResult
from docassist.core.scopes import OPERATOR, Audience, AudienceKind
from docassist.core.scoping import ScopeResolver
from docassist.core.turn import TurnEngine
from docassist.directory.slack_groups import SlackUserGroups
from docassist.storage import Store
from docassist.storage.dense import HybridRetriever
from docassist_testkit.fakes.slack_groups_api import BOT_TOKEN, FakeSlackGroups
from tests.scopes.scoped_corpus import TLS_QUESTION, scoped_engine, split_into_collections

TLS_TITLE = "TLS certificate renewal"


@pytest.fixture
def engine(store: Store, hybrid: HybridRetriever) -> TurnEngine:
    split_into_collections(store)
    return scoped_engine(store, hybrid)


def ask(engine: TurnEngine, text: str, kind: AudienceKind = "channel", *, channel: str = "C1",
        user: str = "U1", thread: str = "t1", command: Command | None = None,
        argument: str | None = None) -> TurnResult:
    audience = Audience(kind=kind, platform="slack", user=user,
                        channel=None if kind == "private" else channel)
    key = ConversationKey(platform="slack", workspace="T1", channel=channel, thread=thread)
    result = engine.handle(ChatMessage(key=key, user=user, text=text, audience=audience,
                                       command=command, command_argument=argument))
    assert result is not None
    return result


def documents(result: TurnResult) -> set[str]:
    return {source.document_id for source in result.sources}


def test_two_channels_asking_the_same_question_get_different_sources(
        engine: TurnEngine, store: Store) -> None:
    store.set_scope("slack:C-SEC", ["security"], "UADMIN")
    secure = ask(engine, TLS_QUESTION, channel="C-SEC", thread="a")
    general = ask(engine, TLS_QUESTION, channel="C-GEN", thread="b")  # unmapped: default
    assert secure.status == "answered" and documents(secure) == {"DOC-TLS"}
    assert "DOC-TLS" not in documents(general)
    assert "DOC-TLS" not in general.answer and TLS_TITLE not in general.answer
    [first, second] = store.turns()
    assert (first["audience"], json.loads(first["collections"])) == (
        "channel:slack:C-SEC", ["security"])
    assert (second["audience"], json.loads(second["collections"])) == (
        "channel:slack:C-GEN", ["default"])


def test_a_direct_message_gets_the_askers_own_collections(engine: TurnEngine,
                                                          store: Store) -> None:
    assert "DOC-TLS" not in documents(ask(engine, TLS_QUESTION, "private", thread="a"))
    store.set_scope("user:slack:U1", ["security", "default"], "UADMIN")
    mine = ask(engine, TLS_QUESTION, "private", thread="b")
    assert documents(mine) == {"DOC-TLS"}
    assert store.turns()[-1]["audience"] == "private:slack"  # no user id in the trace
    other = ask(engine, TLS_QUESTION, "private", user="U2", thread="c")
    assert "DOC-TLS" not in documents(other)


def test_group_mappings_come_through_the_membership_lookup(store: Store,
                                                          hybrid: HybridRetriever) -> None:
    """Slack user groups over the loopback Slack API fake, through the real lookup."""
    split_into_collections(store)
    directory = FakeSlackGroups()
    directory.state.groups = {"S-SEC": ["U1"], "S-OTHER": ["U2"]}
    try:
        lookup: MembershipLookup = SlackUserGroups(WebClient(token=BOT_TOKEN,
                                                             base_url=directory.url))
        engine = scoped_engine(store, hybrid)
        engine.scopes = ScopeResolver(store, lookup)
        ask(engine, TLS_QUESTION, "private", thread="a")
        assert directory.state.calls == []  # no group mapping: no directory call per turn
        store.set_scope("group:slack:S-SEC", ["security"], "UADMIN")
        assert documents(ask(engine, TLS_QUESTION, "private", thread="b")) == {"DOC-TLS"}
        assert "DOC-TLS" not in documents(ask(engine, TLS_QUESTION, "private", user="U2",
                                              thread="c"))
        directory.state.token_error = "token_revoked"  # cached answers still hold
        assert documents(ask(engine, TLS_QUESTION, "private", thread="d")) == {"DOC-TLS"}
    finally:
        directory.stop()


def test_an_externally_shared_channel_gets_only_shareable_collections(
        engine: TurnEngine, store: Store) -> None:
    store.set_scope("slack:C-EXT", ["security", "default"], "UADMIN")
    refused = ask(engine, TLS_QUESTION, "shared", channel="C-EXT", thread="a")
    assert refused.status == "no_answer" and refused.sources == []  # none shareable
    assert TLS_TITLE not in refused.answer
    assert json.loads(store.turns()[-1]["collections"]) == []
    store.set_shareable("security", True, "UADMIN")
    shared = ask(engine, TLS_QUESTION, "shared", channel="C-EXT", thread="b")
    assert documents(shared) == {"DOC-TLS"}
    assert store.turns()[-1]["audience"] == "shared:slack:C-EXT"


def test_metadata_of_an_out_of_scope_id_is_an_unknown_id(engine: TurnEngine,
                                                         store: Store) -> None:
    result = ask(engine, "meta DOC-TLS", command=Command.METADATA, argument="DOC-TLS")
    assert result.status == "clarification_needed" and result.metadata is None
    # Said exactly as for an id that does not exist: no title, not among the known ids.
    assert result.answer.startswith("I don't know the document “DOC-TLS”")
    assert TLS_TITLE not in result.answer and "DOC-TLS" not in result.answer.split("Known")[1]
    nowhere = ask(engine, "meta DOC-NOPE", command=Command.METADATA, argument="DOC-NOPE",
                  thread="t0")
    assert nowhere.answer.replace("DOC-NOPE", "DOC-TLS") == result.answer
    assert result.tool.status == "invalid_arguments"
    assert result.tool.error_code == "unknown_document_id"
    store.set_scope("slack:C1", ["security"], "UADMIN")
    shown = ask(engine, "meta DOC-TLS", command=Command.METADATA, argument="DOC-TLS",
                thread="t2")
    assert shown.status == "metadata_shown" and shown.metadata is not None
    assert shown.metadata["title"] == TLS_TITLE


def test_narrowing_a_channel_withholds_the_sources_of_an_older_answer(
        engine: TurnEngine, store: Store) -> None:
    store.set_scope("slack:C1", ["security", "default"], "UADMIN")
    answered = ask(engine, TLS_QUESTION)
    assert documents(answered) == {"DOC-TLS"}
    store.set_scope("slack:C1", ["default"], "UADMIN")
    shown = ask(engine, "", command=Command.SHOW_SOURCES)
    assert shown.status == "sources_shown" and shown.sources == []
    assert "DOC-TLS" not in shown.answer and TLS_TITLE not in shown.answer
    assert "withheld" in shown.answer
    changes = store.scope_changes()
    assert [(c["admin"], c["subject"], c["after"]) for c in changes] == [
        ("UADMIN", "slack:C1", '["default", "security"]'), ("UADMIN", "slack:C1", '["default"]')]


def test_the_reply_says_when_the_asker_could_read_more_privately(engine: TurnEngine,
                                                                  store: Store) -> None:
    store.set_scope("user:slack:U1", ["security"], "UADMIN")
    result = ask(engine, TLS_QUESTION, channel="C-GEN")
    assert "DOC-TLS" not in documents(result) and TLS_TITLE not in result.answer
    assert "direct message" in result.answer and "sources_held_back" in result.warnings
    assert "sources_held_back" in json.loads(store.turns()[-1]["warnings"])
    other = ask(engine, TLS_QUESTION, channel="C-GEN", user="U2", thread="t2")
    assert "direct message" not in other.answer  # U2 reads nothing more


def test_the_operator_searches_everything_unless_narrowed(engine: TurnEngine,
                                                          store: Store) -> None:
    key = ConversationKey(platform="terminal", workspace="w", channel="c", thread="x")
    every = engine.handle(ChatMessage(key=key, user="terminal", text=TLS_QUESTION,
                                      audience=OPERATOR))
    assert every is not None and documents(every) == {"DOC-TLS"}
    assert json.loads(store.turns()[-1]["collections"]) == ["default", "hr", "ops",
                                                            "security"]
    narrowed = engine.handle(ChatMessage(
        key=key.model_copy(update={"thread": "y"}), user="terminal", text=TLS_QUESTION,
        audience=OPERATOR.model_copy(update={"collections": ("hr",)})))
    assert narrowed is not None and documents(narrowed) <= {"DOC-ACCESS"}
    assert store.turns()[-1]["audience"] == "operator"


def test_a_message_without_an_audience_searches_only_default(engine: TurnEngine,
                                                             store: Store) -> None:
    """Fail closed: an adapter that forgot to say who reads the reply never widens it."""
    key = ConversationKey(platform="slack", workspace="w", channel="C1", thread="z")
    result = engine.handle(ChatMessage(key=key, user="U1", text=TLS_QUESTION))
    assert result is not None and "DOC-TLS" not in documents(result)
    assert (store.turns()[-1]["audience"], json.loads(store.turns()[-1]["collections"])) == (
        "unset", ["default"])


def test_lists_and_prompts_show_only_the_audiences_documents(engine: TurnEngine,
                                                             store: Store) -> None:
    channel = Audience(kind="channel", platform="slack", channel="C1", user="U1")
    listed = {d.document_id for d in engine.catalog_for(channel).documents()}
    assert listed and not listed & {"DOC-TLS", "DOC-DB", "DOC-ACCESS"}
    store.set_scope("slack:C1", ["hr"], "UADMIN")
    assert [d.document_id for d in engine.catalog_for(channel).documents()] == ["DOC-ACCESS"]


def test_exports_and_the_report_filter_by_audience_and_collection(engine: TurnEngine,
                                                                  store: Store) -> None:
    from docassist.cli.report import gather
    from docassist.storage.exports import trace_rows

    store.set_scope("slack:C-SEC", ["security"], "UADMIN")
    ask(engine, TLS_QUESTION, channel="C-SEC", thread="a")
    ask(engine, TLS_QUESTION, channel="C-GEN", thread="b")
    ask(engine, TLS_QUESTION, "private", user="U2", thread="c")
    assert [r["audience"] for r in trace_rows(store, audience="channel")] == [
        "channel:slack:C-SEC", "channel:slack:C-GEN"]
    assert [r["collections"] for r in trace_rows(store, collection="security")] == [
        ["security"]]
    assert len(trace_rows(store, audience="channel:slack:C-GEN")) == 1
    assert trace_rows(store, audience="channel:slack:C") == []  # a prefix of parts, not text
    assert len(trace_rows(store, audience="private", collection="default")) == 1
    assert gather(store)["turns"] == 3
    assert gather(store, audience="channel", collection="default")["turns"] == 1
