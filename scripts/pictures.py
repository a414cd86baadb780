"""The pictures in docs/, made by the product itself (run through `scripts/pictures`):

- docs/teams-answer.png: Teams answer cards from `bot/teams/cards.py` for real answers over
  the demo corpus, rendered by Microsoft's `adaptivecards` package in headless Chromium
  (the same page the card rendering test checks);
- docs/terminal-chat.png: a scripted `docassist chat` session in a real terminal (tmux),
  captured with its colours and drawn by Rich as SVG, then rendered by Chromium.

Nothing is drawn by hand; everything runs offline on this machine.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bs4 import BeautifulSoup
from rich.console import Console
from rich.text import Text

from docassist.bot.teams import cards
from docassist.core.results import TurnResult
from docassist_testkit import render_page as page

REPO = Path(__file__).resolve().parents[1]
DOCASSIST = REPO / ".venv" / "bin" / "docassist"
CARD_QUESTIONS = ("Co zrobić po zmianie konfiguracji docassist-api?",
                  "How do I renew the TLS certificate?")
CHAT_LINES = ("Co zrobić po zmianie konfiguracji docassist-api?", "Jak sprawdzić jej stan?",
              "/sources")
TERMINAL = (100, 48)
"""Columns and rows of the terminal the chat runs in."""
WIDTH = 600


def run_docassist(env: dict[str, str], *args: str) -> str:
    return subprocess.run([str(DOCASSIST), *args], env=env, capture_output=True, text=True,
                          check=True, timeout=300).stdout


def screenshot(browser: str, html: Path, out: Path, work: Path, width: int) -> None:
    """Two launches: one measures the page's height (the DOM carries it), one shoots."""
    dom = page.run_chromium(browser, html, work / "measure", f"--window-size={width},4000",
                            "--dump-dom")
    height = int(str(BeautifulSoup(dom, "html.parser").body["data-height"]))  # type: ignore[index]
    page.run_chromium(browser, html, work / "shoot", f"--window-size={width},{height}",
                      "--hide-scrollbars", f"--screenshot={out}")


MEASURE = ("<script>document.body.dataset.height = "
           "Math.ceil(document.documentElement.getBoundingClientRect().height) + 2;</script>")


def teams_picture(env: dict[str, str], browser: str, work: Path, out: Path) -> None:
    answers = [_turn_result(run_docassist(env, "ask", q, "--json")) for q in CARD_QUESTIONS]
    payload = {f"Teams · {result.conversation.original_question}": cards.render(result)
               for result in answers}
    html = page.write_page(payload, work / "cards.html")
    html.write_text(html.read_text().replace("</body>", MEASURE + "</body>"))
    screenshot(browser, html, out, work, WIDTH)


def wait_for_prompt(session: str, prompts: int, timeout: float = 120) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        # From the start of the scrollback: long answers push earlier prompts off the screen.
        screen = subprocess.run(["tmux", "capture-pane", "-p", "-S", "-", "-t", session],
                                capture_output=True, text=True, check=True).stdout
        if len(re.findall(r"^>(?: |$)", screen, re.MULTILINE)) >= prompts:
            return screen
        time.sleep(0.3)
    raise TimeoutError(f"the chat did not show prompt {prompts}")


def terminal_picture(env: dict[str, str], browser: str, work: Path, out: Path) -> None:
    session = f"docassist-pictures-{os.getpid()}"
    columns, rows = TERMINAL
    command = " ".join(shlex.quote(f"{k}={v}") for k, v in env.items()
                       if k.startswith("DOCASSIST_"))
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", str(columns),
                    "-y", str(rows), f"env TERM=xterm-256color COLORTERM=truecolor {command} "
                    f"{shlex.quote(str(DOCASSIST))} chat"], check=True)
    try:
        wait_for_prompt(session, 1)
        for number, line in enumerate(CHAT_LINES, start=2):
            subprocess.run(["tmux", "send-keys", "-t", session, "-l", line], check=True)
            subprocess.run(["tmux", "send-keys", "-t", session, "Enter"], check=True)
            wait_for_prompt(session, number)
        captured = subprocess.run(["tmux", "capture-pane", "-p", "-e", "-S", "-", "-t", session],
                                  capture_output=True, text=True, check=True).stdout
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], check=False)
    console = Console(record=True, width=columns, file=open(os.devnull, "w"))  # noqa: SIM115
    console.print(Text.from_ansi(captured.rstrip() + "\n"))
    svg = console.export_svg(title="docassist chat")
    svg = re.sub(r',\s*url\("https://[^)]*\) format\("[^"]*"\)', "", svg)  # stay offline
    html = work / "terminal.html"
    html.write_text("<!doctype html><html><head><meta charset='utf-8'><style>body{margin:0;"
                    "background:#fff} svg{display:block;width:900px}</style></head><body>"
                    f"{svg}{MEASURE}</body></html>", encoding="utf-8")
    screenshot(browser, html, out, work, 900)


def main() -> None:
    browser = page.chromium()
    if browser is None or not page.renderer_installed():
        sys.exit("needs chromium and testkit/render/node_modules (scripts/pictures installs them)")
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        env = {**os.environ, "DOCASSIST_DB": str(work / "demo.db"),
               "DOCASSIST_DOCS": str(REPO / "samples" / "docs")}
        run_docassist(env, "index", str(REPO / "samples" / "docs"))
        docs = REPO / "docs"
        docs.mkdir(exist_ok=True)
        teams_picture(env, browser, work, docs / "teams-answer.png")
        terminal_picture(env, browser, work, docs / "terminal-chat.png")
    print("wrote docs/teams-answer.png and docs/terminal-chat.png")


def _turn_result(ask_json: str) -> TurnResult:
    """`ask --json` is the TurnResult plus `citations` (what chat's markers stand for)."""
    data = json.loads(ask_json)
    data.pop("citations", None)
    return TurnResult.model_validate(data)


if __name__ == "__main__":
    main()
