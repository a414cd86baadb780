"""The store contract for issue 23 (reasons, shares, posted reply ids, team addresses), run
against every store of `STORE_FACTORIES` (tests/storage/conformance.py) through the protocols."""

from __future__ import annotations

from typing import Any, Protocol

import pytest

from docassist.core.errors import StorageError
from docassist.core.ports import FeedbackLog, Inbox, PostedReplies, Shares, TeamAddresses
from tests.helpers import message
from tests.storage.conformance import commit_turn


class ChatStore(FeedbackLog, Inbox, PostedReplies, Shares, TeamAddresses, Protocol):
    def feedback(self) -> list[dict[str, Any]]: ...


def test_conformance_a_reason_is_a_bad_vote_and_needs_its_answer(
        any_store: ChatStore) -> None:
    commit_turn(any_store, "r1")  # type: ignore[arg-type]
    any_store.record_feedback("r1", "U1", positive=True)
    any_store.record_feedback_reason("r1", "U1", "outdated", None)
    [vote] = any_store.feedback()
    assert (vote["value"], vote["reason"], vote["reason_text"]) == (-1, "outdated", None)
    with pytest.raises(StorageError):
        any_store.record_feedback_reason("unknown", "U1", "wrong", None)


def test_conformance_an_answer_is_shared_once_until_withdrawn(
        any_store: ChatStore) -> None:
    assert any_store.record_share("r1", "U1") is True
    assert any_store.record_share("r1", "U1") is False
    any_store.withdraw_share("r1")
    assert any_store.record_share("r1", "U1") is True


def test_conformance_a_posted_reply_is_remembered_per_event(
        any_store: ChatStore) -> None:
    assert any_store.enqueue(message("one", event_id="E1")) is not None
    assert any_store.posted_id("test", "E1") is None
    any_store.record_posted("test", "E1", "reply-7")
    assert any_store.posted_id("test", "E1") == "reply-7"
    assert any_store.posted_id("other", "E1") is None


def test_conformance_a_team_channel_is_reached_at_its_team_newest_address(
        any_store: ChatStore) -> None:
    assert any_store.team_service_url("19:help") is None
    any_store.record_team_address(["19:team", "19:help"], "19:team", "https://a/")
    any_store.record_team_address(["19:team"], "19:team", "https://b/")
    assert any_store.team_service_url("19:help") == "https://b/"
    assert any_store.team_service_url("19:elsewhere") is None
