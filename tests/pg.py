"""A throwaway PostgreSQL cluster for the tests: initdb in a fresh folder under /tmp, one
server on a free loopback port with trust auth, a database per test.

PostgreSQL refuses to run as root, so as root the cluster belongs to an unprivileged system
user (`docassist-pg`, created when missing) and initdb/pg_ctl run through `runuser`. The
folder is not under pytest's private temporary directory, which that user cannot traverse.
Without the server binaries (scripts/test installs Debian's `postgresql` as root) the
PostgreSQL tests skip and say why.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

PG_USER = "docassist-pg"


def _server_bin() -> Path | None:
    """The folder holding initdb and pg_ctl: on PATH, else Debian's newest version."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(found).parent
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                        key=lambda path: int(Path(path).parts[-3]))
    return Path(candidates[-1]).parent if candidates else None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _as_owner(command: list[str]) -> list[str]:
    """Run as the cluster's owner: ourselves, or PG_USER when we are root."""
    return ["runuser", "-u", PG_USER, "--", *command] if os.geteuid() == 0 else command


def _ensure_user() -> None:
    if subprocess.run(["id", "-u", PG_USER], capture_output=True).returncode != 0:
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin",
                        PG_USER], check=True, capture_output=True)


@dataclass
class PgCluster:
    folder: Path
    port: int
    bin: Path

    @property
    def user(self) -> str:
        return PG_USER if os.geteuid() == 0 else os.environ.get("USER", "postgres")

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{self.user}@127.0.0.1:{self.port}/{database}"

    def admin(self, sql: str) -> None:
        """One statement outside a transaction (CREATE/DROP DATABASE) on the admin database."""
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as connection:
            connection.execute(sql)

    def pg_ctl(self, *args: str) -> None:
        subprocess.run(_as_owner([str(self.bin / "pg_ctl"), "-D", str(self.folder / "data"),
                                  "-w", "-t", "60", *args]), check=True, capture_output=True)

    def start(self) -> None:
        self.pg_ctl("-l", str(self.folder / "server.log"), "start")

    def stop(self, mode: str = "fast") -> None:
        self.pg_ctl("-m", mode, "stop")


def start_cluster() -> PgCluster:
    """initdb and start a cluster; the caller stops it (`PgCluster.stop`)."""
    server_bin = _server_bin()
    if server_bin is None:
        reason = ("PostgreSQL server binaries (initdb, pg_ctl) are missing: run the tests "
                  "through scripts/test as root, which installs Debian's postgresql")
        if os.environ.get("CI"):  # CI installs it: a skip there would hide the tests
            pytest.fail(reason)
        pytest.skip(reason)
    if os.geteuid() == 0:
        _ensure_user()
    folder = Path(tempfile.mkdtemp(prefix="docassist-pg-"))
    folder.chmod(0o755)
    if os.geteuid() == 0:
        shutil.chown(folder, PG_USER)
    data = folder / "data"
    subprocess.run(_as_owner([str(server_bin / "initdb"), "-D", str(data), "-U",
                              PG_USER if os.geteuid() == 0 else os.environ.get("USER", "postgres"),
                              "--auth=trust", "--encoding=UTF8", "--locale=C.UTF-8"]),
                   check=True, capture_output=True)
    port = _free_port()
    with (data / "postgresql.conf").open("a") as conf:
        # Loopback only, no unix socket folder to own; fsync off: a crash test kills
        # replicas, never the test server's host. wal_level minimal (no replica reads this
        # WAL): CREATE DATABASE … TEMPLATE, once per test, takes ~0.1 s instead of ~0.9 s.
        conf.write(f"\nlisten_addresses = '127.0.0.1'\nport = {port}\n"
                   "unix_socket_directories = ''\nfsync = off\nsynchronous_commit = off\n"
                   "full_page_writes = off\nmax_connections = 200\n"
                   "wal_level = minimal\nmax_wal_senders = 0\n")
    cluster = PgCluster(folder=folder, port=port, bin=server_bin)
    cluster.start()
    return cluster


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[PgCluster]:
    """One cluster for the session (started on first use)."""
    pytest.importorskip("psycopg")
    cluster = start_cluster()
    try:
        yield cluster
    finally:
        cluster.stop("immediate")
        shutil.rmtree(cluster.folder, ignore_errors=True)


@pytest.fixture
def pg_url(pg_cluster: PgCluster) -> Iterator[str]:
    """A fresh, empty database for one test, dropped after it."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    pg_cluster.admin(f'CREATE DATABASE "{name}"')
    yield pg_cluster.url(name)
    pg_cluster.admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="session")
def pg_demo_template(pg_cluster: PgCluster, demo_template: Path) -> str:
    """A database holding the indexed demo corpus (copied from the SQLite template with
    `db copy`'s code), used as the template of each test's database."""
    from docassist.storage import Store
    from docassist.storage.postgres import PostgresStore
    from docassist.storage.postgres.copy import copy_sqlite_to_postgres

    name = "demo_template"
    pg_cluster.admin(f'CREATE DATABASE "{name}"')
    source, target = Store(demo_template), PostgresStore(pg_cluster.url(name))
    try:
        copy_sqlite_to_postgres(source, target)
    finally:
        source.close()
        target.close()
    return name


@pytest.fixture
def pg_demo_url(pg_cluster: PgCluster, pg_demo_template: str) -> Iterator[str]:
    """A fresh database for one test holding the indexed demo corpus (a copy of the
    template database: CREATE DATABASE … TEMPLATE, milliseconds)."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    pg_cluster.admin(f'CREATE DATABASE "{name}" TEMPLATE "{pg_demo_template}"')
    yield pg_cluster.url(name)
    pg_cluster.admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
