"""The scope part of the store contract (core/ports `ScopeAdmin`, the turn's audience
and collections), run against every store of the conformance suite."""

from __future__ import annotations

import json
from typing import Any

from docassist.core.ports import ConversationStore, ScopeAdmin, TraceLog
from docassist.core.state import ConversationState
from tests.helpers import key
from tests.storage.conformance import conformance_turn


def test_conformance_a_new_store_has_no_mappings_and_only_default(any_store: Any) -> None:
    store: ScopeAdmin = any_store
    assert store.scope_mappings() == {}
    assert store.shareable_collections() == frozenset()
    assert store.collection_names() == ["default"]
    assert store.scope_changes() == []


def test_conformance_mappings_are_replaced_removed_and_logged(any_store: Any) -> None:
    store: ScopeAdmin = any_store
    store.set_scope("slack:C1", ["hr", "default", "hr"], "slack:UADMIN")
    store.set_scope("user:teams:aad-1", ["hr"], "cli:ops")
    assert store.scope_mappings() == {"slack:C1": ("default", "hr"),
                                      "user:teams:aad-1": ("hr",)}
    store.set_scope("slack:C1", ["default"], "slack:UADMIN")
    store.set_scope("user:teams:aad-1", [], "cli:ops")  # removed: back to default
    assert store.scope_mappings() == {"slack:C1": ("default",)}
    store.set_shareable("hr", True, "cli:ops")
    assert store.shareable_collections() == frozenset({"hr"})
    assert "hr" in store.collection_names()
    store.set_shareable("hr", False, "cli:ops")
    assert store.shareable_collections() == frozenset()
    changes = [(c["admin"], c["subject"], c["before"], c["after"])
               for c in store.scope_changes()]
    assert changes == [
        ("slack:UADMIN", "slack:C1", None, '["default", "hr"]'),
        ("cli:ops", "user:teams:aad-1", None, '["hr"]'),
        ("slack:UADMIN", "slack:C1", '["default", "hr"]', '["default"]'),
        ("cli:ops", "user:teams:aad-1", '["hr"]', None),
        ("cli:ops", "shareable:hr", "false", "true"),
        ("cli:ops", "shareable:hr", "true", "false")]
    assert all(c["changed_at"] for c in store.scope_changes())


def test_conformance_a_turn_keeps_its_audience_and_collections(any_store: Any) -> None:
    conversations: ConversationStore = any_store
    traces: TraceLog = any_store
    turn = conformance_turn("r1").model_copy(update={"audience": "channel:slack:C1",
                                          "collections": ["default", "hr"]})
    conversations.commit_turn(key("c"), ConversationState(), 0, turn, [])
    [row] = traces.turns()
    collections = row["collections"]
    assert row["audience"] == "channel:slack:C1"
    assert (json.loads(collections) if isinstance(collections, str) else collections) == [
        "default", "hr"]
