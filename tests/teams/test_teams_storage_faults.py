"""Teams over real HTTP when the database takes no writes: the user is told why, in their
language; nothing runs; what only reads (the catalog) still works; writable again, it
answers."""

from __future__ import annotations

from docassist.core import i18n
from docassist.core.tools import ToolRegistry
from docassist.storage import Store
from tests.helpers import recording
from tests.teams.rig import TeamsRig


def test_an_activity_the_database_cannot_store_is_answered_with_the_reason(
        teams: TeamsRig, store: Store, registry: ToolRegistry) -> None:
    store.db.execute("PRAGMA query_only = ON")  # SQLite refuses every write from here on
    with recording(registry, *registry.names()) as recorders:
        teams.post(teams.activity("Jak odnowić certyfikat TLS?"))
    assert all(recorder.calls == [] for recorder in recorders.values())
    [told] = teams.connector.sent
    assert told.text == i18n.text("storage_read_only", "pl")
    assert store.inbox_rows() == [] and store.turns() == []
    teams.post(teams.activity("docs"))  # the catalog needs no writes
    assert "DOC-TLS" in str(teams.connector.sent[-1].activity)
    store.db.execute("PRAGMA query_only = OFF")
    teams.post(teams.activity("How do I renew the TLS certificate?"))
    assert "DOC-TLS-" in teams.connector.sent[-1].text
    assert [row["status"] for row in store.turns()] == ["answered"]
