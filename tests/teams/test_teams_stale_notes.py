"""A Teams thread whose cited document changes in a sync gets exactly one note (over the fake
connector), and its "Ask again" action answers from the new version."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from docassist.bot.stale_courier import StaleNoteCourier
from docassist.bot.teams import cards
from docassist.core.sources import Source, SourceKind
from docassist.sources.sync import sync_all
from docassist.storage import Bm25Retriever, Store
from tests.conftest import STORES, EngineFactory
from tests.stale_zebra import QUESTION, ZEBRA_V2
from tests.teams.rig import ADMIN, CHANNEL, TeamsRig


@pytest.fixture
def teams(teams_factory: Any, make_engine: EngineFactory, store: Store
          ) -> TeamsRig:
    rig: TeamsRig = teams_factory(make_engine(retriever=Bm25Retriever(store)))
    return rig


def test_a_changed_citation_gets_one_note_and_ask_again_answers_from_the_new_version(
        teams: TeamsRig, store: Store, zebra: Path) -> None:
    thread = teams.channel_thread("2001")
    teams.post(teams.activity(QUESTION, conversation=thread, conversation_type="channel",
                              activity_id="2001", mention=True))
    [answer] = teams.connector.messages()
    assert "PagerDuty" in answer.text
    zebra.write_text(ZEBRA_V2)
    [outcome] = sync_all(store, stale_days=14)
    assert outcome.updated == ["DOC-ZEBRA"]
    couriers = [StaleNoteCourier(store, "teams", teams.adapter.stale_notes.post, holder=name)
                for name in ("replica-1", "replica-2")]
    assert [courier.deliver_once() for courier in couriers] == [1, 0]
    assert couriers[1].deliver_once() == 0
    note = teams.connector.messages()[-1]
    assert note.conversation_id == thread
    assert "Zebra alarm" in note.text and "has changed" in note.text
    [action] = [a for card in note.cards for a in cards.actions(card)]
    assert action["data"][cards.ACTION_KEY] == cards.ASK_AGAIN
    teams.post(teams.activity(None, conversation=thread, conversation_type="channel",
                              value=action["data"]))
    again = teams.connector.messages()[-1]
    assert again.conversation_id == thread
    assert "Opsgenie" in again.text and "PagerDuty" not in again.text
    [address] = [row[0] for row in store.db.execute(
        "SELECT reference FROM conversation_addresses").fetchall()]
    assert thread in address and "Ada" not in address and "aad-user-1" not in address


def test_a_conversation_without_a_known_address_keeps_its_note_pending(
        teams: TeamsRig, store: Store, zebra: Path) -> None:
    teams.post(teams.activity(QUESTION))
    store.db.execute("DELETE FROM conversation_addresses")
    zebra.write_text(ZEBRA_V2)
    sync_all(store, stale_days=14)
    assert StaleNoteCourier(store, "teams", teams.adapter.stale_notes.post).deliver_once() == 0
    [row] = store.stale_note_rows()
    assert row["status"] == "pending" and "no address" in row["error"]
    assert CHANNEL  # (the channel constant is shared with the HTTP tests)


@pytest.mark.parametrize("store", STORES, indirect=True)
def test_admins_see_every_source_and_its_failure_in_teams(teams: TeamsRig, store: Store,
                                                          zebra: Path) -> None:
    store.add_source(Source(name="gone", kind=SourceKind.FOLDER,
                            settings={"path": str(zebra.parent / "missing")}))
    sync_all(store, "gone")
    teams.post(teams.activity("sources", user=ADMIN))
    shown = teams.connector.messages()[-1].text
    assert "handbook (folder, default): 1 docs" in shown
    assert "gone (folder, default): 0 docs" in shown and "folder not found" in shown
    teams.post(teams.activity("sources"))
    assert "handbook" not in teams.connector.messages()[-1].text
