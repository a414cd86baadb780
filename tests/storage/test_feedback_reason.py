"""A 👎's reason in the store: the words kept only with save_raw, exported, in the report,
and erased with the vote by a purge."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from docassist.cli.report import gather
from docassist.core.errors import StorageError
from docassist.core.messages import ChatMessage, ConversationKey
from docassist.core.turn import TurnEngine
from docassist.storage import Store
from docassist.storage.exports import purge_older_than, trace_rows

KEY = ConversationKey(platform="cli", workspace="w", channel="c", thread="t")


def answered(engine: TurnEngine) -> str:
    result = engine.handle(ChatMessage(key=KEY, user="u1",
                                       text="How do I renew the TLS certificate?"))
    assert result is not None
    return result.result_id


def test_words_are_kept_only_with_save_raw(engine: TurnEngine, store: Store,
                                           db_path: Path) -> None:
    result_id = answered(engine)
    store.record_feedback_reason(result_id, "u1", "incomplete", "missing step 3")
    raw = Store(db_path, save_raw=True)
    try:
        raw.record_feedback_reason(result_id, "u2", "other", "  " + "x" * 900)
    finally:
        raw.close()
    first, second = store.feedback()
    assert (first["reason"], first["reason_text"], first["value"]) == ("incomplete", None, -1)
    assert second["reason"] == "other" and second["reason_text"] == "x" * 500
    [row] = trace_rows(store)
    assert row["feedback"] == -2
    assert row["feedback_reasons"] == [{"reason": "incomplete"},
                                       {"reason": "other", "text": "x" * 500}]
    assert gather(store)["reasons"] == [("incomplete", 1), ("other", 1)]


def test_a_reason_turns_a_good_vote_into_a_bad_one(engine: TurnEngine, store: Store) -> None:
    result_id = answered(engine)
    store.record_feedback(result_id, "u1", positive=True)
    store.record_feedback_reason(result_id, "u1", "wrong", None)
    [vote] = store.feedback()
    assert (vote["value"], vote["reason"]) == (-1, "wrong")


def test_a_reason_for_an_unknown_answer_is_refused(store: Store) -> None:
    with pytest.raises(StorageError):
        store.record_feedback_reason("0" * 16, "u1", "wrong", "text")
    assert store.feedback() == []


def test_a_purge_erases_the_reason_with_the_vote(engine: TurnEngine, db_path: Path) -> None:
    raw = Store(db_path, save_raw=True)
    try:
        result_id = answered(engine)
        raw.record_feedback_reason(result_id, "u1", "outdated", "private words")
        assert raw.record_share(result_id, "u1") and not raw.record_share(result_id, "u2")
        erased = purge_older_than(raw, timedelta(minutes=0))
        assert erased.feedback == 1 and raw.feedback() == []
        assert erased.shares == 1 and list(raw.db["shares"].rows) == []
    finally:
        raw.close()
