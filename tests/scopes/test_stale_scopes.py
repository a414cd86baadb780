"""Stale notes about a removed document after a scope narrows: the note keeps the collection
the cited version was in (from the answer's sources, else from the sync), and is posted only
where the thread's audience may still see that collection; a note whose collection is not
known is never posted. Nothing about the document (title, id) reaches a thread that may no
longer see it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from docassist.bot.stale_courier import StaleNoteCourier
from docassist.core.messages import ConversationKey
from docassist.core.scopes import Audience
from docassist.core.scoping import ScopeResolver
from docassist.core.stale import DocumentChange, StaleNote, note_visible
from docassist.sources.sync import sync_all
from docassist.storage import Store
from docassist.storage.dense import HybridRetriever
from tests.conftest import STORES
from tests.scopes.scoped_corpus import scoped_engine
from tests.slack.rig import SlackRig, mention
from tests.stale_zebra import QUESTION
from tests.teams.rig import CHANNEL, TeamsRig


def _posted_text(rig: SlackRig, channel: str) -> str:
    return json.dumps([m for m in rig.api.posted() if m.get("channel") == channel])


@pytest.mark.parametrize("store", STORES, indirect=True)
def test_a_removed_document_is_noted_only_where_its_collection_may_still_be_seen(
        rig_factory: Any, store: Store, hybrid: HybridRetriever, zebra: Path) -> None:
    rig: SlackRig = rig_factory(scoped_engine(store, hybrid))
    store.set_scope("slack:C1", ["default"], "UADMIN")
    rig.event(mention(QUESTION, "80.1"), "Ev1")
    rig.event(mention(QUESTION, "81.1", channel="C2"), "Ev2")  # unmapped: default
    assert "DOC-ZEBRA-" in _posted_text(rig, "C1") and "DOC-ZEBRA-" in _posted_text(rig, "C2")
    store.set_scope("slack:C1", ["security"], "UADMIN")  # C1 narrowed: default is gone
    zebra.unlink()
    [outcome] = sync_all(store, stale_days=14)
    assert outcome.deleted == ["DOC-ZEBRA"]
    before = len(rig.api.posted())
    StaleNoteCourier(store, "slack", rig.adapter.stale_notes.post).deliver_once()
    notes = rig.api.posted()[before:]
    assert [(note["channel"], note["thread_ts"]) for note in notes] == [("C2", "81.1")]
    assert "was removed" in notes[0]["text"]
    rows = store.stale_note_rows()
    assert [row["collection"] for row in rows] == ["default", "default"]
    assert all(row["status"] == "delivered" for row in rows)  # withheld is final, not retried


@pytest.mark.parametrize("store", STORES, indirect=True)
def test_a_teams_thread_narrowed_away_gets_no_note_about_a_removed_document(
        teams_factory: Any, store: Store, hybrid: HybridRetriever, zebra: Path) -> None:
    teams: TeamsRig = teams_factory(scoped_engine(store, hybrid))
    thread = teams.channel_thread("7001")
    teams.post(teams.activity(QUESTION, conversation=thread, conversation_type="channel",
                              activity_id="7001", mention=True))
    assert "DOC-ZEBRA-" in teams.connector.messages()[-1].text
    store.set_scope(f"teams:{CHANNEL}", ["security"], "UADMIN")
    zebra.unlink()
    sync_all(store, stale_days=14)
    before = len(teams.connector.messages())
    StaleNoteCourier(store, "teams", teams.adapter.stale_notes.post).deliver_once()
    assert teams.connector.messages()[before:] == []
    store.set_scope(f"teams:{CHANNEL}", ["security", "default"], "UADMIN")  # not re-posted
    assert StaleNoteCourier(store, "teams", teams.adapter.stale_notes.post).deliver_once() == 0


def test_a_thread_answered_before_collections_were_kept_gets_the_sources_collection(
        rig_factory: Any, store: Store, hybrid: HybridRetriever, zebra: Path) -> None:
    """A state saved before sources carried their collection: the sync's source collection
    stands in, so the narrowed channel still gets nothing and the other still its note."""
    rig: SlackRig = rig_factory(scoped_engine(store, hybrid))
    rig.event(mention(QUESTION, "90.1"), "Ev1")
    rig.event(mention(QUESTION, "91.1", channel="C2"), "Ev2")
    for row in store.db.query("SELECT conversation_id, state FROM conversations"):
        state = json.loads(row["state"])
        for source in state["last_sources"]:
            assert source.pop("collection") == "default"
        store.db.execute("UPDATE conversations SET state = ? WHERE conversation_id = ?",
                         [json.dumps(state), row["conversation_id"]])
    store.db.conn.commit()
    store.set_scope("slack:C1", ["security"], "UADMIN")
    zebra.unlink()
    sync_all(store, stale_days=14)
    before = len(rig.api.posted())
    StaleNoteCourier(store, "slack", rig.adapter.stale_notes.post).deliver_once()
    assert [note["channel"] for note in rig.api.posted()[before:]] == ["C2"]
    assert {row["collection"] for row in store.stale_note_rows()} == {"default"}


class _Rules:
    def scope_mappings(self) -> dict[str, tuple[str, ...]]:
        return {"slack:C1": ("handbook",)}

    def shareable_collections(self) -> frozenset[str]:
        return frozenset()

    def collection_names(self) -> list[str]:
        return ["default", "handbook"]


def _note(change: DocumentChange, collection: str | None) -> StaleNote:
    return StaleNote(note_id=1, key=ConversationKey(platform="slack", workspace="T",
                                                    channel="C1", thread="1.1"),
                     document_id="DOC-ZEBRA", title="Zebra alarm", change=change,
                     changed_at="2026-11-30T20:00:00", collection=collection)


def test_the_rule_for_a_removed_documents_note(store: Store, zebra: Path) -> None:
    scopes = ScopeResolver(_Rules())
    channel = Audience(kind="channel", platform="slack", channel="C1")
    other = Audience(kind="channel", platform="slack", channel="C9")  # default only
    removed = DocumentChange.DELETED
    assert note_visible(_note(removed, "handbook"), channel, scopes, store)
    assert not note_visible(_note(removed, "handbook"), other, scopes, store)
    assert not note_visible(_note(removed, None), channel, scopes, store)  # fails closed
    assert not note_visible(_note(removed, "default"), channel, scopes, store)
    # An updated document: named only if the thread may see it now (it is in `default`).
    assert note_visible(_note(DocumentChange.UPDATED, "handbook"), other, scopes, store)
    assert not note_visible(_note(DocumentChange.UPDATED, "default"), channel, scopes, store)
