"""Which store a `DOCASSIST_DB` value opens: a registry of URL schemes, SQLite for the rest.

`DOCASSIST_DB` is a file path (SQLite, the embedded default) or a URL whose scheme names a
registered backend (`postgresql://USER@HOST:PORT/DB`). A backend is one `register_backend`
call, like the model backends of models/registry.py.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel
from sqlite_utils import Database

from docassist.core.errors import ConfigurationError
from docassist.storage.database import Store
from docassist.storage.migrations import migrations
from docassist.storage.postgres import PostgresStore
from docassist.storage.postgres.connection import redact_url
from docassist.storage.postgres.schema import MIGRATIONS as PG_MIGRATIONS
from docassist.storage.roles import Storage

Opener = Callable[[str, bool], Storage]
"""Opens one backend's store. Typed with `Storage` (storage/roles.py), so mypy proves each
store satisfies every role: `open_store` returns the SQLite one, and `_postgres` is
registered as an Opener below."""
_BACKENDS: dict[str, tuple[str, Opener]] = {}
"""URL scheme → (backend name, opener)."""

SQLITE = "sqlite"


def register_backend(scheme: str, name: str, opener: Opener) -> None:
    _BACKENDS[scheme] = (name, opener)


def _scheme(db: str) -> str | None:
    """The URL scheme of a DOCASSIST_DB value; None for an SQLite path (`file:` URIs too)."""
    head, separator, _ = db.partition("://")
    if not separator or not head.replace("+", "").isalnum() or head.lower() == "file":
        return None
    return head.lower()


def backend_of(db: str | os.PathLike[str]) -> str:
    """The backend a DOCASSIST_DB value selects: a registered scheme's name, else sqlite."""
    scheme = _scheme(str(db))
    if scheme is None:
        return SQLITE
    if scheme not in _BACKENDS:
        known = ", ".join(sorted(f"{s}://" for s in _BACKENDS))
        raise ConfigurationError(f"unknown database URL scheme {scheme}:// (known: {known}; "
                                 "or give an SQLite file path)")
    return _BACKENDS[scheme][0]


def shown(db: str | os.PathLike[str]) -> str:
    """A DOCASSIST_DB value fit for output and logs: a URL loses its password."""
    return str(db) if _scheme(str(db)) is None else redact_url(str(db))


def open_store(db: str | os.PathLike[str], *, save_raw: bool = False) -> Storage:
    """The store DOCASSIST_DB names, migrated and ready."""
    value = str(db)
    scheme = _scheme(value)
    if scheme is None:
        return Store(Path(value), save_raw=save_raw)
    backend_of(value)  # an unknown scheme is a configuration error
    return _BACKENDS[scheme][1](value, save_raw)


class MigrationReport(BaseModel):
    backend: str
    database: str
    applied: list[str]
    """Migrations applied by this run, in order (empty: the schema was current)."""
    known: int
    """Migrations this version of DocAssist has for the backend."""


def migrate_database(db: str | os.PathLike[str]) -> MigrationReport:
    """Apply the pending migrations of the store DOCASSIST_DB names (what opening it does)
    and say which ran."""
    value = str(db)
    if backend_of(value) == SQLITE:
        database = Database(value)
        try:
            names = [migration.name for migration in migrations.pending(database)]
        finally:
            database.close()
        Store(Path(value)).close()  # opening migrates, with the store's own settings
        return MigrationReport(backend=SQLITE, database=value, applied=names,
                               known=len(migrations.pending(Database(memory=True))))
    store = PostgresStore(value, migrate_now=False)
    try:
        applied = store.migrate()
    finally:
        store.close()
    return MigrationReport(backend="postgresql", database=shown(value), applied=applied,
                           known=len(PG_MIGRATIONS))


def _postgres(url: str, save_raw: bool) -> PostgresStore:
    return PostgresStore(url, save_raw=save_raw)


register_backend("postgresql", "postgresql", _postgres)
register_backend("postgres", "postgresql", _postgres)
