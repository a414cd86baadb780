"""deploy/docassist.service: the install steps in its header work in the order written, and
they index documents (or add a source) as the service user, into the service's database,
before the first start (issue 42, item 5)."""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

from tests.conftest import REPO

UNIT = REPO / "deploy" / "docassist.service"
STEP = re.compile(r"^#   (sudo .*?)(?:\s+#.*)?$")


def header_steps() -> list[str]:
    """The header's commands, continuation lines joined."""
    lines = UNIT.read_text().split("\n[Unit]")[0].splitlines()
    steps: list[str] = []
    for line in lines:
        if steps and steps[-1].endswith("\\"):
            steps[-1] = steps[-1][:-1] + " " + line.lstrip("#").strip()
        elif match := STEP.match(line):
            steps.append(match.group(1))
    return steps


def test_the_secrets_steps_make_the_folder_before_the_file(tmp_path: Path) -> None:
    """Run as written, under a scratch root: `install` fails on a folder that does not
    exist, so the folder's step must come first."""
    installs = [step for step in header_steps() if step.startswith("sudo install")]
    assert installs, "no install steps in the header"
    for step in installs:
        words = [word for word in shlex.split(step.replace("/etc/", f"{tmp_path}/etc/"))
                 if word not in ("sudo", "-o", "root")]
        done = subprocess.run(words, capture_output=True, text=True, check=False)
        assert done.returncode == 0, f"{step}: {done.stderr}"
    secrets = tmp_path / "etc" / "docassist" / "secrets.env"
    assert secrets.is_file() and secrets.stat().st_mode & 0o777 == 0o600
    assert (secrets.parent.stat().st_mode & 0o777) == 0o700


def test_documents_are_indexed_as_the_service_user_into_the_services_database() -> None:
    unit = UNIT.read_text()
    [database] = re.findall(r"^Environment=DOCASSIST_DB=(\S+)$", unit, re.MULTILINE)
    steps = header_steps()
    indexing = [step for step in steps if re.search(r"docassist (index|sources add)", step)]
    assert {"index", "sources"} <= {step.split("/bin/docassist ")[1].split()[0]
                                    for step in indexing}
    for step in indexing:
        assert step.startswith("sudo -u docassist ") and f"DOCASSIST_DB={database}" in step
    enable = next(index for index, step in enumerate(steps) if "enable --now" in step)
    assert all(steps.index(step) < enable for step in indexing)  # before the first start
