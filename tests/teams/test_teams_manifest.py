"""The Teams app package: the manifest template matches the adapter, and the packager builds
a zip Teams accepts (ids filled in, icons of the required sizes)."""

from __future__ import annotations

import json
import struct
import subprocess
import sys
import uuid
import zipfile
from pathlib import Path
from typing import get_args

from docassist.bot.commands import TextCommandName, parse_text_command
from tests.conftest import REPO

TEMPLATE = REPO / "teams" / "manifest.json"


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_the_manifest_lists_exactly_the_adapters_commands_in_every_scope() -> None:
    manifest = json.loads(TEMPLATE.read_text(encoding="utf-8"))
    [bot] = manifest["bots"]
    assert set(bot["scopes"]) == {"personal", "team", "groupChat"}
    [commands] = bot["commandLists"]
    titles = [command["title"] for command in commands["commands"]]
    parsed = {parse_text_command(title) for title in titles}
    assert {command.name for command in parsed if command} == set(get_args(TextCommandName))
    assert manifest["icons"] == {"color": "color.png", "outline": "outline.png"}


def test_the_package_has_the_ids_and_the_icons(tmp_path: Path) -> None:
    bot_id = str(uuid.uuid4())
    out = tmp_path / "app.zip"
    done = subprocess.run([sys.executable, "-m", "docassist", "teams-package", "--out", str(out),
                           "--bot-app-id", bot_id], cwd=tmp_path, capture_output=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr.decode()
    with zipfile.ZipFile(out) as package:
        assert sorted(package.namelist()) == ["color.png", "manifest.json", "outline.png"]
        manifest = json.loads(package.read("manifest.json"))
        assert png_size(package.read("color.png")) == (192, 192)
        assert png_size(package.read("outline.png")) == (32, 32)
    assert manifest["bots"][0]["botId"] == bot_id
    uuid.UUID(manifest["id"])
    assert "{{" not in json.dumps(manifest)


def test_a_bot_id_that_is_not_a_guid_is_refused(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "docassist", "teams-package", "--out",
                           str(tmp_path / "app.zip"), "--bot-app-id", "my-bot"],
                          cwd=tmp_path, capture_output=True, timeout=60)
    assert done.returncode != 0
    assert "could not build the package" in done.stderr.decode()
    assert not (tmp_path / "app.zip").exists()
