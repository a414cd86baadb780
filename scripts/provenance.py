"""Where a training script's report says it was made."""

from __future__ import annotations

import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def commit() -> str:
    """The commit the run started from, marked when the tree had changes: the files a run
    writes are committed after it, so HEAD alone would name a tree without them."""

    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True,
                              check=False)
        return done.stdout.strip()

    head = git("rev-parse", "--short", "HEAD") or "unknown"
    changed = git("status", "--porcelain", "--untracked-files=no")
    return f"{head} (with uncommitted changes)" if changed else head
