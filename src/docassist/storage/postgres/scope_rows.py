"""The PostgreSQL store's scopes (issue 22): mappings of channels, users and groups to
collections, shareable collections, and the log of changes. Same semantics as
storage/scope_rows.py; collections are JSON lists of names."""

from __future__ import annotations

import json
from typing import Any, Protocol

from docassist.core.documents import DEFAULT_COLLECTION
from docassist.storage.postgres.connection import Connection, now_iso, upsert_sql


class _Base(Protocol):
    def _transaction(self) -> Any: ...

    def _rows(self, sql: str, params: Any = ()) -> list[dict[str, Any]]: ...


class ScopeRowsPg:
    """Scope mappings and their change log (mixed into PostgresStore)."""

    def scope_mappings(self: _Base) -> dict[str, tuple[str, ...]]:
        return {row["subject"]: tuple(json.loads(row["collections"])) for row in self._rows(
            "SELECT subject, collections FROM scope_mappings")}

    def shareable_collections(self: _Base) -> frozenset[str]:
        return frozenset(row["collection"] for row in self._rows(
            "SELECT collection FROM shareable_collections"))

    def collection_names(self: _Base) -> list[str]:
        rows = self._rows("SELECT collection FROM documents UNION SELECT collection FROM "
                          "sources UNION SELECT collection FROM shareable_collections")
        return sorted({DEFAULT_COLLECTION, *(row["collection"] for row in rows)})

    def set_scope(self: _Base, subject: str, collections: list[str], admin: str) -> None:
        """Map a subject to collections (an empty list removes it), logged with the admin."""
        after = sorted(set(collections))
        with self._transaction() as connection:
            row = connection.execute("SELECT collections FROM scope_mappings WHERE subject = %s "
                                     "FOR UPDATE", [subject]).fetchone()
            if after:
                connection.execute(*upsert_sql("scope_mappings", {
                    "subject": subject, "collections": json.dumps(after), "updated_by": admin,
                    "updated_at": now_iso()}, ["subject"]))
            else:
                connection.execute("DELETE FROM scope_mappings WHERE subject = %s", [subject])
            _log(connection, admin, subject, row[0] if row else None,
                 json.dumps(after) if after else None)

    def set_shareable(self: _Base, collection: str, shareable: bool, admin: str) -> None:
        with self._transaction() as connection:
            was = connection.execute("SELECT 1 FROM shareable_collections WHERE collection = %s "
                                     "FOR UPDATE", [collection]).fetchone() is not None
            if shareable:
                connection.execute(*upsert_sql("shareable_collections", {
                    "collection": collection, "updated_by": admin, "updated_at": now_iso()},
                    ["collection"]))
            else:
                connection.execute("DELETE FROM shareable_collections WHERE collection = %s",
                                   [collection])
            _log(connection, admin, f"shareable:{collection}", json.dumps(was),
                 json.dumps(shareable))

    def scope_changes(self: _Base) -> list[dict[str, Any]]:
        return self._rows("SELECT * FROM scope_changes ORDER BY id")


def _log(connection: Connection, admin: str, subject: str, before: str | None,
         after: str | None) -> None:
    connection.execute(
        "INSERT INTO scope_changes (changed_at, admin, subject, before, after) "
        "VALUES (%s, %s, %s, %s, %s)", [now_iso(), admin, subject, before, after])
