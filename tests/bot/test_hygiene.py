"""Request hygiene: a lone surrogate is repaired wherever JSON text can carry one, and a body
that cannot carry one is passed on as it was parsed (the ack path's common case)."""

from __future__ import annotations

import json

from docassist.bot.hygiene import json_without_lone_surrogates


def _repaired(text: str) -> object:
    return json_without_lone_surrogates(text, json.loads(text))


def test_a_body_without_surrogates_is_passed_on_as_parsed() -> None:
    text = '{"event": {"text": "line one\\nline two \\u00e9 \\/path"}}'
    parsed = json.loads(text)
    assert json_without_lone_surrogates(text, parsed) is parsed


def test_a_lone_surrogate_escape_in_either_case_becomes_a_replacement_character() -> None:
    assert _repaired('{"text": ["a \\ud800 b", {"k": "\\uDFFF"}]}') == {
        "text": ["a \ufffd b", {"k": "\ufffd"}]}


def test_a_lone_surrogate_written_as_itself_is_repaired_too() -> None:
    assert _repaired('{"text": "a \ud800 b"}') == {"text": "a \ufffd b"}


def test_a_valid_pair_and_an_escaped_backslash_are_left_as_they_are() -> None:
    assert _repaired('{"text": "\\ud83d\\ude00 and \\\\ud800"}') == {
        "text": "\U0001f600 and \\ud800"}
