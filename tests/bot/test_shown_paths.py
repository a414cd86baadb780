"""`docs` shows each page's file as people type it here (a handbook's ids end in a hash, so
the path is how a page is found), while `docs --json` keeps the catalog's absolute path."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from docassist.cli.documents import shown_path


def test_a_path_under_this_folder_is_shown_relative(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert shown_path(str(tmp_path / "hb" / "leave.md")) == os.path.join("hb", "leave.md")


def test_a_path_under_home_starts_with_a_tilde(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    page = Path.home() / "handbook" / "leave.md"
    if page.is_relative_to(tmp_path):
        pytest.skip("home is inside the working folder here")
    assert shown_path(str(page)) == "~/handbook/leave.md"


def test_other_paths_and_a_sources_references_are_kept(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert shown_path("/srv/handbook/leave.md") == "/srv/handbook/leave.md"
    assert shown_path("confluence/HR/12345") == "confluence/HR/12345"
