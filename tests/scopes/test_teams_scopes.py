"""Scopes over the loopback Teams fake: channels (every thread inherits the channel's
scope), a personal chat, conversations shared with another organization (another tenant,
a guest sender), and the admin `scopes` command."""

from __future__ import annotations

from typing import Any

import pytest

from docassist.storage import Store
from docassist.storage.dense import HybridRetriever
from tests.scopes.scoped_corpus import TLS_QUESTION, scoped_engine, split_into_collections
from tests.teams.rig import ADMIN, CHANNEL, TENANT, TeamsRig

OTHER_CHANNEL = "19:random@thread.tacv2"


@pytest.fixture
def teams(teams_factory: Any, store: Store, hybrid: HybridRetriever) -> TeamsRig:
    split_into_collections(store)
    rig: TeamsRig = teams_factory(scoped_engine(store, hybrid), tenant_id=TENANT)
    return rig


def in_channel(teams: TeamsRig, channel: str, root: str, **changes: Any) -> dict[str, Any]:
    activity = teams.activity(TLS_QUESTION, conversation=f"{channel};messageid={root}",
                              conversation_type="channel", mention=True)
    activity["conversation"].update(changes)
    return activity


def test_channels_with_different_scopes_and_their_threads(teams: TeamsRig) -> None:
    teams.post(teams.activity(f"scopes set teams:{CHANNEL};messageid=1 security", user=ADMIN))
    assert f"teams:{CHANNEL} → security" in teams.connector.messages()[-1].text
    teams.post(in_channel(teams, CHANNEL, "100"))
    teams.post(in_channel(teams, CHANNEL, "200"))  # another thread of the same channel
    teams.post(in_channel(teams, OTHER_CHANNEL, "300"))
    first, second, other = teams.connector.messages()[-3:]
    assert "DOC-TLS-" in first.text and "DOC-TLS-" in second.text
    assert "DOC-TLS" not in other.text and "TLS certificate renewal" not in other.text
    assert [t["audience"] for t in teams.store.turns()] == [
        f"channel:teams:{CHANNEL}", f"channel:teams:{CHANNEL}",
        f"channel:teams:{OTHER_CHANNEL}"]


def test_a_personal_chat_gets_the_users_collections(teams: TeamsRig) -> None:
    teams.post(teams.activity(TLS_QUESTION))
    assert "DOC-TLS" not in teams.connector.messages()[-1].text
    teams.store.set_scope("user:teams:aad-user-1", ["security"], "teams:aad-admin")
    teams.post(teams.activity(TLS_QUESTION))
    assert "DOC-TLS-" in teams.connector.messages()[-1].text
    assert teams.store.turns()[-1]["audience"] == "private:teams"


def test_another_tenant_or_a_guest_gets_only_shareable_collections(teams: TeamsRig) -> None:
    teams.store.set_scope(f"teams:{CHANNEL}", ["security", "default"], "teams:aad-admin")
    teams.post(in_channel(teams, CHANNEL, "400", tenantId="tenant-other"))
    guest = in_channel(teams, CHANNEL, "500")
    guest["from"]["userRole"] = "guest"
    teams.post(guest)
    for reply in teams.connector.messages()[-2:]:
        assert "DOC-TLS" not in reply.text and "TLS certificate renewal" not in reply.text
    assert [t["audience"] for t in teams.store.turns()] == [f"shared:teams:{CHANNEL}"] * 2
    teams.post(teams.activity("scopes share security", user=ADMIN))
    teams.post(in_channel(teams, CHANNEL, "600", tenantId="tenant-other"))
    assert "DOC-TLS-" in teams.connector.messages()[-1].text


def test_scopes_is_for_admins_only(teams: TeamsRig, caplog: pytest.LogCaptureFixture) -> None:
    teams.post(teams.activity(f"scopes set teams:{CHANNEL} security"))
    assert "for DocAssist administrators only" in teams.connector.messages()[-1].text
    assert "refused scopes" in caplog.text and "aad-user-1" not in caplog.text
    assert teams.store.scope_mappings() == {} and teams.store.scope_changes() == []
    assert teams.store.turns() == [] and teams.store.tool_calls() == []
    teams.post(teams.activity(f"scopes set teams:{CHANNEL} nope", user=ADMIN))
    assert "Unknown collection: nope" in teams.connector.messages()[-1].text
    assert teams.store.scope_mappings() == {} and teams.store.turns() == []
