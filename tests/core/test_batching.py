"""Actions asked for by the callbacks of one batch run once, after the batch."""

from __future__ import annotations

import logging

import pytest

from docassist.core.batching import batch, once_after_batch


class Counter:
    def __init__(self) -> None:
        self.calls = 0

    def ring(self) -> None:
        self.calls += 1


def test_an_action_asked_for_many_times_in_a_batch_runs_once_at_its_end() -> None:
    counter, order = Counter(), []
    with batch():
        for _ in range(5):
            once_after_batch(counter.ring)  # equal bound methods: one action
            order.append(counter.calls)
        once_after_batch(lambda: order.append(-1))
    assert order == [0, 0, 0, 0, 0, -1] and counter.calls == 1


def test_outside_a_batch_an_action_runs_at_once() -> None:
    counter = Counter()
    once_after_batch(counter.ring)
    once_after_batch(counter.ring)
    assert counter.calls == 2


def test_a_failing_action_is_logged_and_the_others_still_run(
        caplog: pytest.LogCaptureFixture) -> None:
    counter = Counter()

    def broken() -> None:
        raise OSError("pipe closed")

    with caplog.at_level(logging.ERROR), batch():
        once_after_batch(broken)
        once_after_batch(counter.ring)
    assert counter.calls == 1
    assert any("after a committed batch" in record.getMessage() for record in caplog.records)
