"""DOCASSIST_LOG_LEVEL: every DocAssist process (a server and its turn processes) logs at the
level the operator set, plain or JSON; a value that is not a level is refused before
anything runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_run import run
from tests.conftest import REPO

PROBE = ("import logging, sys; from docassist.logs import configure_logging; "
         "configure_logging(); root = logging.getLogger(); "
         "logging.getLogger('docassist.probe').debug('probe at debug'); "
         "print(logging.getLevelName(root.level), logging.getLogger('httpx').level)")


def probe(**env: str) -> subprocess.CompletedProcess[str]:
    clean = {name: value for name, value in os.environ.items()
             if not name.startswith("DOCASSIST_")}
    return subprocess.run([sys.executable, "-c", PROBE], env={**clean, **env}, cwd=REPO,
                          capture_output=True, text=True, timeout=60, check=True)


@pytest.mark.parametrize(("env", "level", "debug_line"), [
    ({}, "WARNING", False),  # Python's default, untouched
    ({"DOCASSIST_LOG_LEVEL": "debug"}, "DEBUG", True),
    ({"DOCASSIST_LOG_FORMAT": "json"}, "INFO", False),
    ({"DOCASSIST_LOG_FORMAT": "json", "DOCASSIST_LOG_LEVEL": "DEBUG"}, "DEBUG", True),
])
def test_the_level_applies_to_plain_and_json_logs(env: dict[str, str], level: str,
                                                  debug_line: bool) -> None:
    done = probe(**env)
    assert done.stdout.split()[0] == level
    assert ("probe at debug" in done.stderr) is debug_line
    if env.get("DOCASSIST_LOG_FORMAT") == "json" and debug_line:
        [line] = [json.loads(text) for text in done.stderr.splitlines() if text.strip()]
        assert line["level"] == "debug" and line["logger"] == "docassist.probe"


SECRET_PROBE = (
    "import logging; from docassist.logs import configure_logging; configure_logging(); "
    "log = logging.getLogger('docassist.probe'); log.warning('sent xoxb-probe-secret-1');\n"
    "try:\n    raise RuntimeError('refused: xoxb-probe-secret-1')\n"
    "except RuntimeError:\n    log.exception('failed')")


@pytest.mark.parametrize("env", [{}, {"DOCASSIST_LOG_LEVEL": "INFO"},
                                 {"DOCASSIST_LOG_FORMAT": "json"}],
                         ids=["plain default", "plain at a level", "json"])
def test_secret_values_never_reach_a_log_line(env: dict[str, str]) -> None:
    clean = {name: value for name, value in os.environ.items()
             if not name.startswith("DOCASSIST_")}
    done = subprocess.run([sys.executable, "-c", SECRET_PROBE], cwd=REPO,
                          env={**clean, **env, "SLACK_BOT_TOKEN": "xoxb-probe-secret-1"},
                          capture_output=True, text=True, timeout=60, check=True)
    assert "xoxb-probe-secret-1" not in done.stderr
    assert done.stderr.count("[redacted]") >= 2  # the warning and the traceback
    assert "RuntimeError" in done.stderr  # the traceback is there, only the value is not


def test_a_level_that_is_not_one_is_refused_before_anything_runs(tmp_path: Path) -> None:
    db = tmp_path / "never.db"
    done = run("docs", "--json", db=db, DOCASSIST_LOG_LEVEL="verbose")
    assert done.returncode == 2
    assert done.stdout == ""
    assert "DOCASSIST_LOG_LEVEL='verbose' is not a log level" in done.stderr
    assert "DEBUG, INFO, WARNING, ERROR" in done.stderr and "Traceback" not in done.stderr
    assert not db.exists()  # no store was opened
