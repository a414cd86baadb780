"""TurnResult → Teams messages: Adaptive Cards with the answer, its chunk-id citations, the
cited sources (linked where the document has a catalog url), and the actions.

Written for what Teams shows (learn.microsoft.com, "Format cards in Teams"): a single `\n`
is no line break in a TextBlock, lists need their own syntax, and there is no preformatted
text. So every line of prose, point and numbered step is its own RichTextBlock (its
citation inside it), commands are monospace runs, and a long answer is cut between points,
never inside one. Reply text goes only into TextRuns, which Adaptive Cards never read as
markdown: a document's `[label](url)` or `**` stays text; links come from catalog urls.

Card actions are `Action.Submit`: Teams sends them back as a message activity whose `value`
is the action's `data`, in the same conversation (and channel thread) as the card.
"""

from __future__ import annotations

from typing import Any, Final

from docassist.bot import layout
from docassist.core import i18n
from docassist.core.documents import DocumentInfo
from docassist.core.feedback import FEEDBACK_REASONS, reason_label
from docassist.core.limits import MAX_FEEDBACK_TEXT_CHARS
from docassist.core.results import TurnResult
from docassist.core.sources import SourceStatus, describe_sources
from docassist.core.statuses import ANSWER_STATUSES, NOTHING_TO_ACT_ON
from docassist.core.text import split_text
from docassist.storage.exports import ActivitySummary

CARD_CONTENT_TYPE: Final = "application/vnd.microsoft.card.adaptive"
CARD_SCHEMA: Final = "http://adaptivecards.io/schemas/adaptive-card.json"
CARD_VERSION: Final = "1.5"
CARD_TEXT_LIMIT: Final = 12_000
"""Characters of answer per card; Teams refuses messages over about 28 KB."""
MAX_SOURCES_SHOWN: Final = 10
ACTION_KEY: Final = "docassist"
"""The key in `Action.Submit` data that marks our own card actions."""
SHOW_SOURCES: Final = "show_sources"
CLEAR_THREAD: Final = "clear"
FEEDBACK: Final = "feedback"
ASK_HUMAN: Final = "ask_human"
FEEDBACK_REASON: Final = "feedback_reason"
"""The 👎 card's submit: data `{docassist: feedback_reason, result_id}` plus its inputs."""
REASON_INPUT: Final = "reason"
REASON_TEXT_INPUT: Final = "reason_text"
CHOICE: Final = "choice"
ASK_AGAIN: Final = "ask_again"
"""A stale-answer note's action (stale.py); its data carries the note id as `note`."""
"""A clarification's candidate: data `{docassist: choice, result_id, reply}`."""

Card = dict[str, Any]


def attachment(card: Card) -> dict[str, Any]:
    return {"contentType": CARD_CONTENT_TYPE, "content": card}


def card(body: list[dict[str, Any]], actions: list[dict[str, Any]] | None = None) -> Card:
    content: Card = {"type": "AdaptiveCard", "$schema": CARD_SCHEMA, "version": CARD_VERSION,
                     "body": body}
    if actions:
        content["actions"] = actions
    return content


def text_block(text: str, **style: Any) -> dict[str, Any]:
    """Our own fixed words (labels, headers); never document or user text, which Teams
    would read as markdown in a TextBlock."""
    return {"type": "TextBlock", "text": text, "wrap": True, **style}


def _run(text: str, **style: Any) -> dict[str, Any]:
    """A TextRun: Adaptive Cards never read markdown in one, so document text stays text."""
    return {"type": "TextRun", "text": text, **style}


def _rich(inlines: list[dict[str, Any]], **style: Any) -> dict[str, Any]:
    return {"type": "RichTextBlock", "inlines": inlines, **style}


def _link(text: str, url: str | None, **style: Any) -> dict[str, Any]:
    """A run linked to a catalog url (http or https only)."""
    target = layout.web_url(url)
    if target is None:
        return _run(text, **style)
    return _run(text, selectAction={"type": "Action.OpenUrl", "url": target}, **style)


Links = dict[str, str | None]
"""Chunk id → its document's catalog url: a citation links there."""


def _inlines(spans: list[layout.Span], links: Links) -> list[dict[str, Any]]:
    runs = []
    for span in spans:
        if span.kind == "code":
            runs.append(_run(span.text, fontType="Monospace"))
        elif span.kind == "strong":
            runs.append(_run(span.text, weight="Bolder"))
        elif span.kind == "cite":
            runs.append(_link(f"[{span.text}]", links.get(span.target), isSubtle=True,
                              size="Small"))
        else:
            runs.append(_run(span.text))
    return runs


def _elements(block: layout.Block, first: bool, links: Links) -> list[dict[str, Any]]:
    """One block as card elements: a RichTextBlock per line of prose, point or step (a
    citation stays inside its step); a code block as monospace lines."""
    spacing = "None" if first else "Medium" if block.gap else "Small"
    if block.kind == "code":
        lines = block.spans[0].text.split("\n")
        return [_rich([_run(_keep_indent(line) or " ", fontType="Monospace")],
                      spacing=spacing if index == 0 else "None")
                for index, line in enumerate(lines)]
    marker = {"point": "•\u00a0", "step": f"{block.number}.\u00a0"}.get(block.kind)
    inlines = ([_run(marker)] if marker else []) + _inlines(block.spans, links)
    return [_rich(inlines, spacing=spacing)]


def _keep_indent(line: str) -> str:
    """Leading spaces as no-break spaces: HTML renderers would collapse them."""
    stripped = line.lstrip(" ")
    return "\u00a0" * (len(line) - len(stripped)) + stripped


def element_text(element: dict[str, Any]) -> str:
    """What an element shows, as plain text (card size, tests)."""
    if element.get("type") == "RichTextBlock":
        return "".join(str(run.get("text", "")) for run in element.get("inlines", []))
    return str(element.get("text", ""))


def _split_block(block: layout.Block, limit: int) -> list[layout.Block]:
    """A block longer than a card, in pieces (the rare giant paragraph); others whole."""
    if len(block.text) <= limit or block.kind == "code":
        return [block]
    pieces = split_text(block.text, limit)
    return [layout.Block(block.kind if index == 0 else "line", layout.spans(piece),
                         block.number, block.gap and index == 0)
            for index, piece in enumerate(pieces)]


def answer_bodies(text: str, limit: int = CARD_TEXT_LIMIT, links: Links | None = None,
                  numbers: layout.Numbers | None = None) -> list[list[dict[str, Any]]]:
    """The card bodies of a reply: whole points and steps per card, cut between them;
    citations in `numbers` shown as their marker."""
    blocks = [piece for block in layout.parse(text, numbers)
              for piece in _split_block(block, limit)]
    groups = [_elements(block, index == 0, links or {}) for index, block in enumerate(blocks)]
    sizes = [sum(len(element_text(e)) + 1 for e in group) - 1 for group in groups]
    bodies = []
    for part in layout.pack(sizes, limit):
        body = [element for index in part for element in groups[index]]
        if body:
            body[0] = {**body[0], "spacing": "None"}
        bodies.append(body)
    return bodies or [[text_block("")]]


def _sources_blocks(result: TurnResult) -> list[dict[str, Any]]:
    """The cited sources in marker order, each `[n]` resolved to its chunk id and title."""
    shown = layout.cited_sources(result)
    if not shown:
        return []
    lines = []
    for number, source in shown[:MAX_SOURCES_SHOWN]:
        title = source.label()
        lines.append(_rich([_run(f"[{number}]\u00a0"),
                            _run(source.chunk_id, fontType="Monospace"),
                            _run(" "), _link(title, source.url)],
                           spacing="None"))
    for line in lines:
        for run in line["inlines"]:
            run.update(size="Small", isSubtle=True)
    return [text_block(i18n.text("sources_label", result.language), weight="Bolder",
                       spacing="Medium"), *lines]


def _submit(title: str, **data: str) -> dict[str, Any]:
    return {"type": "Action.Submit", "title": title, "data": {ACTION_KEY: data.pop("action"),
                                                              **data}}


def _action_rows(result: TurnResult) -> list[list[dict[str, Any]]]:
    """Two buttons a row: four in one row are cut to "Pokaż źró…" on a phone (and in
    Teams' narrow panes); two fit."""
    language = result.language
    rows = _choice_rows(result)
    if result.status not in NOTHING_TO_ACT_ON:
        rows.append([
            _submit(i18n.text("button_show_sources", language), action=SHOW_SOURCES),
            _submit(i18n.text("button_clear_thread", language), action=CLEAR_THREAD)])
    if result.status in ANSWER_STATUSES:
        rows.append([
            _submit(i18n.text("feedback_good", language), action=FEEDBACK, verdict="good",
                    result_id=result.result_id),
            _submit(i18n.text("feedback_bad", language), action=FEEDBACK, verdict="bad",
                    result_id=result.result_id)])
    return rows


def _choice_rows(result: TurnResult) -> list[list[dict[str, Any]]]:
    """A clarification's candidates as card actions, two a row; a click answers as the
    words would."""
    clarification = result.clarification
    if clarification is None:
        return []
    buttons = [_submit(choice.label, action=CHOICE, result_id=result.result_id,
                       reply=choice.reply) for choice in clarification.choices]
    return [buttons[start:start + 2] for start in range(0, len(buttons), 2)]


def actions(content: Card) -> list[dict[str, Any]]:
    """Every action of a card: its own and those of its ActionSets, in order."""
    found = list(content.get("actions", []))
    for element in content.get("body", []):
        if element.get("type") == "ActionSet":
            found.extend(element.get("actions", []))
    return found


def render(result: TurnResult) -> list[Card]:
    """One or more cards; the last carries the sources and the buttons."""
    links = {source.chunk_id: source.url for source in result.sources}
    numbers = ({} if result.status == "sources_shown"
               else layout.citation_numbers(result.answer))
    cards = [card(body) for body in answer_bodies(result.answer, links=links,
                                                  numbers=numbers)]
    last = cards[-1]["body"]
    if result.status != "sources_shown":  # there the answer is the list, its ids linked
        last.extend(_sources_blocks(result))
    for index, row in enumerate(_action_rows(result)):
        last.append({"type": "ActionSet", "actions": row,
                     "spacing": "Medium" if index == 0 else "Small"})
    return cards


def feedback_reason_card(result_id: str, language: i18n.Language) -> Card:
    """After a 👎: thanks, and why (a choice and optional words), sent back with the answer's
    result id."""
    choices = [{"title": reason_label(reason, language), "value": reason}
               for reason in FEEDBACK_REASONS]
    return card([
        text_block(i18n.text("feedback_thanks", language)),
        text_block(i18n.text("feedback_reason_question", language), weight="Bolder"),
        {"type": "Input.ChoiceSet", "id": REASON_INPUT, "style": "expanded",
         "choices": choices},
        {"type": "Input.Text", "id": REASON_TEXT_INPUT, "isMultiline": True,
         "maxLength": MAX_FEEDBACK_TEXT_CHARS,
         "placeholder": i18n.text("feedback_reason_text", language)},
    ], [_submit(i18n.text("feedback_reason_send", language), action=FEEDBACK_REASON,
                result_id=result_id),
        _submit(i18n.text("slack_ask_human", language), action=ASK_HUMAN,
                result_id=result_id)])


def trailer(result: TurnResult) -> Card | None:
    """What closes a streamed answer (the text itself was streamed): the cited sources and
    the buttons, as the last card of a whole answer has them."""
    body = _sources_blocks(result)
    for index, row in enumerate(_action_rows(result)):
        body.append({"type": "ActionSet", "actions": row,
                     "spacing": "Medium" if index == 0 else "Small"})
    return card(body) if body else None


def catalog_card(documents: list[DocumentInfo], language: i18n.Language) -> Card:
    lines = [_rich([_run("•\u00a0"), _run(document.document_id, fontType="Monospace"),
                    _run(" "), _link(document.title, document.url),
                    *([_run(f" (v{document.own_version})")] if document.own_version else [])],
                   spacing="None")
             for document in documents]
    return card([text_block(i18n.text("docs_header", language), weight="Bolder"),
                 *(lines or [text_block("—")])])


def stats_card(summary: ActivitySummary, language: i18n.Language) -> Card:
    facts = [{"title": status, "value": str(count)} for status, count in summary.statuses]
    return card([
        text_block(i18n.text("stats_header", language), weight="Bolder", size="Medium"),
        text_block(i18n.text("stats_turns", language, turns=summary.turns)),
        {"type": "FactSet", "facts": facts},
        text_block(i18n.text("stats_feedback", language, helpful=summary.helpful,
                             not_helpful=summary.not_helpful)),
    ])


def sources_card(statuses: list[SourceStatus], language: i18n.Language) -> Card:
    """The `sources` admin command: each source's state, failing ones in attention colour."""
    lines = describe_sources(statuses, language)
    failing = [status.last_error is not None for status in statuses] or [False]
    return card([text_block(i18n.text("sources_header_admin", language), weight="Bolder"),
                 *(inert_text(line, **({"color": "Attention"} if bad else {}))
                   for line, bad in zip(lines, failing, strict=False))])


def inert_text(text: str, **style: Any) -> dict[str, Any]:
    """Text that holds document titles or site errors: a RichTextBlock of one TextRun, which
    Teams never reads as markdown."""
    return _rich([_run(text, **style)])
