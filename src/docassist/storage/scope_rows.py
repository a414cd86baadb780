"""The store's part for scopes (issue 22): mappings of channels, users and groups to
collections, shareable collections, and the log of changes (who, when, before, after).

A mixin of `Store`, like source_rows.py. Collections are JSON lists of names.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from typing import Any, Protocol

from sqlite_utils import Database

from docassist.core.documents import DEFAULT_COLLECTION


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class _StoreParts(Protocol):
    db: Database
    _lock: threading.RLock

    def _reading(self) -> AbstractContextManager[sqlite3.Connection]: ...

    def _transaction(self) -> AbstractContextManager[sqlite3.Connection]: ...


class ScopeRows:
    """Scope mappings and their change log (mixed into Store)."""

    def scope_mappings(self: _StoreParts) -> dict[str, tuple[str, ...]]:
        with self._reading() as connection:
            rows = connection.execute("SELECT subject, collections FROM scope_mappings").fetchall()
        return {subject: tuple(json.loads(names)) for subject, names in rows}

    def shareable_collections(self: _StoreParts) -> frozenset[str]:
        with self._lock:
            rows = self.db.execute("SELECT collection FROM shareable_collections").fetchall()
        return frozenset(name for (name,) in rows)

    def collection_names(self: _StoreParts) -> list[str]:
        with self._lock:
            rows = self.db.execute(
                "SELECT collection FROM documents UNION SELECT collection FROM sources "
                "UNION SELECT collection FROM shareable_collections").fetchall()
        return sorted({DEFAULT_COLLECTION, *(name for (name,) in rows)})

    def set_scope(self: _StoreParts, subject: str, collections: list[str], admin: str) -> None:
        """Map a subject to collections (an empty list removes it), logged with the admin."""
        after = sorted(set(collections))
        with self._transaction() as connection:
            row = connection.execute("SELECT collections FROM scope_mappings WHERE subject = ?",
                                     [subject]).fetchone()
            if after:
                connection.execute(
                    "INSERT OR REPLACE INTO scope_mappings (subject, collections, updated_by, "
                    "updated_at) VALUES (?, ?, ?, ?)", [subject, json.dumps(after), admin, _now()])
            else:
                connection.execute("DELETE FROM scope_mappings WHERE subject = ?", [subject])
            _log(connection, admin, subject, row[0] if row else None,
                 json.dumps(after) if after else None)

    def set_shareable(self: _StoreParts, collection: str, shareable: bool, admin: str) -> None:
        with self._transaction() as connection:
            was = connection.execute("SELECT 1 FROM shareable_collections WHERE collection = ?",
                                     [collection]).fetchone() is not None
            if shareable:
                connection.execute(
                    "INSERT OR REPLACE INTO shareable_collections (collection, updated_by, "
                    "updated_at) VALUES (?, ?, ?)", [collection, admin, _now()])
            else:
                connection.execute("DELETE FROM shareable_collections WHERE collection = ?",
                                   [collection])
            _log(connection, admin, f"shareable:{collection}", json.dumps(was),
                 json.dumps(shareable))

    def scope_changes(self: _StoreParts) -> list[dict[str, Any]]:
        with self._lock:
            return list(self.db.query("SELECT * FROM scope_changes ORDER BY id"))


def _log(connection: sqlite3.Connection, admin: str, subject: str, before: str | None,
         after: str | None) -> None:
    connection.execute(
        "INSERT INTO scope_changes (changed_at, admin, subject, before, after) "
        "VALUES (?, ?, ?, ?, ?)", [_now(), admin, subject, before, after])
