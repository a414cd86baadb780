"""Work shared by processes, at the store: inbox claims, rate limits, the retention lease.
Two `Store` objects on one file stand for two processes (each has its own connections)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from docassist.core.ratelimit import SharedRateLimiter
from docassist.storage import Store
from docassist.storage.exports import RetentionScheduler
from tests.helpers import message

LEASE = 30.0


@pytest.fixture
def other(db_path: Path) -> Iterator[Store]:
    """The same database as `store`, opened again: another process."""
    second = Store(db_path)
    yield second
    second.close()


def test_only_the_oldest_event_of_a_conversation_is_claimed_and_only_once(
        store: Store, other: Store) -> None:
    first = store.enqueue(message("one", thread="a", event_id="A1"))
    second = store.enqueue(message("two", thread="a", event_id="A2"))
    elsewhere = store.enqueue(message("three", thread="b", event_id="B1"))
    claimed = store.claim("", "p1", LEASE, 10)
    assert [event.id for event in claimed] == [first, elsewhere]  # A2 waits for A1
    assert other.claim("", "p2", LEASE, 10) == []  # live claims: nothing for another process
    store.finish(first, "done")
    # A1 done, its claim released: A2 is next, for whoever looks first.
    assert [event.id for event in other.claim("", "p2", LEASE, 10)] == [second]
    assert store.claim("", "p1", LEASE, 10) == []


def test_an_expired_claim_is_taken_over_and_the_old_holder_learns_it_lost(
        store: Store, other: Store) -> None:
    event_id = store.enqueue(message("one", thread="a", event_id="A1"))
    assert [event.id for event in store.claim("", "dead", 0.2, 10)] == [event_id]
    assert other.claim("", "alive", LEASE, 10) == []
    time.sleep(0.3)  # the holder stopped renewing
    [taken] = other.claim("", "alive", LEASE, 10)
    assert taken.id == event_id and taken.message.text == "one"
    assert store.renew_claims("dead", [event_id], LEASE) == set()
    assert other.renew_claims("alive", [event_id], LEASE) == {event_id}


def test_no_event_of_a_conversation_is_claimed_while_another_claim_on_it_is_live(
        store: Store, other: Store) -> None:
    """A PostgreSQL sequence can commit an older id after a newer one was claimed."""
    first = store.enqueue(message("one", thread="a", event_id="A1"))
    [claimed] = store.claim("", "p1", LEASE, 10)
    store.db.execute("UPDATE inbox SET id = 1000 WHERE id = ?", [first])  # now the newest
    store.enqueue(message("two", thread="a", event_id="A2"))  # older id than the claimed
    assert claimed.id == first
    assert other.claim("", "p2", LEASE, 10) == []


def test_claims_are_per_platform(store: Store) -> None:
    store.enqueue(message("one", thread="a", event_id="A1"))
    assert store.claim("slack", "p1", LEASE, 10) == []
    assert len(store.claim("test", "p1", LEASE, 10)) == 1


def test_concurrent_claimers_never_share_an_event(store: Store, other: Store) -> None:
    for index in range(40):
        store.enqueue(message(f"m{index}", thread=f"t{index}", event_id=f"E{index}"))

    def claim_all(pair: tuple[Store, str]) -> list[int]:
        db, holder = pair
        taken: list[int] = []
        for _ in range(20):
            taken += [event.id for event in db.claim("", holder, LEASE, 3)]
        return taken

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(claim_all, [(store, "a"), (other, "b"), (store, "c"),
                                            (other, "d")]))
    everything = [event for taken in results for event in taken]
    assert len(everything) == len(set(everything)) == 40


def test_rate_limits_count_across_processes(store: Store, other: Store) -> None:
    here, there = SharedRateLimiter(store, 2, 0), SharedRateLimiter(other, 2, 0)
    assert here.check("U1", "a1") == 0
    assert there.check("U1", "a2") == 0
    wait = here.check("U1", "a3")
    assert 1 <= wait <= 60  # the third of the minute, whichever process counts it
    assert there.check("U1", "a3") == wait  # the same arrival again: its first verdict
    assert there.check("U1", "a1") == 0  # (a repeat of an admitted one is not counted)
    assert there.check("U2", "b1") == 0  # another user has a budget of their own
    rows = store.db.execute("SELECT user_key FROM rate_arrivals").fetchall()
    assert all(len(row[0]) == 64 and "U1" not in row[0] for row in rows)  # hashed


def test_concurrent_checks_admit_exactly_the_limit(store: Store, other: Store) -> None:
    limiters = [SharedRateLimiter(db, 0, 7) for db in (store, other)]
    with ThreadPoolExecutor(8) as pool:
        verdicts = list(pool.map(lambda n: limiters[n % 2].check(f"U{n}", f"x{n}"), range(30)))
    assert verdicts.count(0) == 7


def test_retention_runs_in_one_process_a_day(store: Store, other: Store) -> None:
    first = RetentionScheduler(store, 30, holder="process-1")
    second = RetentionScheduler(other, 30, holder="process-2")
    try:
        first.start()
        second.start()
    finally:
        first.stop()
        second.stop()
    [lease] = [row for row in store.lease_rows() if row["name"].startswith("schedule:")]
    assert lease["holder"] == "process-1"
