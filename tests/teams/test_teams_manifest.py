"""The Teams app package: the manifest template matches the adapter, and the packager builds
a zip Teams accepts (ids filled in, icons of the required sizes)."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import uuid
import zipfile
from pathlib import Path
from typing import get_args

from docassist.bot.commands import TextCommandName, parse_text_command
from docassist.bot.teams.package import teams_app_id_for
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


def build(tmp_path: Path, name: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {key: value for key, value in os.environ.items()
                   if not key.startswith("DOCASSIST_TEAMS_")}
    return subprocess.run([sys.executable, "-m", "docassist", "teams-package", "--out",
                           str(tmp_path / name), *args], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60, env={**environment, **env})


def app_id_in(package: Path) -> str:
    with zipfile.ZipFile(package) as opened:
        return str(json.loads(opened.read("manifest.json"))["id"])


def test_two_builds_for_one_bot_are_one_teams_app(tmp_path: Path) -> None:
    """A rebuild updates the app in Teams instead of uploading a second one (issue 42)."""
    bot, other = str(uuid.uuid4()), str(uuid.uuid4())
    assert build(tmp_path, "a.zip", "--bot-app-id", bot).returncode == 0
    assert build(tmp_path, "b.zip", DOCASSIST_TEAMS_APP_ID=bot).returncode == 0
    assert build(tmp_path, "c.zip", "--bot-app-id", other).returncode == 0
    first = app_id_in(tmp_path / "a.zip")
    assert app_id_in(tmp_path / "b.zip") == first == teams_app_id_for(bot)
    assert app_id_in(tmp_path / "c.zip") != first
    assert uuid.UUID(first) != uuid.UUID(bot)  # the app is not the bot


def test_the_example_com_links_are_flagged_until_the_operator_sets_them(
        tmp_path: Path) -> None:
    bot = str(uuid.uuid4())
    flagged = build(tmp_path, "a.zip", "--bot-app-id", bot, "--json")
    assert flagged.returncode == 0
    report = json.loads(flagged.stdout)
    assert report["teams_app_id"] == app_id_in(tmp_path / "a.zip")
    assert [warning.split()[2] for warning in report["warnings"]] == [
        "websiteUrl", "privacyUrl", "termsOfUseUrl"]
    assert flagged.stderr.count("warning:") == 3 and "--privacy-url" in flagged.stderr
    mine = {"websiteUrl": "https://docs.acme.test/docassist",
            "privacyUrl": "https://docs.acme.test/privacy",
            "termsOfUseUrl": "https://docs.acme.test/terms"}
    clean = build(tmp_path, "b.zip", "--bot-app-id", bot, "--json",
                  "--website-url", mine["websiteUrl"],
                  DOCASSIST_TEAMS_PRIVACY_URL=mine["privacyUrl"],
                  DOCASSIST_TEAMS_TERMS_URL=mine["termsOfUseUrl"])
    assert clean.returncode == 0 and json.loads(clean.stdout)["warnings"] == []
    assert "warning" not in clean.stderr
    with zipfile.ZipFile(tmp_path / "b.zip") as package:
        developer = json.loads(package.read("manifest.json"))["developer"]
    assert {name: developer[name] for name in mine} == mine


def test_a_developer_link_that_is_not_https_is_refused_and_nothing_written(
        tmp_path: Path) -> None:
    done = build(tmp_path, "a.zip", "--bot-app-id", str(uuid.uuid4()), "--json",
                 "--terms-url", "http://docs.acme.test/terms")
    assert done.returncode == 2 and "https://" in json.loads(done.stdout)["error"]
    assert not (tmp_path / "a.zip").exists()


def test_a_manifest_template_that_does_not_exist_is_a_usage_error(tmp_path: Path) -> None:
    done = build(tmp_path, "a.zip", "--bot-app-id", str(uuid.uuid4()),
                 "--manifest", str(tmp_path / "nope.json"))
    assert done.returncode == 2 and f"no such file or folder: {tmp_path}/nope.json" in done.stderr
    assert not (tmp_path / "a.zip").exists()
