"""README is the front door (at most 300 lines) and every relative link in it and in docs/
leads to a file that exists (pages moved out of README must not leave dead links)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

README_MAX_LINES = 300
_LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)|<img src=\"([^\"]+)\"")


def _relative_links(page: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.DOTALL)
    text = re.sub(r"`[^`\n]*`", "", text)  # code spans show links, they are not links
    found = [a or b for a, b in _LINK.findall(text)]
    return [link for link in found if not re.match(r"^[a-z]+:", link)]


def test_readme_is_a_front_door() -> None:
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES
    assert any("./scripts/chat" in line for line in lines)
    assert any("./scripts/test" in line for line in lines)


def test_every_relative_link_in_readme_and_docs_resolves() -> None:
    pages = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
    dead = [f"{page.relative_to(REPO)} → {link}" for page in pages
            for link in _relative_links(page) if not (page.parent / link).exists()]
    assert dead == []


def test_the_documentation_site_builds_strictly(tmp_path: Path) -> None:
    """mkdocs.yml's navigation names every page and no link is broken (`--strict`)."""
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=REPO, capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "operator" / "install" / "index.html").exists()
