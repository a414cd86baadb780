"""The seam between the row code both stores share and their SQL: a `Dialect` (how each
spells an upsert, an insert that ignores a repeat, a row lock, writers taking turns, byte
order) and `SqlStore`, what a shared row mixin needs of the store it is mixed into (a mixin
that needs more names it in a protocol of its own, e.g. catalog_rows.CatalogStore).

Shared SQL is written once, with SQLite's `?` placeholders; the PostgreSQL store's
connections take them too (postgres/connection.py: Qmark). So shared SQL holds no literal
`?` and no `%` of its own. SQL that repeats a parameter may name it (`:name`, never a `::`
cast) and is made positional by `positional`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence, Sized
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

T = TypeVar("T")


class Cursor(Protocol):
    @property
    def rowcount(self) -> int: ...

    @property
    def description(self) -> Any:
        """The columns read, each a sequence whose first item is the column's name."""
        ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...


class SqlConnection(Protocol):
    """A connection in a write transaction, taking `?` placeholders (sqlite3's own; the
    PostgreSQL store's Qmark)."""

    def execute(self, sql: str, parameters: Sequence[Any] = ..., /) -> Cursor: ...

    def executemany(self, sql: str, parameters: Iterable[Sequence[Any]], /) -> Cursor: ...


def marks(values: Sized) -> str:
    """One `?` per value, comma-separated: a VALUES list or an IN (…) list."""
    return ", ".join(["?"] * len(values))


@dataclass(frozen=True)
class Dialect:
    name: str
    replace: str
    """`INSERT {replace} INTO t (…) VALUES (…) {on_key}`: a row replacing the one with its key."""
    ignore: str
    """`INSERT {ignore} INTO t (…) VALUES (…) {on_repeat}`: a repeated row is not stored."""
    on_repeat: str
    lock_rows: str
    """Appended to a SELECT of rows the transaction then changes. SQLite needs none: its
    BEGIN IMMEDIATE holds the database's one write lock; PostgreSQL locks the rows read."""
    skip_locked: str
    """Appended to a SELECT of rows a claim takes: on PostgreSQL, rows another replica is
    claiming right now are passed over instead of waited for (no row is claimed twice);
    SQLite's one writer never meets another."""
    quote: str
    """Around table and column names in generated SQL (PostgreSQL's upserts quote them)."""
    take_turn: str
    """A statement taking a lock keyed by `?` until the transaction ends: writers of one kind
    (claims, rate checks, catalog changes) take turns across replicas, as READ COMMITTED
    alone does not make them. SQLite needs none: BEGIN IMMEDIATE already serializes writers."""
    bytewise: str
    """Appended to an ORDER BY column: text in byte order, as SQLite's default (BINARY)
    collation sorts it; PostgreSQL's default follows the database's locale."""
    insertion_order: str
    """The column that orders turns stored in one millisecond as they were inserted:
    SQLite's hidden rowid; on PostgreSQL a `seq` column of the turns table."""
    eval_run_order: str
    """The column that orders evaluation runs started in one millisecond: SQLite's rowid
    (insertion order); PostgreSQL's eval_runs have no such column, so their run id."""
    private_columns: tuple[str, ...]
    """Columns a `SELECT *` reads that this database keeps for itself (PostgreSQL's
    turns.seq), dropped from the rows handed out."""

    def insert(self, table: str, row: dict[str, Any]) -> tuple[str, list[Any]]:
        """One row as an INSERT and its values; bools as 0/1, as both stores keep them."""
        names = ", ".join(f'"{name}"' for name in row)
        values = [int(value) if isinstance(value, bool) else value for value in row.values()]
        return f'INSERT INTO "{table}" ({names}) VALUES ({marks(row)})', values

    def upsert_row(self, table: str, row: dict[str, Any],
                   key: Sequence[str]) -> tuple[str, list[Any]]:
        """`upsert` of one row and its values, bools as 0/1 (as `insert`)."""
        values = [int(value) if isinstance(value, bool) else value for value in row.values()]
        return self.upsert(table, list(row), key), values

    def upsert(self, table: str, columns: Sequence[str], key: Sequence[str]) -> str:
        """One row, replacing the row with its `key` (SQLite's INSERT OR REPLACE;
        PostgreSQL's ON CONFLICT … DO UPDATE of every other column)."""
        names = ", ".join(self._quoted(name) for name in columns)
        return (f"INSERT{self.replace} INTO {self._quoted(table)} ({names}) "
                f"VALUES ({marks(columns)}){self._on_key(columns, key)}")

    def insert_ignoring(self, table: str, columns: Sequence[str]) -> str:
        """One row, unless it repeats one stored (SQLite's INSERT OR IGNORE; PostgreSQL's
        ON CONFLICT DO NOTHING)."""
        return (f"INSERT{self.ignore} INTO {table} ({', '.join(columns)}) "
                f"VALUES ({marks(columns)}){self.on_repeat}")

    def _quoted(self, name: str) -> str:
        return f"{self.quote}{name}{self.quote}"

    def _on_key(self, columns: Sequence[str], key: Sequence[str]) -> str:
        if self.replace:
            return ""
        updates = ", ".join(f"{self._quoted(name)} = EXCLUDED.{self._quoted(name)}"
                            for name in columns if name not in key)
        action = f"DO UPDATE SET {updates}" if updates else "DO NOTHING"
        return f" ON CONFLICT ({', '.join(self._quoted(name) for name in key)}) {action}"


SQLITE = Dialect("sqlite", replace=" OR REPLACE", ignore=" OR IGNORE", on_repeat="",
                 lock_rows="", skip_locked="", quote="", take_turn="", bytewise="",
                 insertion_order="rowid", eval_run_order="rowid", private_columns=())
POSTGRESQL = Dialect("postgresql", replace="", ignore="", on_repeat=" ON CONFLICT DO NOTHING",
                     lock_rows=" FOR UPDATE", skip_locked=" FOR UPDATE SKIP LOCKED", quote='"',
                     take_turn="SELECT pg_advisory_xact_lock(?)", bytewise=' COLLATE "C"',
                     insertion_order="seq", eval_run_order="run_id", private_columns=("seq",))


def wait_for_turn(connection: SqlConnection, dialect: Dialect, lock_key: int) -> None:
    """Queue behind the other writers of `lock_key`'s kind until this transaction ends (see
    Dialect.take_turn; nothing to do on SQLite)."""
    if dialect.take_turn:
        connection.execute(dialect.take_turn, [lock_key])


_NAMED = re.compile(r":(\w+)")


def positional(sql: str, values: Mapping[str, Any]) -> tuple[str, list[Any]]:
    """SQL written with `:name` parameters (each perhaps used more than once) as `?` SQL and
    its values in order: the shared form both stores' connections take."""
    ordered: list[Any] = []

    def mark(found: re.Match[str]) -> str:
        ordered.append(values[found.group(1)])
        return "?"

    return _NAMED.sub(mark, sql), ordered


def rows_of(cursor: Cursor) -> list[dict[str, Any]]:
    """A cursor's rows as dicts keyed by column name."""
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


Query = Callable[[str, list[Any]], Iterable[dict[str, Any]]]
"""A read with `?` placeholders, rows as dicts keyed by column name."""

Stream = Callable[[str, list[Any]], Iterable[tuple[Any, ...]]]
"""A read in one snapshot (the catalog's vectors), its rows as tuples, fetched as they are
iterated."""


class SqlStore(Protocol):
    """What a shared row mixin needs of its store. Every SQL text takes `?` placeholders."""

    dialect: Dialect
    save_raw: bool

    def _write(self) -> AbstractContextManager[SqlConnection]:
        """A write transaction of its own: committed when the block ends, rolled back on an
        error, which surfaces as a StorageError."""
        ...

    def _shared_write(self, body: Callable[[SqlConnection], T]) -> T:
        """`body` in a write transaction the store may share with its other queued writers
        (SQLite: shared_writes.py; PostgreSQL: one of its own); its result once committed."""
        ...

    def _write_retried(self, body: Callable[[SqlConnection], T]) -> T:
        """`body` in a write transaction of its own, run again when the database cancelled it
        as a deadlock (PostgreSQL: two replicas storing the same events in another order);
        SQLite's one writer meets no deadlock, so there it runs once."""
        ...

    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]: ...

    def _read_apart(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """A read that waits for no writer of this process (SQLite: on a read connection of
        its own; PostgreSQL: every read does)."""
        ...

    def _read_ack_path(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """A read on the ack path (is an event stored, is a thread known, anything to claim):
        SQLite keeps a connection for these alone, so an ack never queues behind the store's
        other reads or its writers; PostgreSQL reads on a pooled connection, as always."""
        ...

    def _reads(self) -> AbstractContextManager[Query]:
        """Several reads together (SQLite: under the store's lock; PostgreSQL: in one
        transaction)."""
        ...
