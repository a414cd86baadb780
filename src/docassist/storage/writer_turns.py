"""Whose turn it is to write one SQLite file, among DocAssist's own connections and
processes: an advisory `flock` on `<database>-writer`, taken before BEGIN IMMEDIATE and given
back after COMMIT or ROLLBACK.

SQLite's busy handler sleeps between tries in growing steps (1, 2, 5, 10, 15, 20, 25 ms …).
Turn processes write in short transactions many times a second, so a waiting ack lost every
race in the gaps and slept through the steps: one burst's group commit waited 79 ms for the
lock (1 + 2 + … + 25 ms), the ack p99 of that burst. A writer waiting here tries again every
WRITER_TURN_POLL_SECONDS instead, so it follows the holder within a fraction of a millisecond.

SQLite's lock stays the authority: this only orders our own writers. A connection that does
not take the turn (the sqlite3 shell, a backup) is waited for by SQLite's busy handler as
before, and a file whose folder does not let us create the lock file is written without it.
`flock` works wherever the database can be: WAL mode needs a local file system (its shared
memory does not work over a network one), and every local Linux file system supports it.
"""

from __future__ import annotations

import fcntl
import logging
import os
import time

from docassist.storage.limits import WRITER_TURN_POLL_SECONDS

logger = logging.getLogger(__name__)

SUFFIX = "-writer"
"""Beside SQLite's own `-wal` and `-shm`; empty, it holds no data."""


def _open(database_path: str) -> int | None:
    if database_path == ":memory:" or database_path.startswith("file:"):
        return None  # one connection's database, or a URI (read-only opens use one)
    try:
        return os.open(database_path + SUFFIX, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError as error:  # a read-only folder: SQLite's busy handler alone orders writers
        logger.info("writing %s without a writer turn: %s", database_path, error)
        return None


class WriterTurns:
    """One connection's way to the writer turn of its database file. The caller serializes
    its own threads (a lock is per open file, not per thread)."""

    def __init__(self, database_path: str) -> None:
        self._fd = _open(database_path)

    def take(self, timeout_seconds: float) -> bool:
        """Wait up to `timeout_seconds` for the turn; False when another writer kept it."""
        if self._fd is None:
            return True
        deadline = time.monotonic() + timeout_seconds
        while True:
            try:
                fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return True
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    return False
                time.sleep(WRITER_TURN_POLL_SECONDS)

    def give_back(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # gives the turn back too, if it was held
            self._fd = None
