"""`./scripts/chat` sets the venv up once (again only when pyproject.toml changes), says once
how to reach `docassist` afterwards, and then only starts the chat (issue 42, item 1).

The script runs for real, in a copy of its folder layout; `python3` on its PATH is a stand-in
that makes a venv whose pip only records that it ran (PyPI is an external system: the real
install is what the walkthrough does, scripts/walkthrough)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from tests.conftest import REPO

FAKE_PYTHON = """#!/usr/bin/env bash
# python3 -m venv .venv: a venv whose python records `pip install` and whose docassist echoes.
set -eu
mkdir -p .venv/bin
cat > .venv/bin/python <<'EOF'
#!/usr/bin/env bash
echo "$*" >> "$INSTALL_LOG"
printf '#!/usr/bin/env bash\\necho "docassist $*"\\n' > .venv/bin/docassist
chmod +x .venv/bin/docassist
EOF
chmod +x .venv/bin/python
"""


def launch(clone: Path, log: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{clone / 'fakebin'}:{os.environ['PATH']}",
           "INSTALL_LOG": str(log)}
    return subprocess.run(["bash", str(clone / "scripts" / "chat")], capture_output=True,
                          text=True, env=env, timeout=60, check=False)


def test_the_second_launch_installs_nothing_and_a_changed_pyproject_installs_again(
        tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    (clone / "scripts").mkdir(parents=True)
    shutil.copy(REPO / "scripts" / "chat", clone / "scripts" / "chat")
    (clone / "pyproject.toml").write_text("[project]\nname = 'docassist'\n")
    (clone / "fakebin").mkdir()
    (clone / "fakebin" / "python3").write_text(FAKE_PYTHON)
    (clone / "fakebin" / "python3").chmod(0o755)
    log = tmp_path / "installs.log"

    first = launch(clone, log)
    assert first.returncode == 0, first.stderr
    assert first.stdout == "docassist chat\n"
    assert len(log.read_text().splitlines()) == 1
    assert f"source {clone}/.venv/bin/activate" in first.stderr  # said once, how to reach it
    assert f"{clone}/.venv/bin/docassist" in first.stderr and "pipx install" in first.stderr

    second = launch(clone, log)
    assert second.returncode == 0 and second.stdout == "docassist chat\n"
    assert len(log.read_text().splitlines()) == 1  # no second install
    assert second.stderr == ""

    (clone / "pyproject.toml").write_text("[project]\nname = 'docassist'\nversion = '2'\n")
    third = launch(clone, log)
    assert third.returncode == 0 and len(log.read_text().splitlines()) == 2
