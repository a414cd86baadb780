"""Property: for random mappings of channels, users and groups to collections and random
questions, nothing outside a conversation's scope reaches it — not in the answer, the
streamed text, the sources, the metadata, the document list or the prompts — with the rules
backend and with a model that tries to cite chunks outside the scope."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from docassist.core.documents import CITATION
from docassist.core.messages import ChatMessage, Command, ConversationKey
from docassist.core.results import TurnResult
from docassist.core.scopes import Audience
from docassist.core.scoping import ScopeResolver
from docassist.core.turn import TurnEngine
from docassist.models.adapters import ModelAnswerer
from docassist.models.base import RetryPolicy
from docassist.models.openai import OpenAIModel
from docassist.storage import Store
from docassist.storage.dense import HybridRetriever
from docassist_testkit.fakes.model_server import ModelServer, openai_chat, openai_stream
from tests.scopes.scoped_corpus import (
    COLLECTION_OF,
    COLLECTIONS,
    collection_of,
    scoped_engine,
    split_into_collections,
)

CHANNELS = ("C1", "C2")
USERS = ("U1", "U2")
GROUPS = {"U1": frozenset({"G1"})}
SUBJECTS = (*(f"slack:{c}" for c in CHANNELS), *(f"user:slack:{u}" for u in USERS),
            "group:slack:G1")
QUESTIONS = ("How do I renew the TLS certificate?", "Jak odtworzyć bazę danych z kopii?",
             "How do I request access to DocAssist?", "Co zrobić po zmianie konfiguracji?",
             "How do I restart the worker queue?", "backup")
TITLES = {"DOC-TLS": "TLS certificate renewal", "DOC-DB": "Kopia zapasowa i odtwarzanie",
          "DOC-ACCESS": "Requesting access to DocAssist systems"}
"""Titles of the documents outside `default`: no page of another collection mentions them."""

names = st.frozensets(st.sampled_from(COLLECTIONS))
mappings = st.dictionaries(st.sampled_from(SUBJECTS), names.filter(bool), max_size=4)
audiences = st.tuples(st.sampled_from(["channel", "private", "shared"]),
                      st.sampled_from(CHANNELS), st.sampled_from(USERS))


class Directory:
    """Group membership as an identity directory would answer it (an external system)."""

    def groups_of(self, platform: str, user_id: str) -> frozenset[str]:
        return GROUPS.get(user_id, frozenset())


def expected_scope(mapping: dict[str, frozenset[str]], shareable: frozenset[str],
                   kind: str, channel: str, user: str) -> frozenset[str]:
    """The README's rules, restated."""
    default = frozenset({"default"})
    if kind == "private":
        subjects = [f"user:slack:{user}", *(f"group:slack:{g}" for g in GROUPS.get(user, ()))]
        own = frozenset().union(*(mapping.get(s, frozenset()) for s in subjects))
        return own or default
    channel_scope = mapping.get(f"slack:{channel}") or default
    return channel_scope & shareable if kind == "shared" else channel_scope


def configure(store: Store, mapping: dict[str, frozenset[str]],
              shareable: frozenset[str]) -> None:
    for subject in SUBJECTS:
        store.set_scope(subject, sorted(mapping.get(subject, ())), "UADMIN")
    for name in COLLECTIONS:
        store.set_shareable(name, name in shareable, "UADMIN")


def outside(allowed: frozenset[str], texts: list[str], result: TurnResult) -> list[str]:
    """Everything in what the conversation received that belongs outside `allowed`."""
    found = [s.chunk_id for s in result.sources if collection_of(s.document_id) not in allowed]
    for text in texts:
        found += [c for c in CITATION.findall(text) if collection_of(c.rsplit("-", 2)[0])
                  not in allowed]
        found += [t for d, t in TITLES.items() if collection_of(d) not in allowed and t in text]
    if result.metadata is not None and collection_of(
            str(result.metadata["document_id"])) not in allowed:
        found.append(str(result.metadata["document_id"]))
    return found


class Conversation:
    def __init__(self, engine: TurnEngine, audience: Audience, thread: str) -> None:
        self.engine, self.audience = engine, audience
        self.key = ConversationKey(platform="slack", workspace="T1",
                                   channel=audience.channel or "D1", thread=thread)

    def send(self, text: str, command: Command | None = None,
             argument: str | None = None) -> tuple[TurnResult, list[str]]:
        streamed: list[str] = []
        result = self.engine.handle(ChatMessage(
            key=self.key, user=self.audience.user or "", text=text, command=command,
            command_argument=argument, audience=self.audience), on_partial=streamed.append)
        assert result is not None
        return result, [result.answer, *streamed]


def check_conversation(engine: TurnEngine, store: Store, data: st.DataObject,
                       thread: str) -> None:
    """One new thread per example (hypothesis repeats drawn values: a thread drawn twice
    would carry its state, e.g. "once shared, stays shared", into the next example)."""
    first, shareable = data.draw(mappings), data.draw(names)
    kind, channel, user = data.draw(audiences)
    audience = Audience(kind=kind, platform="slack", user=user,
                        channel=None if kind == "private" else channel)
    configure(store, first, shareable)
    allowed = expected_scope(first, shareable, kind, channel, user)
    conversation = Conversation(engine, audience, thread)
    result, texts = conversation.send(data.draw(st.sampled_from(QUESTIONS)))
    assert outside(allowed, texts, result) == []
    listed = {d.document_id for d in engine.catalog_for(audience).documents()}
    assert {collection_of(d) for d in listed} <= allowed  # document list, prompts
    # The scope changes; "show sources" of the earlier answer is checked again now.
    later = data.draw(mappings)
    configure(store, later, shareable)
    allowed = expected_scope(later, shareable, kind, channel, user)
    shown, texts = conversation.send("", Command.SHOW_SOURCES)
    assert outside(allowed, texts, shown) == []
    asked_for = data.draw(st.sampled_from([*COLLECTION_OF, "DOC-INSTR"]))
    meta, texts = conversation.send(f"meta {asked_for}", Command.METADATA, asked_for)
    # The user's own words are echoed ("I don't know DOC-X"); nothing else of it may be.
    assert outside(allowed, [t.replace(f"“{asked_for}”", "") for t in texts], meta) == []
    assert (meta.metadata is not None) == (collection_of(asked_for) in allowed)


@pytest.fixture
def split(store: Store) -> Store:
    split_into_collections(store)
    return store


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_rules_backend_never_shows_what_the_scope_excludes(split: Store, hybrid: HybridRetriever,
                                                          data: st.DataObject) -> None:
    engine = scoped_engine(split, hybrid)
    engine.scopes = ScopeResolver(split, Directory())
    check_conversation(engine, split, data, thread=uuid.uuid4().hex)


def citing_everything(all_chunks: dict[str, str]) -> Any:
    """A model that cites the first chunk it was given, then a chunk it was not given
    (outside the scope when the scope excludes it), naming that chunk's document."""
    def answer(body: dict[str, Any]) -> Any:
        prompt = " ".join(str(m.get("content", "")) for m in body.get("messages", []))
        given_ids = CITATION.findall(prompt)
        stranger = next((c for c in all_chunks if c not in given_ids), "")
        title = TITLES.get(all_chunks.get(stranger, ""), "a secret page")
        parts = [f"Follow the steps [{given_ids[0]}]. " if given_ids else "",
                 f"{title} also says so [{stranger}]. ",
                 f"And [{given_ids[0] if given_ids else stranger}][{stranger}] too."]
        return openai_stream(*parts) if body.get("stream") else openai_chat("".join(parts))
    return answer


@pytest.fixture
def model_answerer(split: Store) -> Iterator[ModelAnswerer]:
    chunks = {c.chunk_id: c.document_id for c in split.current_chunks()
              if c.document_id in COLLECTION_OF}
    with ModelServer() as server, httpx.Client(timeout=5.0) as client:
        server.respond("/v1/chat/completions", citing_everything(chunks))
        yield ModelAnswerer(OpenAIModel("m", client, base_url=f"{server.url}/v1",
                                        policy=RetryPolicy(attempts=1)))


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_a_model_citing_outside_the_scope_is_not_heard(split: Store, hybrid: HybridRetriever,
                                                       model_answerer: ModelAnswerer,
                                                       data: st.DataObject) -> None:
    engine = scoped_engine(split, hybrid, model_answerer)
    engine.scopes = ScopeResolver(split, Directory())
    check_conversation(engine, split, data, thread=uuid.uuid4().hex)


def test_the_property_checker_sees_a_leak() -> None:
    """The checker itself can fail: a source, a citation or a title outside is found."""
    result = TurnResult.model_validate({
        "result_id": "r", "conversation_id": "c", "generation": 0, "turn_id": 1,
        "status": "answered", "answer": "x", "language": "en", "catalog_version": "v",
        "backend": "b", "model": "m", "sources": [{
            "chunk_id": "DOC-TLS-0123456789-0001", "document_id": "DOC-TLS", "title": "t",
            "version": "1", "section": "s", "score": 1.0, "snippet": "s"}]})
    found = outside(frozenset({"default"}), ["TLS certificate renewal [DOC-DB-0123456789-0002]"],
                    result)
    assert found == ["DOC-TLS-0123456789-0001", "DOC-DB-0123456789-0002",
                     "TLS certificate renewal"]
    assert re.fullmatch(CITATION, "[DOC-DB-0123456789-0002]")
