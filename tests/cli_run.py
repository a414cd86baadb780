"""The `docassist` command run as a real process, and its one JSON document."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.conftest import REPO

RUN_TIMEOUT = 60


def run(
    *args: str, db: Path | str, stdin: str | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "DOCASSIST_DB": str(db), "DOCASSIST_LANGUAGE": "en",
                   "COLUMNS": "200", **env}
    return subprocess.run([sys.executable, "-m", "docassist", *args], input=stdin,
                          capture_output=True, text=True, env=environment, cwd=REPO,
                          timeout=RUN_TIMEOUT, check=False)


def one_json(stdout: str) -> Any:
    return json.loads(stdout)  # raises unless stdout is exactly one JSON document
