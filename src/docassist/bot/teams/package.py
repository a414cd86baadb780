"""The Teams app package to sideload: `teams/manifest.json` with the ids filled in, and the two
icons Teams requires (192×192 colour, 32×32 white-on-transparent outline), zipped.

The icons are plain generated squares so a package can be built with nothing but this
repository; replace `color.png`/`outline.png` in the zip with your own artwork if you like.
"""

from __future__ import annotations

import json
import struct
import uuid
import zipfile
import zlib
from pathlib import Path
from typing import Final

COLOR_ICON_SIZE: Final = 192
OUTLINE_ICON_SIZE: Final = 32
ACCENT_RGB: Final = (0x2F, 0x5D, 0x8A)
APP_ID_PLACEHOLDER: Final = "{{TEAMS_APP_ID}}"
BOT_ID_PLACEHOLDER: Final = "{{BOT_APP_ID}}"

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
                  teams_app_id: str | None = None) -> dict[str, object]:
    """Write the zip; returns the manifest written into it."""
    uuid.UUID(bot_app_id)  # Teams rejects anything but a GUID; fail here, clearly
    text = template.read_text(encoding="utf-8")
    text = text.replace(APP_ID_PLACEHOLDER, teams_app_id or str(uuid.uuid4()))
    text = text.replace(BOT_ID_PLACEHOLDER, bot_app_id)
    manifest: dict[str, object] = json.loads(text)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as package:
        package.writestr("manifest.json", json.dumps(manifest, indent=2, ensure_ascii=False))
        package.writestr("color.png", png(COLOR_ICON_SIZE, (*ACCENT_RGB, 255)))
        package.writestr("outline.png", png(OUTLINE_ICON_SIZE, (0, 0, 0, 0),
                                            border=(255, 255, 255, 255)))
    return manifest
