"""Chat reads code blocks as the indexer and the passage renderer do (core/fences.py): a
block fenced with tildes is code, a ```python line inside a block is code, and a line of
inline code opens nothing. Slack shows each code block fenced with backticks, as mrkdwn
reads them."""

from __future__ import annotations

from docassist.bot import layout
from docassist.bot.slack.render import sections

TILDES = "Run the checks:\n~~~sh\nmake test\n# not a heading\n~~~\nThen push."


def test_a_block_fenced_with_tildes_is_code() -> None:
    blocks = layout.parse(TILDES)
    assert [block.kind for block in blocks] == ["line", "code", "line"]
    assert blocks[1].spans[0].text == "make test\n# not a heading"
    assert blocks[2].spans[0].text == "Then push."


def test_slack_shows_a_tilde_block_fenced_with_backticks() -> None:
    assert sections(TILDES) == ["Run the checks:\n```make test\n# not a heading```\nThen push."]


def test_a_fence_with_an_info_string_inside_a_block_does_not_close_it() -> None:
    blocks = layout.parse("Example:\n```\nwrite this:\n```python\nprint(1)\n```\nDone.")
    assert [block.kind for block in blocks] == ["line", "code", "line"]
    assert blocks[1].spans[0].text == "write this:\n```python\nprint(1)"


def test_a_line_of_inline_code_opens_no_block() -> None:
    first, then = layout.parse("```make test```\nThen push.")
    assert (first.kind, first.spans) == ("line", [layout.Span("code", "make test")])
    assert (then.kind, then.spans[0].text) == ("line", "Then push.")
