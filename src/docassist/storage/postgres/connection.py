"""The PostgreSQL store's plumbing: a connection pool, transactions, and PostgreSQL's errors
as ours (busy, read-only, full, unavailable), the same kinds the SQLite store raises.

Every write runs in one transaction on a pooled connection at READ COMMITTED; the version
and duplicate checks are single statements (`UPDATE … WHERE version = …`, `INSERT … ON
CONFLICT DO NOTHING`), so they hold across replicas without table locks.
"""

from __future__ import annotations

import itertools
import logging
import time
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any, Final, TypeVar

import psycopg
from psycopg import errors as pg_errors
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool, PoolClosed, PoolTimeout

from docassist.core.errors import (
    StorageBusyError,
    StorageError,
    StorageFullError,
    StorageReadOnlyError,
    StorageUnavailableError,
    StoreClosedError,
)
from docassist.storage.dialect import POSTGRESQL, Dialect, Query, Stream
from docassist.storage.limits import (
    PG_CHECK_IDLE_SECONDS,
    PG_CONNECT_TIMEOUT_SECONDS,
    PG_POOL_MAX,
    PG_RECONNECT_SECONDS,
    STORAGE_BUSY_TIMEOUT_MS,
    STORAGE_RETRY_BACKOFF_SECONDS,
    STORAGE_WRITE_ATTEMPTS,
)

logger = logging.getLogger(__name__)
T = TypeVar("T")

Connection = psycopg.Connection[Any]

_SESSION_SETTINGS: Final = (
    # A lock held by another replica is waited for as long as SQLite's busy timeout.
    f"SET lock_timeout = {STORAGE_BUSY_TIMEOUT_MS}",
    "SET statement_timeout = 0",
)


def now_iso() -> str:
    """Timestamps are ISO UTC text, as the SQLite store keeps them (exports compare them)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def redact_url(url: str) -> str:
    """The URL without its password, for messages and logs."""
    try:
        info = psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        return "postgresql://…"
    host, port, name = info.get("host", ""), info.get("port", ""), info.get("dbname", "")
    return f"postgresql://{info.get('user', '')}@{host}{':' + str(port) if port else ''}/{name}"


def _configure(connection: Connection) -> None:
    for statement in _SESSION_SETTINGS:
        connection.execute(statement)
    connection.commit()


class _IdleCheck:
    """Checks a connection (one round trip) before it is lent only when it sat idle for
    PG_CHECK_IDLE_SECONDS: one cut by a server restart is then replaced instead of failing a
    turn, and one in steady use costs no extra round trip."""

    def __init__(self) -> None:
        self._returned: weakref.WeakKeyDictionary[Connection, float] = (
            weakref.WeakKeyDictionary())

    def returned(self, connection: Connection) -> None:
        self._returned[connection] = time.monotonic()

    def check(self, connection: Connection) -> None:
        last = self._returned.get(connection)
        if last is None or time.monotonic() - last > PG_CHECK_IDLE_SECONDS:
            ConnectionPool.check_connection(connection)


POOL_LOGGER: Final = logging.getLogger("psycopg.pool")


class _FirstAttempts(logging.Filter):
    """Drops the pool's "error connecting" warning of each attempt while it first opens: the
    one `cannot open database …` error says what the server said (each retry repeated it,
    once per attempt, before it). Later reconnections still log theirs."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("error connecting in ")


class PgBase:
    """A pool of connections to one database and the transaction rule of the store."""

    def __init__(self, url: str, *, pool_max: int = PG_POOL_MAX) -> None:
        self.url = url
        self.path = redact_url(url)  # what messages name (the SQLite store's file path)
        idle = _IdleCheck()
        self.pool = ConnectionPool(
            url, min_size=1, max_size=pool_max, open=False, configure=_configure,
            check=idle.check, reset=idle.returned, timeout=PG_CONNECT_TIMEOUT_SECONDS,
            reconnect_timeout=PG_RECONNECT_SECONDS,
            kwargs={"connect_timeout": max(1, int(PG_CONNECT_TIMEOUT_SECONDS)),
                    "application_name": "docassist"},
            name="docassist")
        quiet = _FirstAttempts()
        POOL_LOGGER.addFilter(quiet)
        try:
            self.pool.open(wait=True, timeout=PG_CONNECT_TIMEOUT_SECONDS)
        except PoolTimeout as error:
            self.pool.close()
            raise StorageUnavailableError(
                f"cannot open database {self.path}: {_why_not(url)}") from error
        finally:
            POOL_LOGGER.removeFilter(quiet)

    def close(self) -> None:
        self.pool.close()

    @contextmanager
    def _transaction(self) -> Iterator[Connection]:
        """One transaction on a pooled connection: committed when the body returns, rolled
        back on any error; PostgreSQL's errors surface as StorageErrors (`storage_error`)."""
        try:
            with self.pool.connection() as connection, connection.transaction():
                yield connection
        except (psycopg.Error, PoolTimeout) as error:
            raise storage_error(error) from error

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """A read: rows as dicts keyed by column name."""
        try:
            with self.pool.connection() as connection, connection.cursor(
                    row_factory=dict_row) as cursor:
                cursor.execute(sql, params)
                return list(cursor.fetchall())
        except (psycopg.Error, PoolTimeout) as error:
            raise storage_error(error) from error

    def _value(self, sql: str, params: Sequence[Any] = ()) -> Any:
        """The first column of the first row, or None."""
        try:
            with self.pool.connection() as connection:
                row = connection.execute(sql, params).fetchone()
        except (psycopg.Error, PoolTimeout) as error:
            raise storage_error(error) from error
        return None if row is None else row[0]

    # The seam the shared row mixins use (dialect.SqlStore): `?` placeholders, as SQLite's.

    dialect: Dialect = POSTGRESQL

    @contextmanager
    def _write(self) -> Iterator[Qmark]:
        with self._transaction() as connection:
            yield Qmark(connection)

    def _shared_write(self, body: Callable[[Qmark], T]) -> T:
        """Each write is a transaction of its own here (one per pooled connection)."""
        with self._write() as connection:
            return body(connection)

    def _write_retried(self, body: Callable[[Qmark], T]) -> T:
        """A deadlock cancels one of the transactions; this one is then tried again and finds
        the other's rows. Not at once: the other transaction goes on only when it wakes, and a
        retry that takes a key before then can deadlock with it again (seen on a loaded
        machine), so each retry first waits a little longer."""
        pause = STORAGE_RETRY_BACKOFF_SECONDS
        for attempt in range(1, STORAGE_WRITE_ATTEMPTS + 1):
            try:
                with self._write() as connection:
                    return body(connection)
            except StorageBusyError as error:
                if attempt == STORAGE_WRITE_ATTEMPTS or not isinstance(
                        error.__cause__, pg_errors.DeadlockDetected):
                    raise
            time.sleep(pause)
            pause *= 2
        raise AssertionError("unreachable")

    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        return self._rows(sql.replace("?", "%s"), params)

    @contextmanager
    def _snapshot(self) -> Iterator[Stream]:
        with self._transaction() as connection:
            connection.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            names = itertools.count()

            def stream(sql: str, params: list[Any]) -> Iterator[tuple[Any, ...]]:
                # Server-side: rows arrive as they are read, not all at once.
                with connection.cursor(name=f"snapshot_{next(names)}") as cursor:
                    cursor.itersize = 2000
                    cursor.execute(sql.replace("?", "%s"), params)
                    yield from cursor

            yield stream

    def _read_apart(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        return self._read(sql, params)  # every read has a pooled connection of its own

    def _read_ack_path(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        return self._read(sql, params)

    @contextmanager
    def _reads(self) -> Iterator[Query]:
        with self._transaction() as connection:
            def query(sql: str, params: list[Any]) -> list[dict[str, Any]]:
                with connection.cursor(row_factory=dict_row) as cursor:
                    cursor.execute(sql.replace("?", "%s"), params)
                    return list(cursor.fetchall())

            yield query

    def ensure_writable(self) -> None:
        """Raise a StorageUnavailableError when a write would fail now: the server is
        unreachable, or the database (a standby, or default_transaction_read_only) is
        read-only. Writes nothing."""
        read_only = self._value("SELECT current_setting('transaction_read_only') = 'on' "
                                "OR pg_is_in_recovery()")
        if read_only:
            raise StorageReadOnlyError(f"database is read-only: {self.path}")


def _why_not(url: str) -> str:
    """What the server says to one connection attempt (the pool only says it timed out):
    unreachable, no such database, authentication failed… (libpq never repeats a password)."""
    try:
        psycopg.connect(url, connect_timeout=max(1, int(PG_CONNECT_TIMEOUT_SECONDS))).close()
    except psycopg.Error as error:
        return " ".join(str(error).split())
    return f"no connection within {PG_CONNECT_TIMEOUT_SECONDS:.0f} s"


def storage_error(error: BaseException) -> StorageError:
    """PostgreSQL's error as ours, by its kind (SQLSTATE class)."""
    if isinstance(error, PoolClosed):
        return StoreClosedError(f"the store was closed: {error}")
    if isinstance(error, PoolTimeout):
        return StorageUnavailableError(f"database unavailable: no connection ({error})")
    if isinstance(error, pg_errors.LockNotAvailable | pg_errors.DeadlockDetected
                  | pg_errors.SerializationFailure | pg_errors.QueryCanceled):
        return StorageBusyError(f"database busy: another connection held a lock past the "
                                f"bounded wait ({error})")
    if isinstance(error, pg_errors.ReadOnlySqlTransaction):
        return StorageReadOnlyError(f"database is read-only: {error}")
    if isinstance(error, pg_errors.DiskFull | pg_errors.OutOfMemory
                  | pg_errors.ProgramLimitExceeded):
        return StorageFullError(f"database or disk is full: {error}")
    if isinstance(error, psycopg.OperationalError | pg_errors.AdminShutdown
                  | pg_errors.CannotConnectNow | pg_errors.ConnectionException):
        return StorageUnavailableError(f"database unavailable: {error}")
    return StorageError(f"cannot save: {error}")


class Qmark:
    """A psycopg connection that takes SQLite's `?` placeholders, for the SQL both stores
    share (the row mixins over dialect.py, storage/privacy.py), run in their transactions."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection

    def execute(self, sql: str, parameters: Sequence[Any] = (), /) -> psycopg.Cursor[Any]:
        return self.connection.execute(sql.replace("?", "%s"), parameters)

    def executemany(self, sql: str, parameters: Iterable[Sequence[Any]], /
                    ) -> psycopg.Cursor[Any]:
        cursor = self.connection.cursor()
        cursor.executemany(sql.replace("?", "%s"), parameters)
        return cursor
