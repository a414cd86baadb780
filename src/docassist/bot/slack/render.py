"""TurnResult → Slack messages (Block Kit `mrkdwn`). Long answers are split, never cut.

Every piece of text from documents or users is escaped (`&`, `<`, `>`), so `<!channel>` or a
disguised link `<https://…|label>` in a document is shown as written and pings or links
nothing; the only links are documents' catalog urls. Points and steps keep one line each,
commands are code spans or code blocks, and a long answer is split between lines.
"""

from __future__ import annotations

import re
from typing import Any, Final

from docassist.bot import layout
from docassist.core import i18n
from docassist.core.documents import DocumentInfo
from docassist.core.results import TurnResult
from docassist.core.state import Source
from docassist.core.statuses import ANSWER_STATUSES, NOTHING_TO_ACT_ON
from docassist.core.text import split_text

SECTION_TEXT_LIMIT: Final = 3000
"""Slack's limit for a section block's text."""
SECTIONS_PER_MESSAGE: Final = 40
"""Slack allows 50 blocks a message; the rest holds context and buttons."""
FALLBACK_TEXT_LIMIT: Final = 3000
CONTEXT_ELEMENTS: Final = 10
"""Slack's limit for the elements of a context block."""
HEADER_TEXT_LIMIT: Final = 150
"""Slack's limit for a header block's text."""
SHOW_SOURCES_ACTION: Final = "docassist_show_sources"
CLEAR_THREAD_ACTION: Final = "docassist_clear_thread"
CLEAR_THREAD_SHORTCUT: Final = "docassist_clear_thread_shortcut"
FEEDBACK_ACTION: Final = "docassist_feedback"
ASK_HUMAN_ACTION: Final = "docassist_ask_human"
CHOICE_ACTION_PREFIX: Final = "docassist_choice_"
"""One button per candidate under a clarification: `docassist_choice_<n>` (action ids are
unique within a block); the value is `<result id>|<reply>`."""
CHOICE_ACTION: Final = re.compile(rf"^{CHOICE_ACTION_PREFIX}\d+$")
CHOICES_BLOCK: Final = "docassist_choices"
SHARE_ACTION: Final = "docassist_share"
"""A private answer's "Share in channel" button; the value is the result id."""
BUTTON_TEXT_LIMIT: Final = 75
"""Slack's limit for a button's text."""
_FENCE: Final = "```"

Message = dict[str, Any]


def escape(text: str) -> str:
    """Slack's three control characters as entities; Slack shows them as written."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def unescape(text: str) -> str:
    """A user's message as they typed it (Slack sends `&`, `<`, `>` as entities)."""
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def link(url: str | None, label: str) -> str:
    """`label` linked to a catalog url (http or https only); otherwise the label alone."""
    target = layout.web_url(url)
    if target is None:
        return escape(label)
    safe = escape(target).replace("|", "%7C")
    return f"<{safe}|{escape(label)}>"


def _inline(spans: list[layout.Span]) -> str:
    parts = []
    for span in spans:
        if span.kind == "code":
            parts.append(f"`{escape(span.text)}`")
        elif span.kind == "strong":
            parts.append(f"*{escape(span.text)}*")
        elif span.kind == "cite":
            parts.append(f"[{escape(span.text)}]")
        else:
            parts.append(escape(span.text))
    return "".join(parts)


def _line(block: layout.Block) -> str:
    if block.kind == "code":
        return f"{_FENCE}{escape(block.spans[0].text)}{_FENCE}"
    if block.kind == "point":
        return f"• {_inline(block.spans)}"
    if block.kind == "step":
        return f"{block.number}. {_inline(block.spans)}"
    return _inline(block.spans)


def _fit(block: layout.Block, limit: int) -> list[str]:
    """A block's mrkdwn in pieces of at most `limit`; a code block stays fenced."""
    text = _line(block)
    if len(text) <= limit:
        return [text]
    if block.kind == "code":
        inner = limit - 2 * len(_FENCE)
        return [f"{_FENCE}{piece}{_FENCE}"
                for piece in split_text(escape(block.spans[0].text), inner)]
    return split_text(text, limit)


def _lines(text: str, limit: int, numbers: layout.Numbers | None = None) -> list[str]:
    """Reply text as mrkdwn lines of at most `limit` characters; a paragraph's first line
    starts with a newline (the blank line before it)."""
    lines: list[str] = []
    for block in layout.parse(text, numbers):
        pieces = _fit(block, limit - 1)  # room for the paragraph's newline
        if block.gap and lines:
            pieces[0] = "\n" + pieces[0]
        lines.extend(pieces)
    return lines


def sections(text: str, limit: int = SECTION_TEXT_LIMIT,
             numbers: layout.Numbers | None = None) -> list[str]:
    """Reply text as mrkdwn, in pieces of at most `limit` characters, cut between lines (a
    point or a step is cut only when it alone is longer than the limit); citations in
    `numbers` shown as their marker."""
    lines = _lines(text, limit, numbers)
    groups = layout.pack([len(line) for line in lines], limit)
    return ["\n".join(lines[i] for i in group).strip("\n") for group in groups] or [""]


def mrkdwn(text: str) -> str:
    """Reply text as one escaped mrkdwn string (ephemeral replies, fallback text)."""
    return "\n".join(_lines(text, max(len(text) * 5, 16))).strip("\n")


def _sources_context(result: TurnResult) -> dict[str, Any] | None:
    """The cited sources in marker order, each `[n]` resolved to its chunk id and title."""
    shown: list[tuple[int | None, Source]]
    if result.status == "sources_shown":
        shown = [(None, source) for source in result.sources]
    else:
        shown = [*layout.cited_sources(result)]
    if not shown:
        return None
    elements = []
    for number, source in shown[:CONTEXT_ELEMENTS]:
        marker = f"[{number}] " if number is not None else ""
        elements.append({"type": "mrkdwn", "text": f"{marker}`{escape(source.chunk_id)}` "
                                                   f"{link(source.url, source.label())}"})
    return {"type": "context", "elements": elements}


def _buttons(result: TurnResult) -> dict[str, Any]:
    language = result.language
    return {"type": "actions", "elements": [
        {"type": "button", "action_id": SHOW_SOURCES_ACTION, "value": "show_sources",
         "text": {"type": "plain_text", "text": i18n.text("button_show_sources", language)}},
        {"type": "button", "action_id": CLEAR_THREAD_ACTION, "value": "clear",
         "text": {"type": "plain_text", "text": i18n.text("button_clear_thread", language)}},
    ]}


def _section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def render(result: TurnResult) -> list[Message]:
    """One or more messages (`text` + `blocks`); the last carries sources and buttons."""
    numbers = ({} if result.status == "sources_shown"
               else layout.citation_numbers(result.answer))
    pieces = sections(result.answer, numbers=numbers)
    messages: list[Message] = []
    for start in range(0, len(pieces), SECTIONS_PER_MESSAGE):
        chunk = pieces[start:start + SECTIONS_PER_MESSAGE]
        messages.append({"text": " ".join(chunk)[:FALLBACK_TEXT_LIMIT],
                         "blocks": [_section(piece) for piece in chunk]})
    last = messages[-1]["blocks"]
    choices = choices_block(result)
    if choices is not None:
        last.append(choices)
    context = _sources_context(result)
    if context is not None:
        last.append(context)
    if result.status not in NOTHING_TO_ACT_ON:
        last.append(_buttons(result))
    if result.status in ANSWER_STATUSES:
        last.append(feedback_block(result))
    return messages


def choices_block(result: TurnResult) -> dict[str, Any] | None:
    """A clarification's candidates, one button each; a click answers as the words would."""
    clarification = result.clarification
    if clarification is None or not clarification.choices:
        return None
    return {"type": "actions", "block_id": CHOICES_BLOCK, "elements": [
        {"type": "button", "action_id": f"{CHOICE_ACTION_PREFIX}{index}",
         "value": f"{result.result_id}|{choice.reply}",
         "text": {"type": "plain_text", "text": choice.label[:BUTTON_TEXT_LIMIT]}}
        for index, choice in enumerate(clarification.choices)]}


def share_block(result_id: str, language: i18n.Language) -> dict[str, Any]:
    return {"type": "actions", "elements": [{
        "type": "button", "action_id": SHARE_ACTION, "value": result_id,
        "text": {"type": "plain_text", "text": i18n.text("share_button", language)}}]}


def shared(result: TurnResult, user: str) -> list[Message]:
    """A private answer as shown to the channel: the same text and cited sources, who shared
    it, and no buttons (votes and "show sources" belong to the asker's thread)."""
    messages = render(result)
    for message in messages:
        message["blocks"] = [b for b in message["blocks"]
                             if b["type"] not in ("actions", "context_actions")]
    messages[-1]["blocks"].append({"type": "context", "elements": [{
        "type": "mrkdwn", "text": i18n.text("shared_by", result.language,
                                            user=f"<@{escape(user)}>")}]})
    return messages


def catalog_message(documents: list[DocumentInfo], language: i18n.Language) -> Message:
    """`/docassist-docs`: a header and one line per document, its title linked to its
    catalog url; the text carries the same lines for notifications and clients without
    blocks."""
    header = i18n.text("docs_header", language)
    lines = [f"• `{escape(d.document_id)}` {link(d.url, d.title)}"
             + (f" (v{escape(d.own_version)})" if d.own_version else "") for d in documents]
    groups = layout.pack([len(line) for line in lines], SECTION_TEXT_LIMIT)
    blocks = [{"type": "header", "text": {"type": "plain_text",
                                          "text": header[:HEADER_TEXT_LIMIT]}}]
    blocks += [_section("\n".join(lines[i] for i in group)) for group in groups]
    return {"text": "\n".join([escape(header), *lines]), "blocks": blocks}


def prompt_title(text: str) -> str:
    """A suggested prompt's title: shown by Slack's client, never as markup."""
    return text.replace("<", "‹").replace(">", "›")


def feedback_block(result: TurnResult) -> dict[str, Any]:
    """👍/👎 on an answer; the value carries the turn's result id."""
    language = result.language
    return {"type": "context_actions", "elements": [{
        "type": "feedback_buttons", "action_id": FEEDBACK_ACTION,
        "positive_button": {"text": {"type": "plain_text",
                                     "text": i18n.text("feedback_good", language)},
                            "value": f"good:{result.result_id}"},
        "negative_button": {"text": {"type": "plain_text",
                                     "text": i18n.text("feedback_bad", language)},
                            "value": f"bad:{result.result_id}"}}]}


def ask_human_blocks(result_id: str, language: i18n.Language) -> list[dict[str, Any]]:
    return [
        _section(i18n.text("slack_ask_human_offer", language)),
        {"type": "actions", "elements": [{
            "type": "button", "action_id": ASK_HUMAN_ACTION, "value": result_id,
            "text": {"type": "plain_text", "text": i18n.text("slack_ask_human", language)}}]},
    ]
