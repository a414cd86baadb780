"""The durable inbox with a real store: once, in order, resumable."""

from __future__ import annotations

import threading

from docassist.core.messages import ChatMessage
from docassist.core.results import TurnResult
from docassist.core.turn import TurnEngine
from docassist.serving.delivery import Outlet
from docassist.serving.inbox import InboxWorker
from docassist.serving.limits import MAX_DELIVERY_ATTEMPTS
from docassist.storage import Store
from tests.conftest import EngineFactory
from tests.helpers import message


class Outbox:
    """Stands in for the platform's post-message API."""

    def __init__(self, failures: int = 0) -> None:
        self.failures = failures
        self.posted: list[tuple[str, str, int]] = []
        self.lock = threading.Lock()

    def __call__(self, sent: ChatMessage, result: TurnResult) -> None:
        with self.lock:
            if self.failures:
                self.failures -= 1
                raise ConnectionError("platform API down")
            self.posted.append((sent.key.thread, str(sent.event_id), result.turn_id))


def test_each_event_is_answered_once_in_order_per_conversation(
    engine: TurnEngine, store: Store
) -> None:
    outbox = Outbox()
    worker = InboxWorker(engine, store, Outlet(outbox))
    for index in range(5):
        for thread in ("a", "b"):
            assert worker.submit(message(f"How do I renew TLS, take {index}?", thread=thread,
                                         event_id=f"{thread}{index}"))
    # A platform retry (the same event id) is stored once.
    assert not worker.submit(message("How do I renew TLS, take 0?", thread="a",
                                     event_id="a0"))
    assert worker.wait_idle()
    worker.close()
    for thread in ("a", "b"):
        mine = [(event, turn) for t, event, turn in outbox.posted if t == thread]
        assert [event for event, _ in mine] == [f"{thread}{i}" for i in range(5)]
        assert [turn for _, turn in mine] == [1, 2, 3, 4, 5]
    assert {row["status"] for row in store.inbox_rows()} == {"done"}


def test_one_message_as_two_event_types_is_answered_once(engine: TurnEngine,
                                                         store: Store) -> None:
    outbox = Outbox()
    worker = InboxWorker(engine, store, Outlet(outbox))
    assert worker.submit(message("How do I renew TLS?", event_id="Ev-message"),
                         dedupe_key="C1:1700000000.0001")
    assert not worker.submit(message("How do I renew TLS?", event_id="Ev-app-mention"),
                             dedupe_key="C1:1700000000.0001")
    assert worker.wait_idle()
    worker.close()
    assert len(outbox.posted) == 1 and len(store.turns()) == 1


def test_failed_deliveries_are_retried_then_marked(engine: TurnEngine, store: Store) -> None:
    flaky = Outbox(failures=1)
    worker = InboxWorker(engine, store, Outlet(flaky))
    worker.submit(message("How do I renew TLS?", event_id="Ev1"))
    assert worker.wait_idle()
    assert len(flaky.posted) == 1
    down = Outbox(failures=MAX_DELIVERY_ATTEMPTS)
    worker.delivery.deliver = down
    worker.submit(message("How do I renew TLS?", thread="t2", event_id="Ev2"))
    assert worker.wait_idle()
    worker.close()
    rows = {row["event_id"]: row for row in store.inbox_rows()}
    assert (rows["Ev1"]["status"], rows["Ev1"]["attempts"]) == ("done", 1)
    assert rows["Ev2"]["status"] == "failed"
    assert "platform API down" in rows["Ev2"]["error"]
    assert down.posted == []


def test_unfinished_events_are_resumed_after_a_crash(make_engine: EngineFactory,
                                                     store: Store) -> None:
    # The process stored (and acked) two events, answered one but died before posting it.
    stored = store.enqueue(message("How do I renew TLS?", event_id="Ev-unanswered"))
    answered_id = store.enqueue(message("Jak zgłosić incydent?", thread="t2",
                                        event_id="Ev-unposted"))
    assert stored and answered_id
    first = make_engine().handle(message("Jak zgłosić incydent?", thread="t2",
                                         event_id="Ev-unposted"))
    store.record_answer(answered_id, first)
    outbox = Outbox()
    worker = InboxWorker(make_engine(), store, Outlet(outbox))  # the restarted process
    assert worker.resume() == 2
    assert worker.wait_idle()
    worker.close()
    assert sorted(event for _, event, _ in outbox.posted) == ["Ev-unanswered", "Ev-unposted"]
    assert len(store.turns()) == 2  # the answered event was posted again, not re-run
    again = InboxWorker(make_engine(), store, Outlet(outbox))
    assert again.resume() == 0
    again.close()  # its poller would go on looking in a store closed after the test


class Backlog:
    """A process's model share as the inbox sees it (core.ports.ModelBacklog)."""

    def __init__(self, queued: bool) -> None:
        self.waiting = queued

    def queued(self) -> bool:
        return self.waiting


def test_a_process_whose_model_requests_queue_claims_nothing_more(
        make_engine: EngineFactory, store: Store) -> None:
    """Its turns already keep its share of the model busy: the event stays for a process with
    room, and this one takes it once its requests no longer wait."""
    engine = make_engine()
    backlog = Backlog(queued=True)
    engine.model_backlog = backlog
    outbox = Outbox()
    worker = InboxWorker(engine, store, Outlet(outbox), poll_seconds=0.05)
    assert worker.submit(message("How do I renew TLS?", event_id="E1"))
    assert worker.wait_idle()  # it looked, and found nothing it would take
    assert [row["status"] for row in store.inbox_rows()] == ["pending"]
    assert store.inbox_rows()[0]["claimed_by"] is None and outbox.posted == []
    backlog.waiting = False
    assert worker.wait_idle()
    worker.close()
    assert [event for _, event, _ in outbox.posted] == ["E1"]
