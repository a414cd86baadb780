"""Turn processes: Slack's and Teams' turns run in processes of their own, so the process that
serves HTTP only checks, stores and acks (issue 25); Teams' expectReplies turns, whose caller
waits in its request, are the exception (bot/teams/app.py).

With turns on threads of the serving process, one GIL was shared by the ack path and up to
32 turns: acks were 7–11× a bare Bolt app's at p99, and the process never used more than one
core (docs/scaling-out.md, "Turn processes: acks never wait for turns"). A turn process is a replica
without a server: it claims events from the inbox table like any other (order per
conversation, leases, resumption after a crash are the inbox's), so nothing new
coordinates them. The serving process adds only two small pipes per child:

- its stdin carries wake-ups: a byte per stored event, so a turn starts at once instead of
  on the next poll; end of file (the serving process stopped or died) makes the child stop
  claiming, finish the turns it runs and exit;
- its stdout carries what its turns report for /metrics (`Observation`, one JSON line each),
  which the serving process replays into its own metrics.

A child that exits is started again after a delay (TURN_PROCESS_RESTART_SECONDS); its
claimed events are answered again once their lease ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from typing import IO, Annotated, Final, Literal

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from docassist.core.ports import Observer
from docassist.core.sources import SyncOutcome
from docassist.serving.limits import (
    TURN_PROCESS_RESTART_SECONDS,
    TURN_PROCESS_STABLE_SECONDS,
    TURN_PROCESS_START_SECONDS,
    TURN_PROCESS_STOP_SECONDS,
)

logger = logging.getLogger(__name__)

WAKE: Final = b"\n"
READ_BYTES: Final = 4096
TURN_WORKER_COMMAND: Final = ("-m", "docassist", "turn-worker")


class _Line(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TurnFinished(_Line):
    kind: Literal["turn_finished"] = "turn_finished"
    status: str
    decision: str
    seconds: float

    def replay(self, observer: Observer) -> None:
        observer.turn_finished(self.status, self.decision, self.seconds)


class ModelCalled(_Line):
    kind: Literal["model_called"] = "model_called"
    backend: str
    seconds: float
    failed: bool

    def replay(self, observer: Observer) -> None:
        observer.model_called(self.backend, self.seconds, self.failed)


class ModelRetried(_Line):
    kind: Literal["model_retried"] = "model_retried"
    what: str

    def replay(self, observer: Observer) -> None:
        observer.model_retried(self.what)


class RetrievalFinished(_Line):
    kind: Literal["retrieval_finished"] = "retrieval_finished"
    retriever: str
    seconds: float

    def replay(self, observer: Observer) -> None:
        observer.retrieval_finished(self.retriever, self.seconds)


class RateLimited(_Line):
    kind: Literal["rate_limited"] = "rate_limited"

    def replay(self, observer: Observer) -> None:
        observer.rate_limited()


class Ready(_Line):
    """The child has warmed its indexes and looks for work (for /readyz)."""

    kind: Literal["ready"] = "ready"

    def replay(self, observer: Observer) -> None:
        pass


Observation = Annotated[TurnFinished | ModelCalled | ModelRetried | RetrievalFinished
                        | RateLimited | Ready, Field(discriminator="kind")]
OBSERVATION: Final = TypeAdapter[Observation](Observation)


class RelayObserver:
    """A turn process's Observer: each report becomes a line for the serving process. Never
    raises (the Observer contract): a report the pipe does not take is dropped."""

    def __init__(self, out: IO[bytes]) -> None:
        self.out = out
        self._lock = threading.Lock()

    def _send(self, line: _Line) -> None:
        data = line.model_dump_json().encode("utf-8") + b"\n"
        try:
            with self._lock:
                self.out.write(data)
                self.out.flush()
        except (OSError, ValueError):  # the serving process is gone; the child stops soon
            pass

    def turn_finished(self, status: str, decision: str, seconds: float) -> None:
        self._send(TurnFinished(status=status, decision=decision, seconds=seconds))

    def model_called(self, backend: str, seconds: float, failed: bool) -> None:
        self._send(ModelCalled(backend=backend, seconds=seconds, failed=failed))

    def model_retried(self, what: str) -> None:
        self._send(ModelRetried(what=what))

    def retrieval_finished(self, retriever: str, seconds: float) -> None:
        self._send(RetrievalFinished(retriever=retriever, seconds=seconds))

    def rate_limited(self) -> None:
        self._send(RateLimited())

    def ready(self) -> None:
        self._send(Ready())

    def sync_finished(self, outcome: SyncOutcome) -> None:
        """Turn processes run no syncs (the serving process's schedule does)."""


def replay_line(line: bytes, observer: Observer) -> Observation | None:
    """One relayed line into `observer`; None (and a warning) for a line that is not one."""
    try:
        observation = OBSERVATION.validate_json(line)
    except ValidationError as error:
        logger.warning("turn process sent an unreadable report (%d bytes): %s", len(line),
                       error.errors()[0]["msg"])
        return None
    observation.replay(observer)
    return observation


class _Child:
    """One turn process slot: the running process (or None between restarts)."""

    def __init__(self, index: int) -> None:
        self.index = index
        self.process: subprocess.Popen[bytes] | None = None
        self.ready = False
        """It said `Ready` and has not exited since."""
        self.failures = 0


class TurnProcesses:
    """The serving process's side: start `count` children running `command`, wake them when
    an event is stored, replay their reports into `observer`, restart one that exits."""

    def __init__(self, count: int, command: Sequence[str], observer: Observer) -> None:
        self.count = count
        self.command = list(command)
        self.observer = observer
        self._children = [_Child(index) for index in range(count)]
        self._next_wake = 0
        self._closing = threading.Event()
        self._changed = threading.Condition()
        self._threads: list[threading.Thread] = []

    def start(self) -> None:
        for child in self._children:
            thread = threading.Thread(target=self._supervise, args=(child,), daemon=True,
                                      name=f"turn-process-{child.index}")
            self._threads.append(thread)
            thread.start()

    def ready(self) -> int:
        """Children that said they are ready and are alive (for /readyz)."""
        return sum(1 for child in self._children if child.ready
                   and child.process is not None and child.process.poll() is None)

    def wake(self) -> None:
        """An event was stored: the next child in turn looks for work now and claims it if
        it has room (one whose model requests queue leaves it to the others' next look: a
        finished turn, or the next wake-up). Waking every child made each of them run a claim
        per event, and their claims competed with the ack path's commits for the write
        lock. A child being started again is passed over. Never blocks."""
        first = self._next_wake = (self._next_wake + 1) % len(self._children)  # racy: harmless
        for step in range(len(self._children)):
            process = self._children[(first + step) % len(self._children)].process
            if process is None or process.stdin is None:
                continue
            try:
                os.write(process.stdin.fileno(), WAKE)
            except BlockingIOError:
                return  # a full pipe: it holds a wake-up already
            except (OSError, ValueError):
                continue  # gone: it is being started again
            return

    def _spawn(self) -> subprocess.Popen[bytes]:
        # The environment (settings, secrets) is inherited; stderr is the server's.
        process = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert process.stdin is not None
        os.set_blocking(process.stdin.fileno(), False)
        return process

    def _supervise(self, child: _Child) -> None:
        delay, longest = TURN_PROCESS_RESTART_SECONDS
        while not self._closing.is_set():
            started = time.monotonic()
            try:
                child.process = process = self._spawn()
            except OSError as error:
                logger.error("turn process %d could not start: %s", child.index, error)
                process = None
            if process is not None:
                self._relay(child, process)
                child.ready = False
                code = process.wait()
                if self._closing.is_set():
                    return
                logger.error("turn process %d (pid %d) exited with %s; starting it again",
                             child.index, process.pid, code)
            if time.monotonic() - started >= TURN_PROCESS_STABLE_SECONDS:
                child.failures = 0
            child.failures += 1
            if self._closing.wait(min(longest, delay * 2 ** (child.failures - 1))):
                return

    def _relay(self, child: _Child, process: subprocess.Popen[bytes]) -> None:
        """Replay the child's reports until its stdout ends (it exited)."""
        assert process.stdout is not None
        for line in process.stdout:
            if line.strip() and isinstance(replay_line(line, self.observer), Ready):
                with self._changed:
                    child.ready = True
                    self._changed.notify_all()

    def wait_ready(self, seconds: float = TURN_PROCESS_START_SECONDS) -> bool:
        """Block until every child is ready, or `seconds` pass (the server opens anyway:
        events wait in the inbox, and /readyz says how many are ready)."""
        with self._changed:
            ready = self._changed.wait_for(lambda: self.ready() >= self.count, timeout=seconds)
        if not ready:
            logger.error("%d of %d turn processes ready after %g s; serving anyway",
                         self.ready(), self.count, seconds)
        return ready

    def stop_with(self, app: web.Application) -> None:
        """Stop when `app` shuts down."""
        async def stop(_app: web.Application) -> None:
            await asyncio.get_running_loop().run_in_executor(None, self.close)

        app.on_cleanup.append(stop)

    def close(self, timeout: float = TURN_PROCESS_STOP_SECONDS) -> None:
        """Stop: each child finishes the turns it runs (its stdin ends), within `timeout`;
        then it is terminated (its events are answered again after their lease)."""
        self._closing.set()
        processes = [child.process for child in self._children if child.process is not None]
        for process in processes:
            if process.stdin is not None:
                with contextlib.suppress(OSError):
                    process.stdin.close()
        deadline = time.monotonic() + timeout
        for process in processes:
            try:
                process.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                logger.warning("turn process %d did not stop in %g s; terminating it",
                               process.pid, timeout)
                process.terminate()
                process.wait(5)
        for thread in self._threads:
            thread.join(timeout=5)


def turn_processes_for(count: int, platforms: Sequence[str],
                       observer: Observer) -> TurnProcesses | None:
    """`count` children answering `platforms`' events for this replica (None for 0)."""
    if not count or not platforms:
        return None
    return TurnProcesses(count, [sys.executable, *TURN_WORKER_COMMAND, "--platforms",
                                 ",".join(platforms)], observer)


# --- the child's side ------------------------------------------------------------------


class _Stop(Exception):
    """SIGTERM in a turn process: stop like at the end of its stdin."""


def _stop(_signal: int, _frame: object) -> None:
    raise _Stop


TASKS: Final = "/proc/self/task"
"""One entry per thread of this process (Linux)."""


def lower_priority(increment: int, tasks: str = TASKS) -> None:
    """Lower this process's CPU priority by `increment` (a nice increment, at most to 19), for
    every thread it has. On Linux a nice value belongs to a thread: `os.nice` changes the
    caller's alone, and a thread started before it keeps the priority it had. OpenBLAS starts
    its worker thread when numpy is imported, before a turn process lowers its priority, so
    that worker ran at the serving process's priority, beside its acks: in a 50-connection
    burst it used 0.09–0.38 s of CPU in 0.8 s (it spins between products) while the serving
    process's event loop waited 0.14–0.22 s for a core (docs/acks-and-capacity-history.md,
    4 December). A thread started later takes the priority of the thread that starts it.
    Where threads have no entry of their own (no `tasks` folder), `os.nice` sets the
    process's."""
    if increment <= 0:
        return
    if not os.path.isdir(tasks):
        os.nice(increment)
        return
    lowered: set[int] = set()
    while True:  # again, for a thread started meanwhile by one not lowered yet
        threads = {int(name) for name in os.listdir(tasks)} - lowered
        if not threads:
            return
        for thread in threads:
            try:
                nice = os.getpriority(os.PRIO_PROCESS, thread)
                os.setpriority(os.PRIO_PROCESS, thread, min(19, nice + increment))
            except ProcessLookupError:  # it ended meanwhile
                pass
        lowered |= threads


def limit_blas_threads(threads: int) -> None:
    """From now on, this process's BLAS (numpy's, loaded here if it is not yet) runs its
    products on at most `threads` threads. A limit set around one call (the embedder's, the
    dense product's) gives back the value it found, so it keeps this one."""
    import numpy  # noqa: F401  (its BLAS library must be loaded for the limit to find it)
    from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]

    threadpool_limits(limits=threads, user_api="blas")


def turn_process_holder() -> str:
    """A turn process's claims name its serving process (host:pid), then itself."""
    return f"{socket.gethostname()}:{os.getppid()}:turns-{os.getpid()}:{uuid.uuid4().hex[:8]}"


def relay_output() -> IO[bytes]:
    """The stream reports go to (this process's stdout as it was started); from now on
    anything else written to stdout goes to stderr, so the relay carries reports only."""
    out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    return out


def wait_for_wakeups(wake: Callable[[], None], wakeups: int | None = None) -> None:
    """Call `wake` for each read from stdin (a burst of wake-ups is one read) until it ends
    or SIGTERM arrives; Ctrl-C is left to the serving process, which closes stdin."""
    fd = sys.stdin.fileno() if wakeups is None else wakeups
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _stop)
    try:
        while os.read(fd, READ_BYTES):
            wake()
    except _Stop:
        logger.info("turn process %d stopping (SIGTERM)", os.getpid())
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
