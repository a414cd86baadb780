"""The shared admission step with a real store and inbox worker: refusals delivered once and
no turn run; a message counted once; an event not stored within the ack deadline is
reported at once and answered when its write lands."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from docassist.core.errors import AckDeadlineError
from docassist.core.messages import ChatMessage
from docassist.core.results import TurnResult
from docassist.core.turn import TurnEngine
from docassist.serving.admission import Admission, Arrival
from docassist.serving.delivery import Outlet
from docassist.serving.inbox import InboxWorker
from docassist.serving.ratelimit import RateLimiter
from docassist.storage import Store
from docassist_testkit.fakes.loopback import wait_until
from tests.db_locks import LockHolder
from tests.helpers import message


class Outbox:
    def __init__(self) -> None:
        self.answers: list[tuple[str, str]] = []
        self.notices: list[tuple[str, str]] = []
        self.lock = threading.Lock()

    def answer(self, sent: ChatMessage, result: TurnResult) -> None:
        with self.lock:
            self.answers.append((str(sent.event_id), result.status))

    def notice(self, sent: ChatMessage, text: str) -> None:
        with self.lock:
            self.notices.append((str(sent.event_id), text))


@pytest.fixture
def outbox() -> Outbox:
    return Outbox()


@pytest.fixture
def worker(engine: TurnEngine, store: Store, outbox: Outbox) -> Iterator[InboxWorker]:
    opened = InboxWorker(engine, store, Outlet(outbox.answer, notice=outbox.notice))
    yield opened
    opened.close()  # before the store closes: its poller would go on looking


def test_a_refusal_is_stored_delivered_once_and_runs_no_turn(
        store: Store, worker: InboxWorker, outbox: Outbox) -> None:
    admission = Admission(store, RateLimiter(per_user=1, global_limit=0), worker)
    first = Arrival(message("How do I renew TLS?", event_id="Ev1"), "en")
    second = Arrival(message("Jak odnowić certyfikat TLS?", thread="t2", event_id="Ev2"), "pl")
    assert admission.admit(first) == "admitted"
    assert [admission.admit(second) for _ in range(3)] == ["refused", "duplicate", "duplicate"]
    external = Arrival(message("hi", thread="t3", event_id="Ev3"), "en", external_user=True)
    assert worker.wait_idle()
    assert [event for event, _ in outbox.notices] == ["Ev2"]
    assert "spróbuj ponownie za" in outbox.notices[0][1]
    assert outbox.answers == [("Ev1", "answered")] and len(store.turns()) == 1
    admission.limiter.per_user = 0  # unlimited: the external user is refused for who they are
    assert admission.admit(external) == "refused"
    assert worker.wait_idle()
    assert outbox.notices[-1] == ("Ev3", "Sorry, I only answer people from our own "
                                         "organisation.")
    assert len(store.turns()) == 1
    worker.close()


def test_an_event_stored_after_the_deadline_is_answered_once(
        store: Store, db_path: Path, worker: InboxWorker, outbox: Outbox) -> None:
    admission = Admission(store, RateLimiter(), worker, deadline=0.3)
    arrival = Arrival(message("How do I renew TLS?", event_id="EvLate"), "en",
                      dedupe_key="C1:1.1")
    holder = LockHolder(db_path)
    started = time.monotonic()
    try:
        with pytest.raises(AckDeadlineError):
            admission.admit(arrival)
        waited = time.monotonic() - started
    finally:
        holder.close()  # the write that kept waiting now lands
    assert waited < 2.0  # reported at the deadline, not after the store's ~6 s bound
    assert wait_until(lambda: outbox.answers == [("EvLate", "answered")])
    assert admission.admit(arrival) == "duplicate"  # the platform's retry
    assert worker.wait_idle()
    assert outbox.answers == [("EvLate", "answered")] and len(store.turns()) == 1
    worker.close()
