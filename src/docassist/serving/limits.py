"""Every numeric limit of a serving process: the inbox and its acks, turn processes and the
garbage collector."""

from typing import Final

TURN_PROCESS_RESTART_SECONDS: Final = (1.0, 30.0)
"""A turn process that exits is started again after the first delay, doubled per exit in a
row up to the second (one that lived TURN_PROCESS_STABLE_SECONDS starts from the first)."""

TURN_PROCESS_STABLE_SECONDS: Final = 60.0

TURN_PROCESS_START_SECONDS: Final = 60.0
"""How long the serving process waits for its first turn process to be ready before it opens
its port anyway (loading the embedder and the indexes takes seconds)."""

TURN_PROCESS_STOP_SECONDS: Final = 15.0
"""On shutdown, how long turn processes may take to finish the turns they run before they
are terminated (their events stay claimed until the lease ends, then are answered again);
below systemd's TimeoutStopSec in deploy/docassist.service."""

TURN_PROCESS_BLAS_THREADS: Final = 1
"""Threads a turn process's matrix products (numpy's BLAS) run on, for its whole life: its
turns already run on the cores in parallel. The embedder and the dense product limited
theirs to one thread around each call, but the limit is the process's and was given back at
the end of each call while other turns' products ran; a second BLAS thread then worked and
spun between products. Measured over the first 8 s of a 50-connection burst's turns (a
loaded machine): the two turn processes used 7.7–10.7 s of CPU for 683–959 model requests
with that thread (itself 1.6–3.0 s where it was timed), 5.8–6.3 s for 968–995 with one."""

GC_YOUNG_ALLOCATIONS: Final = 10_000
"""A serving or turn process collects its youngest objects after this many allocations
(CPython's default is 700): a turn keeps many objects alive for its length, so each young
collection walked them again. Measured (issue 25, two turn processes, 50-connection burst):
115 young collections taking 370 ms in all, against 5–6 taking 56–59 ms."""

ACK_WRITERS: Final = 32
"""Threads that store arriving events; a burst shares their transactions (group commit)."""

INBOX_POLL_SECONDS: Final = 0.5
"""How often an idle process looks for events it can claim (stored by another process, or
whose claim expired); its own arrivals and finished turns wake it at once."""

MAX_DELIVERY_ATTEMPTS: Final = 3
"""Times the inbox worker sends a reply before it marks the event `failed` (serving/delivery.py)."""

HELD_TURNS_REMEMBERED: Final = 1024
"""Held events whose caller has not asked `InboxWorker.took` yet, kept per process: a caller
asks as soon as its store completes; one that gave up (its ack deadline passed) never asks,
so the oldest are forgotten."""
