"""tests/cli_run.py's fork server gives a CLI test what a fresh `python -m docassist` gives:
the same exit code, stdout and stderr, stdin read as a file, its own process."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.cli_run import one_json, run


def _both(monkeypatch: pytest.MonkeyPatch, *args: str, folder: Path,
          stdin: str | None = None) -> tuple[tuple[int, str, str], tuple[int, str, str]]:
    """The command forked, then spawned; each on a database of its own (the same state)."""
    forked = run(*args, db=folder / "forked" / "x.db", stdin=stdin)
    with monkeypatch.context() as spawning:
        spawning.setenv("TESTS_CLI_SPAWN", "1")
        spawned = run(*args, db=folder / "spawned" / "x.db", stdin=stdin)
    return ((forked.returncode, forked.stdout, forked.stderr),
            (spawned.returncode, spawned.stdout, spawned.stderr))


def test_a_refused_argument_exits_the_same_way(monkeypatch: pytest.MonkeyPatch,
                                               tmp_path: Path) -> None:
    forked, spawned = _both(monkeypatch, "traces", "purge", "--older-than", "ninety days",
                            "--json", folder=tmp_path)
    assert forked == spawned
    code, stdout, _ = forked
    assert code == 2 and "not a duration" in one_json(stdout)["error"]


def test_usage_errors_and_stdin_match_a_fresh_interpreter(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, db_path: Path) -> None:
    forked, spawned = _both(monkeypatch, "no-such-command", folder=tmp_path)
    assert forked == spawned and forked[0] == 2
    assert "python -m docassist" in forked[2]
    for side in ("forked", "spawned"):  # the indexed demo corpus (no indexing on start)
        (tmp_path / side).mkdir()
        shutil.copy(db_path, tmp_path / side / "x.db")
    quit_at_once = _both(monkeypatch, "chat", folder=tmp_path, stdin="/sources\n/quit\n")
    assert quit_at_once[0] == quit_at_once[1]
    assert "no answer from the documents yet" in quit_at_once[0][1]
