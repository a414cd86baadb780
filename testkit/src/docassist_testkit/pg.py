"""A throwaway PostgreSQL cluster for the tests and the benchmarks: initdb in a fresh folder
under /tmp, one server on a free loopback port with trust auth (the tests' fixtures, in
tests/conftest.py, make a database per test).

PostgreSQL refuses to run as root, so as root the cluster belongs to an unprivileged system
user (`docassist-pg`, created when missing) and initdb/pg_ctl run through `runuser`. The
folder is not under pytest's private temporary directory, which that user cannot traverse.
Without the server binaries (scripts/test installs Debian's `postgresql` as root)
`start_cluster` raises `ServerMissing`, and the PostgreSQL tests skip and say why.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from docassist_testkit.fakes.loopback import free_port

PG_USER = "docassist-pg"


class ServerMissing(RuntimeError):
    """PostgreSQL's server binaries (initdb, pg_ctl) are not installed."""


def _server_bin() -> Path | None:
    """The folder holding initdb and pg_ctl: on PATH, else Debian's newest version."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(found).parent
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                        key=lambda path: int(Path(path).parts[-3]))
    return Path(candidates[-1]).parent if candidates else None


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
        raise ServerMissing("PostgreSQL server binaries (initdb, pg_ctl) are missing: run "
                            "scripts/test as root once, which installs Debian's postgresql")
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
    port = free_port()
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
