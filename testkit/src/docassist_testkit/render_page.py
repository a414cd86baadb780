"""Adaptive Cards rendered by Microsoft's own renderer (the `adaptivecards` npm package, with
markdown-it for TextBlock markdown as the renderer expects) in headless Chromium.

One local HTML page renders every card it is given, so one Chromium launch checks them all.
The page loads the renderer from `testkit/render/node_modules` (installed by `scripts/test`
with `npm ci` from the package.json and lock beside it) over `file://`: nothing is served,
nothing leaves the machine.
"""

from __future__ import annotations

import html
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any, Final

NPM_PACKAGE: Final = Path(__file__).resolve().parents[2] / "render"
"""testkit/render/: the npm package (package.json and its lock) the renderer comes from."""
MODULES: Final = NPM_PACKAGE / "node_modules"
RENDERER: Final = MODULES / "adaptivecards" / "dist" / "adaptivecards.min.js"
MARKDOWN: Final = MODULES / "markdown-it" / "dist" / "markdown-it.min.js"
CHROMIUM_FLAGS: Final = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                         "--no-first-run", "--disable-background-networking",
                         "--disable-component-update", "--disable-sync"]
TEAMS_LOOK: Final = """
body { font-family: 'Segoe UI', 'DejaVu Sans', sans-serif; background: #f5f5f5; margin: 0;
       padding: 16px; }
section { width: 520px; margin: 0 0 16px 0; }
section > h2 { font: 12px monospace; color: #888; margin: 0 0 4px 0; }
.card { background: #fff; border: 1px solid #e0e0e0; border-radius: 6px; margin-bottom: 8px;
        box-shadow: 0 1px 2px rgba(0, 0, 0, .08); }
.ac-pushButton { background: #fff; border: 1px solid #d1d1d1; border-radius: 4px;
                 padding: 5px 12px; font: 14px 'Segoe UI', 'DejaVu Sans', sans-serif;
                 color: #242424; }
.ac-pushButton:first-child { border-color: #5b5fc7; color: #5b5fc7; }
"""
_SCRIPT: Final = """
const cards = JSON.parse(document.getElementById('cards').textContent);
for (const [name, list] of Object.entries(cards)) {
  const section = document.createElement('section');
  section.dataset.name = name;
  const title = document.createElement('h2');
  title.textContent = name;
  section.appendChild(title);
  for (const payload of list) {
    const card = new AdaptiveCards.AdaptiveCard();
    card.parse(payload);
    const holder = document.createElement('div');
    holder.className = 'card';
    holder.appendChild(card.render());
    section.appendChild(holder);
  }
  document.body.appendChild(section);
}
document.body.dataset.rendered = 'yes';
"""


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def renderer_installed() -> bool:
    return RENDERER.is_file() and MARKDOWN.is_file()


def write_page(cards: dict[str, list[dict[str, Any]]], out: Path, *, look: bool = True) -> Path:
    """An HTML page that renders each named list of cards in its own `<section>`."""
    data = json.dumps(cards).replace("</", "<\\/")
    style = f"<style>{TEAMS_LOOK}</style>" if look else ""
    sheet = html.escape((RENDERER.parent / "adaptivecards.css").as_uri())
    out.write_text(
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<link rel='stylesheet' href='{sheet}'>"
        f"{style}"
        f"<script src='{html.escape(MARKDOWN.as_uri())}'></script>"
        f"<script src='{html.escape(RENDERER.as_uri())}'></script>"
        "</head><body>"
        f"<script type='application/json' id='cards'>{data}</script>"
        f"<script>{_SCRIPT}</script></body></html>", encoding="utf-8")
    return out


def run_chromium(browser: str, page: Path, profile: Path, *extra: str) -> str:
    """Chromium on a local page with a fresh profile; its stdout (the DOM with --dump-dom)."""
    env = {**os.environ, "HOME": str(profile)}
    done = subprocess.run(
        [browser, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *extra, page.as_uri()],
        capture_output=True, text=True, timeout=120, check=True, env=env)
    return done.stdout
