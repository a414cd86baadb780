"""The commit a generated page or a training report names (`evaluation.pages.commit`): marked
only for changes other than the files the run itself wrote."""

from __future__ import annotations

import subprocess
from pathlib import Path

from docassist.evaluation.pages import commit


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
                          cwd=repo, check=True, capture_output=True, text=True).stdout


def _repo(tmp_path: Path) -> Path:
    (tmp_path / "weights").mkdir()
    (tmp_path / "weights" / "model.bin").write_text("old")
    (tmp_path / "report.md").write_text("old")
    (tmp_path / "code.py").write_text("old")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-q", "-m", "start")
    return tmp_path


def test_the_runs_own_outputs_do_not_mark_the_commit(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    head = _git(repo, "rev-parse", "--short", "HEAD").strip()
    (repo / "weights" / "model.bin").write_text("new")
    (repo / "report.md").write_text("new")
    assert commit(repo, own=(repo / "weights", repo / "report.md")) == head


def test_other_changes_mark_the_commit(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    head = _git(repo, "rev-parse", "--short", "HEAD").strip()
    (repo / "code.py").write_text("new")  # the first status line: " M code.py"
    (repo / "report.md").write_text("new")
    assert commit(repo, own=(repo / "report.md",)) == f"{head} (with uncommitted changes)"
    assert commit(repo) == f"{head} (with uncommitted changes)"


def test_code_outside_any_checkout_names_no_commit(tmp_path: Path) -> None:
    assert commit(tmp_path) == "unknown"
