"""The stores' part for scopes (issue 22): mappings of channels, users and groups to
collections, shareable collections, and the log of changes (who, when, before, after).

A mixin of both stores (written once over dialect.py). Collections are JSON lists of names.
"""

from __future__ import annotations

import json
from typing import Any

from docassist.core.documents import DEFAULT_COLLECTION
from docassist.storage.connection import now_iso
from docassist.storage.dialect import SqlConnection, SqlStore


class ScopeRows:
    """Scope mappings and their change log (mixed into Store and PostgresStore)."""

    def scope_mappings(self: SqlStore) -> dict[str, tuple[str, ...]]:
        rows = self._read_apart("SELECT subject, collections FROM scope_mappings")
        return {row["subject"]: tuple(json.loads(row["collections"])) for row in rows}

    def shareable_collections(self: SqlStore) -> frozenset[str]:
        return frozenset(row["collection"] for row in self._read(
            "SELECT collection FROM shareable_collections"))

    def collection_names(self: SqlStore) -> list[str]:
        rows = self._read("SELECT collection FROM documents UNION SELECT collection FROM "
                          "sources UNION SELECT collection FROM shareable_collections")
        return sorted({DEFAULT_COLLECTION, *(row["collection"] for row in rows)})

    def set_scope(self: SqlStore, subject: str, collections: list[str], admin: str) -> None:
        """Map a subject to collections (an empty list removes it), logged with the admin."""
        after = sorted(set(collections))
        with self._write() as connection:
            row = connection.execute("SELECT collections FROM scope_mappings WHERE subject = ?"
                                     + self.dialect.lock_rows, [subject]).fetchone()
            if after:
                connection.execute(self.dialect.upsert(
                    "scope_mappings", ["subject", "collections", "updated_by", "updated_at"],
                    ["subject"]), [subject, json.dumps(after), admin, now_iso()])
            else:
                connection.execute("DELETE FROM scope_mappings WHERE subject = ?", [subject])
            _log(connection, admin, subject, row[0] if row else None,
                 json.dumps(after) if after else None)

    def set_shareable(self: SqlStore, collection: str, shareable: bool, admin: str) -> None:
        with self._write() as connection:
            was = connection.execute("SELECT 1 FROM shareable_collections WHERE collection = ?"
                                     + self.dialect.lock_rows, [collection]
                                     ).fetchone() is not None
            if shareable:
                connection.execute(self.dialect.upsert(
                    "shareable_collections", ["collection", "updated_by", "updated_at"],
                    ["collection"]), [collection, admin, now_iso()])
            else:
                connection.execute("DELETE FROM shareable_collections WHERE collection = ?",
                                   [collection])
            _log(connection, admin, f"shareable:{collection}", json.dumps(was),
                 json.dumps(shareable))

    def scope_changes(self: SqlStore) -> list[dict[str, Any]]:
        return self._read("SELECT * FROM scope_changes ORDER BY id")


def _log(connection: SqlConnection, admin: str, subject: str, before: str | None,
         after: str | None) -> None:
    connection.execute(
        "INSERT INTO scope_changes (changed_at, admin, subject, before, after) "
        "VALUES (?, ?, ?, ?, ?)", [now_iso(), admin, subject, before, after])
