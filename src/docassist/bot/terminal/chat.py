"""Terminal chat: reads lines, maps chat commands to core commands, renders results."""

from __future__ import annotations

import uuid
from collections.abc import Callable

from rich.console import Console, Group, RenderableType
from rich.style import Style
from rich.text import Text

from docassist.bot import layout
from docassist.core import i18n
from docassist.core.errors import StorageUnavailableError
from docassist.core.messages import ChatMessage, Command, ConversationKey
from docassist.core.replies import storage_problem_text
from docassist.core.results import TurnResult
from docassist.core.scopes import OPERATOR, Audience
from docassist.core.statuses import ANSWER_STATUSES, TurnStatus
from docassist.core.turn import TurnEngine

PLATFORM = "cli"
STATUS_STYLE: dict[TurnStatus, str] = {
    "answered": "green",
    "no_answer": "yellow",
    "clarification_needed": "cyan",
    "rejected": "red",
    "no_suitable_tool": "magenta",
    "handoff": "red",
    "storage_unavailable": "red",
}


def new_thread_key(thread: str | None = None) -> ConversationKey:
    return ConversationKey(platform=PLATFORM, workspace="local", channel="terminal",
                           thread=thread or uuid.uuid4().hex[:12])


SHOWN_SCORE_MIN = 0.005
"""A source's score is shown only when it would not print as 0.00: a chunk shown with its page
without a score of its own (or a retriever's near-zero score) would read as "irrelevant"."""
CODE_STYLE = "bold cyan"
_SPAN_STYLE = {"code": CODE_STYLE, "strong": "bold", "cite": "dim"}


def styled(text: str, style: str = "", numbers: layout.Numbers | None = None) -> Text:
    """Reply text for the terminal: a line per point and step, commands in colour without
    their backticks (so they copy clean), citations in `numbers` as their marker. Plain
    Text, never Rich markup: a document's `[link=…]` or `[/]` stays text."""
    out = Text(style=style)
    for index, block in enumerate(layout.parse(text, numbers)):
        if index:
            out.append("\n\n" if block.gap else "\n")
        if block.kind == "code":
            out.append(block.spans[0].text, style=CODE_STYLE)
            continue
        out.append({"point": "• ", "step": f"{block.number}. "}.get(block.kind, ""))
        for span in block.spans:
            shown = f"[{span.text}]" if span.kind == "cite" else span.text
            out.append(shown, style=_SPAN_STYLE.get(span.kind, ""))
    return out


def render_result(result: TurnResult, *, debug: bool = False,
                  answer_shown: bool = False) -> RenderableType:
    """The answer (unless it was already streamed), its sources with links, and with `debug`
    the decision and tool status."""
    style = STATUS_STYLE.get(result.status, "white")
    parts: list[RenderableType] = []
    numbers = ({} if result.status == "sources_shown"
               else layout.citation_numbers(result.answer))
    if not answer_shown:
        parts.append(styled(result.answer, style if result.status != "answered" else "",
                            numbers))
    if numbers and result.status == "answered":  # sources_shown lists them already
        label = i18n.text("sources_label", result.language)
        lines = Text()
        lines.append(f"{label}:", style="bold")
        for marker, source in layout.cited_sources(result):  # what the markers stand for
            url = layout.web_url(source.url)
            lines.append(f"\n  [{marker}] ")
            lines.append(source.chunk_id, style="dim")
            lines.append(f" {source.label()}",
                         style=Style(link=url) if url else "")
            lines.append(f" ({url})" if url else "")
            if source.score >= SHOWN_SCORE_MIN:
                lines.append(f" (score {source.score:.2f})", style="dim")
        parts.append(lines)
    if debug:  # trace codes ("unstated_money", "removed_citation:…"): for operators only
        parts.extend(Text(f"! {warning}", style="yellow") for warning in result.warnings)
        parts.append(Text(
            f"[status={result.status} decision={result.decision.status}"
            f"/{result.decision.decided_by} action={result.decision.action} "
            f"tool={result.tool.name}:{result.tool.status} code={result.tool.error_code} "
            f"standalone={result.conversation.standalone_question!r} "
            f"turn={result.generation}.{result.turn_id}]",
            style="dim",
        ))
    return Group(*parts)


class ChatSession:
    """One terminal session = one thread; `/new` starts another, `/clear` wipes this one."""

    def __init__(self, engine: TurnEngine, console: Console, language: i18n.Language,
                 feedback_sink: Callable[[str, str, bool], None] | None = None,
                 audience: Audience = OPERATOR) -> None:
        self.engine = engine
        self.audience = audience
        """The operator's: every collection unless `--collections` narrowed it."""
        self.feedback_sink = feedback_sink
        self.console = console
        self.language = language
        self.key = new_thread_key()
        self.debug = False
        self.last_result_id: str | None = None

    def run(self, read_line: Callable[[], str]) -> None:
        self.console.print(i18n.text("chat_welcome", self.language), style="bold")
        while True:
            try:
                line = read_line()
            except (EOFError, KeyboardInterrupt):
                return
            if not self.handle_line(line):
                return

    def handle_line(self, line: str) -> bool:
        """Process one line; False when the session should end."""
        stripped = line.strip()
        if stripped.startswith("/"):
            command, _, argument = stripped.partition(" ")
            return self._chat_command(command.lower(), argument.strip(), stripped)
        self._send(ChatMessage(key=self.key, user="terminal", text=line,
                                   audience=self.audience))
        return True

    def _chat_command(self, command: str, argument: str, line: str) -> bool:
        if command in ("/quit", "/exit"):
            return False
        if command in ("/help", "/?"):
            self.console.print(i18n.text("chat_help", self.language))
        elif command == "/new":
            self.key = new_thread_key()
            self.console.print(i18n.text("chat_new_thread", self.language, thread=self.key.thread))
        elif command == "/debug":
            self.debug = not self.debug
            self.console.print(i18n.text("chat_debug", self.language,
                                         state="on" if self.debug else "off"))
        elif command == "/clear":
            self._send(ChatMessage(key=self.key, user="terminal", text=line,
                                   audience=self.audience,
                                   command=Command.CLEAR))
        elif command == "/sources":
            self._send(ChatMessage(key=self.key, user="terminal", text=line,
                                   audience=self.audience,
                                   command=Command.SHOW_SOURCES))
        elif command in ("/good", "/bad"):
            self._feedback(command == "/good")
        elif command == "/meta":
            self._send(ChatMessage(key=self.key, user="terminal", text=line,
                                   audience=self.audience,
                                   command=Command.METADATA, command_argument=argument))
        else:
            self.console.print(i18n.text("chat_unknown_command", self.language,
                                         command=command), style="yellow")
        return True

    def _feedback(self, positive: bool) -> None:
        if self.last_result_id is None or self.feedback_sink is None:
            self.console.print(i18n.text("chat_no_answer_to_rate", self.language), style="yellow")
            return
        try:
            self.feedback_sink(self.last_result_id, "terminal", positive)
        except StorageUnavailableError as error:  # the session goes on; only the vote is lost
            self.console.print(storage_problem_text(error, self.language), style="red")
            return
        self.console.print(i18n.text("feedback_thanks", self.language))

    def _send(self, message: ChatMessage) -> None:
        streamed: list[str] = []
        markers = layout.CitationMarkers()

        def show(sentence: str) -> None:
            streamed.append(sentence)
            self.console.print(styled(markers.apply(sentence)))

        result = self.engine.handle(message, on_partial=show)
        if result is not None:
            # What Slack and Teams offer votes on: a thumbs-down on a greeting's reply was
            # thanked and listed among the gaps.
            if result.status in ANSWER_STATUSES:
                self.last_result_id = result.result_id
            self.console.print(render_result(result, debug=self.debug,
                                             answer_shown=bool(streamed)))
