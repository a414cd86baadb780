"""The `docassist` command run as a real process, and its one JSON document.

The process is forked from tests/cli_zygote.py's server, which has the third-party libraries
imported already (a fresh interpreter spends ~1 s of CPU importing them); it is still its own
process with its own pid, descriptors, environment, working directory and exit code.
Interpreter-level settings (PYTHON* variables, the locale) are fixed when an interpreter
starts, so a command whose environment changes them runs in a fresh interpreter, as does
every command when TESTS_CLI_SPAWN=1.
"""

from __future__ import annotations

import atexit
import json
import locale
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import IO, Any

from tests.cli_zygote import HEADER
from tests.conftest import REPO

RUN_TIMEOUT = 180
"""Seconds a command may take before the test fails: a deadline that only catches a hang. At
60 s, `eval retrieval` over the dev set on PostgreSQL missed it with two suites running on
CI's two cores."""
INTERPRETER_SETTINGS = ("PYTHON", "LANG", "LC_", "TYPER_", "_TYPER_", "TERMINAL_WIDTH")
"""Variables read when an interpreter starts or a preloaded library is imported (typer
reads these at import): a command that changes one gets a fresh interpreter."""


def run(
    *args: str, db: Path | str | None, stdin: str | None = None, cwd: Path | str = REPO,
    **env: str
) -> subprocess.CompletedProcess[str]:
    """`docassist ARGS` in `cwd`; `db=None` leaves DOCASSIST_DB unset (the default database:
    the session's XDG_DATA_HOME, tests/conftest.py, unless `env` names another)."""
    environment = {**os.environ, "DOCASSIST_LANGUAGE": "en", "COLUMNS": "200", **env}
    if db is None:
        environment.pop("DOCASSIST_DB", None)
    else:
        environment["DOCASSIST_DB"] = str(db)
    command = [sys.executable, "-m", "docassist", *args]
    zygote = None if os.environ.get("TESTS_CLI_SPAWN") == "1" else _Zygote.shared()
    if zygote is None or not zygote.can_run(environment):
        return subprocess.run(command, input=stdin, capture_output=True, text=True,
                              env=environment, cwd=cwd, timeout=RUN_TIMEOUT, check=False)
    return zygote.run(command, stdin, environment, cwd)


def one_json(stdout: str) -> Any:
    return json.loads(stdout)  # raises unless stdout is exactly one JSON document


def demo_pages_with(tmp_path: Path, name: str, text: str) -> Path:
    """The demo pages and one more page (`name`, `text`) copied to tmp_path/corpus and
    indexed into a fresh SQLite file; returns the database's path."""
    return demo_pages_with_all(tmp_path, {name: text})


def demo_pages_with_all(tmp_path: Path, pages: dict[str, str]) -> Path:
    """The demo pages and `pages` (file name -> text) indexed into tmp_path/pages.db."""
    corpus, db = tmp_path / "corpus", tmp_path / "pages.db"
    shutil.copytree(REPO / "samples" / "docs", corpus, dirs_exist_ok=True)
    for name, text in pages.items():
        (corpus / name).write_text(text, encoding="utf-8")
    assert run("index", str(corpus), "--json", db=db).returncode == 0
    return db


def copy_of(db: Path, tmp_path: Path) -> Path:
    """A copy of an indexed SQLite database in tmp_path: a test that asks writes its own
    trace rows, while the index is built once for many tests."""
    copy = tmp_path / db.name
    shutil.copyfile(db, copy)
    return copy


def trace_rows(tmp_path: Path, db: Path) -> list[dict[str, Any]]:
    """Every trace row of the database, as `traces export --format jsonl` writes them."""
    out = tmp_path / "traces.jsonl"
    assert run("traces", "export", "--format", "jsonl", "--out", str(out), "--json",
               db=db).returncode == 0
    return [json.loads(line) for line in out.read_text().splitlines()]


def _text(stream: IO[bytes]) -> str:
    """What `subprocess.run(text=True)` returns: the locale's encoding, universal newlines."""
    stream.seek(0)
    raw = stream.read().decode(locale.getpreferredencoding(False))
    return raw.replace("\r\n", "\n").replace("\r", "\n")


class _Zygote:
    _instance: _Zygote | None = None
    _lock = threading.Lock()

    def __init__(self) -> None:
        self.environment = dict(os.environ)  # what the server's interpreter started with
        self.folder = tempfile.mkdtemp(prefix="docassist-cli-")
        self.address = os.path.join(self.folder, "zygote.sock")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.cli_zygote", self.address], cwd=REPO,
            env=self.environment, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert self.process.stdout is not None
        said = self.process.stdout.readline()
        if said not in (b"ready\n", b"threads\n"):
            raise AssertionError("the CLI fork server did not start")
        self.usable = said == b"ready\n"
        atexit.register(self.stop)

    @classmethod
    def shared(cls) -> _Zygote:
        with cls._lock:
            if cls._instance is None or (cls._instance.usable
                                         and cls._instance.process.poll() is not None):
                cls._instance = cls()
            return cls._instance

    def can_run(self, environment: dict[str, str]) -> bool:
        """False when the command's environment changes what an interpreter fixes at start
        (or when the server could not fork safely)."""
        if not self.usable:
            return False
        changed = {name for name in environment.keys() | self.environment.keys()
                   if environment.get(name) != self.environment.get(name)}
        return not any(name.startswith(INTERPRETER_SETTINGS) for name in changed)

    def stop(self) -> None:
        if self.process.stdin:
            self.process.stdin.close()  # the server leaves when its stdin closes
        self.process.wait(10)
        for name in os.listdir(self.folder):
            os.unlink(os.path.join(self.folder, name))
        os.rmdir(self.folder)

    def run(self, command: list[str], stdin: str | None, environment: dict[str, str],
            cwd: Path | str = REPO) -> subprocess.CompletedProcess[str]:
        request = json.dumps({"args": command[3:], "env": environment, "cwd": str(cwd)})
        payload = HEADER.pack(len(request.encode())) + request.encode()
        with (tempfile.TemporaryFile() as given, tempfile.TemporaryFile() as out,
              tempfile.TemporaryFile() as err,
              socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection):
            if stdin is not None:
                given.write(stdin.encode(locale.getpreferredencoding(False)))
                given.seek(0)
            connection.connect(self.address)
            source = given.fileno() if stdin is not None else 0  # None inherits ours
            socket.send_fds(connection, [payload], [source, out.fileno(), err.fileno()])
            code = self._wait(connection, command)
            if code is None:
                raise subprocess.TimeoutExpired(command, RUN_TIMEOUT, _text(out), _text(err))
            return subprocess.CompletedProcess(command, code, _text(out), _text(err))

    @staticmethod
    def _wait(connection: socket.socket, command: list[str]) -> int | None:
        """The command's exit code; None when it ran past RUN_TIMEOUT (it is then killed)."""
        connection.settimeout(RUN_TIMEOUT)
        received = b""
        try:
            while received.count(b"\n") < 2:
                chunk = connection.recv(64)
                if not chunk:
                    raise AssertionError(f"the CLI fork server lost {command}")
                received += chunk
        except TimeoutError:
            os.kill(int(received.split(b"\n")[0]), signal.SIGKILL)
            return None
        return int(received.split(b"\n")[1])
