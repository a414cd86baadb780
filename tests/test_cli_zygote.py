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


def test_a_forked_command_embeds_as_a_fresh_interpreter(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, db_path: Path) -> None:
    """The fork server hands each command the USE it loaded once (tests/cli_zygote.py): the
    answer, its sources and their scores are what a spawned command computes."""
    for side in ("forked", "spawned"):
        (tmp_path / side).mkdir()
        shutil.copy(db_path, tmp_path / side / "x.db")
    forked, spawned = _both(monkeypatch, "ask", "Jak odnowić certyfikat TLS?", "--json",
                            folder=tmp_path)
    assert forked[0] == spawned[0] == 0
    answers = [one_json(side[1]) for side in (forked, spawned)]
    assert answers[0]["sources"], answers[0]
    for key in ("status", "answer", "sources"):
        assert answers[0][key] == answers[1][key]
