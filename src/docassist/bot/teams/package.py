"""The Teams app package to sideload: `teams/manifest.json` with the ids filled in, and the two
icons Teams requires (192×192 colour, 32×32 white-on-transparent outline), zipped.

The icons are plain generated squares so a package can be built with nothing but this
repository; replace `color.png`/`outline.png` in the zip with your own artwork if you like.

The Teams app id is derived from the bot id (a UUIDv5), so a rebuild for the same bot is the
same app in Teams (an update), never a second app; no state file and no flag to remember.
The developer links (website, privacy, terms) Teams shows in the app's details are the
operator's to give: while they point at the template's example.com, the package says so.
"""

from __future__ import annotations

import json
import struct
import uuid
import zipfile
import zlib
from pathlib import Path
from typing import Final
from urllib.parse import urlsplit

COLOR_ICON_SIZE: Final = 192
OUTLINE_ICON_SIZE: Final = 32
ACCENT_RGB: Final = (0x2F, 0x5D, 0x8A)
APP_ID_PLACEHOLDER: Final = "{{TEAMS_APP_ID}}"
BOT_ID_PLACEHOLDER: Final = "{{BOT_APP_ID}}"
TEAMS_APP_NAMESPACE: Final = uuid.UUID("91eca9dc-7d2f-4599-a04c-e3736977a181")
"""The namespace of Teams app ids. Never change it: every operator's next build would become
a new app in Teams."""
DEVELOPER_URLS: Final = ("websiteUrl", "privacyUrl", "termsOfUseUrl")
PLACEHOLDER_HOST: Final = "example.com"


def teams_app_id_for(bot_app_id: str) -> str:
    """The Teams app id of the package for this bot: the same for every build."""
    return str(uuid.uuid5(TEAMS_APP_NAMESPACE, str(uuid.UUID(bot_app_id))))


def placeholder_urls(manifest: dict[str, object]) -> list[str]:
    """The developer links still at the template's example.com (names as in the manifest)."""
    developer = manifest.get("developer")
    links = developer if isinstance(developer, dict) else {}
    hosts = {name: urlsplit(str(links.get(name, ""))).hostname or "" for name in DEVELOPER_URLS}
    return [name for name, host in hosts.items()
            if host == PLACEHOLDER_HOST or host.endswith("." + PLACEHOLDER_HOST)]

Pixel = tuple[int, int, int, int]


def png(size: int, pixel: Pixel, border: Pixel | None = None) -> bytes:
    """A square RGBA PNG of one colour (with a one-pixel `border` if given)."""
    rows = []
    for y in range(size):
        row = bytearray([0])  # filter type: none
        for x in range(size):
            edge = border is not None and (x in (0, size - 1) or y in (0, size - 1))
            row.extend(border if edge and border is not None else pixel)
        rows.append(bytes(row))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    header = struct.pack(">IIBBBBB", size, size, 8, 6, 0, 0, 0)  # 8-bit RGBA
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(b"".join(rows))) + chunk(b"IEND", b""))


def build_package(template: Path, out: Path, bot_app_id: str,
                  teams_app_id: str | None = None,
                  developer_urls: dict[str, str] | None = None) -> dict[str, object]:
    """Write the zip; returns the manifest written into it. `developer_urls` (by manifest
    name: websiteUrl, privacyUrl, termsOfUseUrl) replace the template's links."""
    uuid.UUID(bot_app_id)  # Teams rejects anything but a GUID; fail here, clearly
    text = template.read_text(encoding="utf-8")
    text = text.replace(APP_ID_PLACEHOLDER, teams_app_id or teams_app_id_for(bot_app_id))
    text = text.replace(BOT_ID_PLACEHOLDER, bot_app_id)
    manifest: dict[str, object] = json.loads(text)
    developer = manifest.get("developer")
    if developer_urls and isinstance(developer, dict):
        developer.update(developer_urls)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as package:
        package.writestr("manifest.json", json.dumps(manifest, indent=2, ensure_ascii=False))
        package.writestr("color.png", png(COLOR_ICON_SIZE, (*ACCENT_RGB, 255)))
        package.writestr("outline.png", png(OUTLINE_ICON_SIZE, (0, 0, 0, 0),
                                            border=(255, 255, 255, 255)))
    return manifest
