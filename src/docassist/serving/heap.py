"""The cyclic garbage collector in long-running processes (a server, a turn process).

What a process loads before its first event (search indexes, the embedder, Bolt) lives as
long as the process, yet each full collection walked all of it: 95 ms in a serving process
and up to 248 ms in a turn process, measured during a 500-event burst (issue 25), every turn
and ack of that process waiting. Once warm, a process collects what is garbage and freezes
the rest (`gc.freeze`, CPython's own advice for servers), so later collections look only at
newer objects; young objects are collected less often (GC_YOUNG_ALLOCATIONS). Objects
frozen stay freed by reference counting; only a cycle among them would stay until the next
settle, which every index rebuild does (the old index's objects go back to the collector
first).
"""

from __future__ import annotations

import gc
import logging
import threading

from docassist.serving.limits import GC_YOUNG_ALLOCATIONS

logger = logging.getLogger(__name__)

_settled = threading.Event()


def settle() -> int:
    """After warm-up: collect, then keep what is left out of later collections; returns
    how many objects that is."""
    gc.unfreeze()  # what an earlier settle froze may be garbage now (a replaced index)
    gc.collect()
    gc.freeze()
    gc.set_threshold(GC_YOUNG_ALLOCATIONS, *gc.get_threshold()[1:])
    _settled.set()
    frozen = gc.get_freeze_count()
    logger.info("heap settled: %d objects kept out of the garbage collector", frozen)
    return frozen


def settle_again() -> None:
    """After something large was replaced (a search index rebuilt), in a process that
    settled: the old objects are collected, the new ones frozen."""
    if _settled.is_set():
        settle()
