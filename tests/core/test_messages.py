from __future__ import annotations

import pytest

from docassist.core.limits import MAX_MESSAGE_CHARS
from docassist.core.messages import ConversationKey, InvalidMessage, validate_message


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "empty_message"),
        ("   \n\t ", "empty_message"),
        ("x" * (MAX_MESSAGE_CHARS + 1), "message_too_long"),
        (None, "invalid_message"),
        (42, "invalid_message"),
        (b"bytes", "invalid_message"),
        ("Jak\x07 zrestartować?", "invalid_message"),
        ("null\x00byte", "invalid_message"),
        ("escape \x1b[31m", "invalid_message"),
    ],
)
def test_invalid_messages_are_named(text: object, problem: str) -> None:
    with pytest.raises(InvalidMessage) as caught:
        validate_message(text)
    assert caught.value.problem == problem


def test_valid_message_is_trimmed_and_keeps_newlines() -> None:
    assert validate_message("  line one\nline two\t ") == "line one\nline two"
    assert validate_message("x" * MAX_MESSAGE_CHARS) == "x" * MAX_MESSAGE_CHARS


def test_conversation_id_is_stable_and_keeps_fields_apart() -> None:
    teams = ConversationKey(platform="teams", workspace="t", channel="19:a;messageid=1",
                            thread="1")
    assert teams.conversation_id == ConversationKey.model_validate(
        teams.model_dump()).conversation_id
    assert len(teams.conversation_id) == 16
    # Joining fields with a separator would make these two collide; separate fields don't.
    a = ConversationKey(platform="p", workspace="a:b", channel="c", thread="d")
    b = ConversationKey(platform="p", workspace="a", channel="b:c", thread="d")
    assert a.conversation_id != b.conversation_id


def test_conversation_ids_stay_what_existing_databases_hold() -> None:
    """Stored rows are keyed by these ids: however they are computed, they must not change."""
    key = ConversationKey(platform="a", workspace="b", channel="c", thread="d")
    assert key.conversation_id == "8527cf2285e0d0c0"
    assert key.model_copy(update={"thread": "e"}).conversation_id == "b03c2cd96109c417"
