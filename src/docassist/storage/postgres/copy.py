"""`docassist db copy`: an SQLite installation moved into a PostgreSQL database, whole.

Every table is copied row for row with its keys (the schemas share names and encodings,
schema.py), in one PostgreSQL transaction: a copy that fails leaves nothing, and a copy run
again inserts only rows whose key is not there yet (`ON CONFLICT DO NOTHING`), so it
duplicates nothing. Rows go through COPY into a temporary table, then one INSERT … SELECT
per table. Identity sequences then continue after the copied ids, and the index version is
moved on, so every replica rebuilds its search indexes from the copied rows.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from pydantic import BaseModel
from sqlite_utils import Database

from docassist.core.errors import StorageError
from docassist.storage.database import Store
from docassist.storage.postgres.connection import Connection
from docassist.storage.postgres.store import PostgresStore

KINDS: Final = {
    # table: (kind as reported, SQLite order, the PostgreSQL conflict target)
    "meta": ("meta", "key", "(key)"),
    "documents": ("documents", "document_id", "(document_id)"),
    "chunks": ("chunks", "chunk_id", "(chunk_id)"),
    "chunks_fts": ("search_rows", "rowid", "(rowid)"),
    "embeddings": ("vectors", "chunk_id, model", "(chunk_id, model)"),
    "conversations": ("conversations", "conversation_id", "(conversation_id)"),
    "turns": ("turns", "rowid", "(result_id)"),
    "tool_calls": ("tool_calls", "id", "(id)"),
    "processed_events": ("processed_events", "platform, event_id", "(platform, event_id)"),
    "inbox": ("inbox_events", "id", ""),
    "eval_runs": ("eval_runs", "run_id", "(run_id)"),
    "shadow_decisions": ("shadow_decisions", "result_id", "(result_id)"),
    "feedback": ("feedback", "id", ""),
    "escalations": ("escalations", "result_id", "(result_id)"),
    "sources": ("sources", "name", "(name)"),
    "source_items": ("source_items", "source, item", "(source, item)"),
    "leases": ("leases", "name", "(name)"),
    "stale_notes": ("stale_notes", "id", ""),
    "conversation_addresses": ("conversation_addresses", "conversation_id",
                               "(conversation_id)"),
    "team_addresses": ("team_addresses", "channel_id", "(channel_id)"),
    "shares": ("shares", "result_id", "(result_id)"),
    "scope_mappings": ("scope_mappings", "subject", "(subject)"),
    "shareable_collections": ("shareable_collections", "collection", "(collection)"),
    "scope_changes": ("scope_changes", "id", "(id)"),
    "rate_arrivals": ("rate_arrivals", "arrival_id", "(arrival_id)"),
    "question_vectors": ("question_vectors", "result_id", "(result_id)"),
}
"""Tables with several unique keys (inbox, feedback, stale notes) skip a row that conflicts
on any of them."""

_INTERNAL: Final = frozenset({"_sqlite_migrations", "sqlite_sequence", "sqlite_stat1"})
SERIAL_TABLES: Final = ("chunks_fts", "tool_calls", "inbox", "feedback", "stale_notes",
                        "scope_changes")
BATCH: Final = 2000


class KindCount(BaseModel):
    source: int
    copied: int
    already_there: int


class CopyReport(BaseModel):
    source: str
    target: str
    kinds: dict[str, KindCount]


def copy_sqlite_to_postgres(source: Store, target: PostgresStore,
                            on_kind: Callable[[str], None] | None = None) -> CopyReport:
    """Copy every row of `source` that `target` lacks; counts per kind. A table this copy
    does not know (a newer SQLite schema) stops it before anything is written."""
    unknown = sorted(set(source.db.table_names()) - set(KINDS) - _INTERNAL
                     - {name for name in source.db.table_names() if name.startswith("chunks_fts_")})
    if unknown:
        raise StorageError(f"cannot copy tables this version does not know: {', '.join(unknown)}")
    kinds: dict[str, KindCount] = {}
    with target._transaction() as connection:
        for table, (kind, order, conflict) in KINDS.items():
            if on_kind is not None:
                on_kind(kind)
            total, copied = _copy_table(source.db, connection, table, order, conflict)
            kinds[kind] = KindCount(source=total, copied=copied, already_there=total - copied)
        for table in SERIAL_TABLES:
            column = "rowid" if table == "chunks_fts" else "id"
            connection.execute(
                f"SELECT setval(pg_get_serial_sequence('{table}', '{column}'), "
                f"GREATEST((SELECT max({column}) FROM {table}), 1))")
        if any(kinds[kind].copied for kind in ("documents", "chunks", "search_rows", "vectors")):
            connection.execute("UPDATE meta SET value = (value::bigint + 1)::text "
                               "WHERE key = 'index_version'")
    return CopyReport(source=source.path, target=target.path, kinds=kinds)


def _copy_table(db: Database, connection: Connection, table: str, order: str,
                conflict: str) -> tuple[int, int]:
    """Rows of one SQLite table into its PostgreSQL twin; (rows in the source, inserted)."""
    columns = [column.name for column in db[table].columns]
    if table == "chunks_fts":
        columns = ["rowid", *columns]
    # The index version is the target's own (moved on after the copy).
    where = "WHERE key != 'index_version'" if table == "meta" else ""
    names = ", ".join(f'"{name}"' for name in columns)
    connection.execute(f'CREATE TEMP TABLE "copy_{table}" ON COMMIT DROP AS '
                       f'SELECT {names} FROM "{table}" WITH NO DATA')
    # Rows keep the source's order (turns of one millisecond: their insertion order).
    connection.execute(f'ALTER TABLE "copy_{table}" ADD COLUMN copy_order bigint '
                       "GENERATED ALWAYS AS IDENTITY")
    total = 0
    with connection.cursor().copy(f'COPY "copy_{table}" ({names}) FROM STDIN') as copy:
        for row in db.execute(f'SELECT {", ".join(columns)} FROM "{table}" {where} '
                              f"ORDER BY {order}"):
            copy.write_row(row)
            total += 1
    inserted = connection.execute(
        f'INSERT INTO "{table}" ({names}) SELECT {names} FROM "copy_{table}" '
        f"ORDER BY copy_order ON CONFLICT {conflict} DO NOTHING").rowcount
    return total, int(inserted)
