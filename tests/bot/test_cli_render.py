"""The terminal chat shows reply text as written: a line per point, commands without their
backticks (they copy clean), and Rich markup in a document (`[link=…]`, `[/]`) as text."""

from __future__ import annotations

import io

from rich.console import Console

from docassist.bot.terminal.chat import render_result, styled
from docassist.core.results import TurnResult
from docassist.core.state import Source

CHUNK = "DOC-ZEBRA-efa55d6298-0001"


def shown(renderable: object) -> str:
    console = Console(file=io.StringIO(), width=200, color_system=None)
    console.print(renderable)
    return console.file.getvalue()  # type: ignore[attr-defined, no-any-return]


def test_points_commands_and_markup_in_documents_are_shown_as_written() -> None:
    answer = ("According to the documents:\n"
              f"• Open [link=https://evil.example]the portal[/link] now. [{CHUNK}]\n"
              f"• Run `zebra-ctl mute [/]` [{CHUNK}]")
    source = Source(chunk_id=CHUNK, document_id="DOC-ZEBRA", title="Zebra [bold]alarm",
                    version="1.0", section="Paging", score=0.5, snippet="",
                    url="javascript:alert(1)")
    result = TurnResult(result_id="r", conversation_id="c", generation=0, turn_id=1,
                        status="answered", answer=answer, language="en", sources=[source])
    assert shown(render_result(result)).splitlines() == [
        "According to the documents:",
        "• Open [link=https://evil.example]the portal[/link] now. [1]",
        "• Run zebra-ctl mute [/] [1]",
        "Sources:",
        f"  [1] {CHUNK} Zebra [bold]alarm v1.0 — Paging (score 0.50)"]  # no javascript: link
    streamed = styled(f"Run `zebra-ctl mute [/]` [{CHUNK}]")
    assert [(span.style, streamed.plain[span.start:span.end]) for span in streamed.spans] == [
        ("bold cyan", "zebra-ctl mute [/]"), ("dim", f"[{CHUNK}]")]


def test_a_source_without_an_informative_score_shows_none_and_no_hash_version() -> None:
    """Issue 42: a cited section printed "score 0.00", a versionless page its content hash."""
    scored = Source(chunk_id=CHUNK, document_id="DOC-ZEBRA", title="Zebra", version="1.0",
                    section="Paging", score=0.73, snippet="")
    unscored = Source(chunk_id="DOC-FAQ-0123456789-0002", document_id="DOC-FAQ", title="FAQ",
                      version="0123456789", section="Access", score=0.0, snippet="")
    result = TurnResult(result_id="r", conversation_id="c", generation=0, turn_id=1,
                        status="answered", language="en", sources=[scored, unscored],
                        answer=f"Page it. [{CHUNK}] Ask first. [DOC-FAQ-0123456789-0002]")
    assert shown(render_result(result)).splitlines()[-2:] == [
        f"  [1] {CHUNK} Zebra v1.0 — Paging (score 0.73)",
        "  [2] DOC-FAQ-0123456789-0002 FAQ — Access"]
