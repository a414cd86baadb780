"""Where a training script's report says it was made."""

from __future__ import annotations

import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def commit(*outputs: Path, repo: Path = REPO) -> str:
    """The commit the run started from, marked when the tree had changes other than the
    run's own `outputs` (files, or the leading part of their paths): what a run writes is
    committed after it, so its own files say nothing about the code that wrote them."""

    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True,
                              check=False)
        return done.stdout  # not stripped: a status line starts with a space

    head = git("rev-parse", "--short", "HEAD").strip() or "unknown"
    own = [str(path.resolve().relative_to(repo.resolve())) for path in outputs]
    changed = [line[3:] for line in git("status", "--porcelain", "--untracked-files=no")
               .splitlines() if line.strip()]  # "XY path"
    other = [path for path in changed if not any(path.startswith(mine) for mine in own)]
    return f"{head} (with uncommitted changes)" if other else head
