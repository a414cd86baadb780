"""heap.py, in a process of its own (the collector's state is the whole process's): what
settle freezes is left alone by collections until the next settle, which collects what
became garbage since; young objects are collected after GC_YOUNG_ALLOCATIONS."""

from __future__ import annotations

import json
import subprocess
import sys

PROGRAM = """
import gc, json, weakref
from docassist.serving import heap
from docassist.serving.limits import GC_YOUNG_ALLOCATIONS

class Node:
    pass

def cycle():
    a, b = Node(), Node()
    a.other, b.other = b, a
    return a

before = heap.settle_again() or gc.get_freeze_count()  # nothing settled yet: nothing frozen
old = cycle()
old_ref = weakref.ref(old)
frozen = heap.settle()
del old
gc.collect()
kept_while_frozen = old_ref() is not None
young = cycle()
young_ref = weakref.ref(young)
del young
gc.collect()
heap.settle_again()
print(json.dumps({"before": before, "frozen": frozen, "kept": kept_while_frozen,
                  "young_collected": young_ref() is None, "old_collected": old_ref() is None,
                  "threshold": gc.get_threshold()[0], "expected": GC_YOUNG_ALLOCATIONS}))
"""


def test_settle_freezes_what_is_loaded_and_the_next_settle_collects_what_died() -> None:
    done = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True,
                          check=True, timeout=120)
    seen = json.loads(done.stdout)
    assert seen["before"] == 0
    assert seen["frozen"] > 1000  # the interpreter and what the import loaded
    assert seen["kept"]  # a frozen cycle outlives a collection...
    assert seen["old_collected"]  # ...until settle_again gives it back to the collector
    assert seen["young_collected"]  # what came after the freeze is collected as usual
    assert seen["threshold"] == seen["expected"] != 700
