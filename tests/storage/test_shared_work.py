"""Work shared by processes, at the store: inbox claims, rate limits, the retention lease.
Two `Store` objects on one file stand for two processes (each has its own connections)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from docassist.core.ports import Hold
from docassist.serving.ratelimit import SharedRateLimiter
from docassist.storage import Store
from docassist.storage.exports import RETENTION_LEASE, RetentionScheduler
from docassist.storage.postgres import PostgresStore
from docassist_testkit.fakes.loopback import wait_until
from tests.conftest import STORES
from tests.helpers import message

EitherStore = Store | PostgresStore
"""Either store: these tests also reach into its own database."""

LEASE = 30.0


@pytest.fixture(params=STORES)
def pair(request: pytest.FixtureRequest,
         db_path: Path) -> Iterator[tuple[EitherStore, EitherStore]]:
    """One database opened twice: two processes, on each store."""
    if request.param == "postgresql":
        url = str(request.getfixturevalue("pg_demo_url"))
        opened: list[EitherStore] = [PostgresStore(url), PostgresStore(url)]
    else:
        opened = [Store(db_path), Store(db_path)]
    yield opened[0], opened[1]
    for store in opened:
        store.close()


def execute(store: EitherStore, sql: str, params: list[object]) -> None:
    """Raw SQL as a test's own hand on the database (SQLite `?` placeholders)."""
    if isinstance(store, Store):
        store.db.execute(sql, params)
        return
    with store._transaction() as connection:
        connection.execute(sql.replace("?", "%s"), params)


def test_only_the_oldest_event_of_a_conversation_is_claimed_and_only_once(
        pair: tuple[EitherStore, EitherStore]) -> None:
    store, other = pair
    first = store.enqueue(message("one", thread="a", event_id="A1"))
    second = store.enqueue(message("two", thread="a", event_id="A2"))
    elsewhere = store.enqueue(message("three", thread="b", event_id="B1"))
    assert first is not None and second is not None and elsewhere is not None
    claimed = store.claim("", "p1", LEASE, 10)
    assert [event.id for event in claimed] == [first, elsewhere]  # A2 waits for A1
    assert other.claim("", "p2", LEASE, 10) == []  # live claims: nothing for another process
    store.finish(first, "done")
    # A1 done, its claim released: A2 is next, for whoever looks first.
    assert [event.id for event in other.claim("", "p2", LEASE, 10)] == [second]
    assert store.claim("", "p1", LEASE, 10) == []


def test_a_held_event_is_claimed_in_the_write_that_stores_it(
        pair: tuple[EitherStore, EitherStore]) -> None:
    """A caller that waits for the turn in its own request (Teams' expectReplies) stores the
    event already claimed: no other process can take it first."""
    store, other = pair
    held = store.enqueue(message("one", thread="a", event_id="A1"),
                         hold=Hold("serving", LEASE))
    assert held is not None
    assert store.holds("serving", held, LEASE / 2)
    assert other.claim("", "turns", LEASE, 10) == []
    # Its conversation waits for it, as for any claimed event.
    later = other.enqueue(message("two", thread="a", event_id="A2"))
    assert other.claim("", "turns", LEASE, 10) == []
    store.finish(held, "done")
    assert [event.id for event in other.claim("", "turns", LEASE, 10)] == [later]


def test_a_hold_never_jumps_its_conversations_queue(
        pair: tuple[EitherStore, EitherStore]) -> None:
    """An earlier unfinished event of the conversation (claimed or not) keeps the new one
    for the claimers, in order; another conversation's events do not matter."""
    store, other = pair
    first = other.enqueue(message("one", thread="a", event_id="A1"))
    queued = store.enqueue(message("two", thread="a", event_id="A2"),
                           hold=Hold("serving", LEASE))
    elsewhere = store.enqueue(message("three", thread="b", event_id="B1"),
                              hold=Hold("serving", LEASE))
    assert first is not None and queued is not None and elsewhere is not None
    assert not store.holds("serving", queued, 0)
    assert store.holds("serving", elsewhere, 0)
    assert [event.id for event in other.claim("", "turns", LEASE, 10)] == [first]
    other.finish(first, "done")
    assert [event.id for event in other.claim("", "turns", LEASE, 10)] == [queued]
    # A repeated event stores nothing and claims nothing.
    assert store.enqueue(message("three", thread="b", event_id="B1"),
                         hold=Hold("other", LEASE)) is None
    assert store.holds("serving", elsewhere, 0)


def test_an_expired_claim_is_taken_over_and_the_old_holder_learns_it_lost(
        pair: tuple[EitherStore, EitherStore]) -> None:
    store, other = pair
    event_id = store.enqueue(message("one", thread="a", event_id="A1"))
    assert [event.id for event in store.claim("", "dead", 0.2, 10)] == [event_id]
    assert other.claim("", "alive", LEASE, 10) == []
    time.sleep(0.3)  # the holder stopped renewing
    [taken] = other.claim("", "alive", LEASE, 10)
    assert taken.id == event_id and taken.message.text == "one"
    assert store.renew_claims("dead", [event_id], LEASE) == set()
    assert other.renew_claims("alive", [event_id], LEASE) == {event_id}


def test_a_claim_is_held_for_a_while_by_its_holder_only_and_not_once_done(
        pair: tuple[EitherStore, EitherStore]) -> None:
    """`holds` (a read): what the inbox worker checks before delivering instead of writing
    a renewal, when the claim has long enough left."""
    store, other = pair
    event_id = store.enqueue(message("one", thread="a", event_id="A1"))
    assert event_id is not None and not store.holds("p1", event_id, 0)  # not claimed yet
    store.claim("", "p1", LEASE, 10)
    assert store.holds("p1", event_id, LEASE / 3) and other.holds("p1", event_id, LEASE / 3)
    assert not store.holds("p1", event_id, LEASE * 2)  # not that long: renew instead
    assert not store.holds("p2", event_id, 0)
    store.finish(event_id, "done")
    assert not store.holds("p1", event_id, 0)


def test_concurrent_finishes_each_release_their_claim_and_their_text(
        pair: tuple[EitherStore, EitherStore]) -> None:
    """Finishes from many threads at once (a turn process's): each event ends done (or
    failed, with its error), its claim released, its text gone, and its conversation's
    next event claimable."""
    store, other = pair
    firsts = [store.enqueue(message(f"q{n}", thread=f"t{n}", event_id=f"F{n}"))
              for n in range(12)]
    seconds = [store.enqueue(message(f"r{n}", thread=f"t{n}", event_id=f"S{n}"))
               for n in range(12)]
    firsts_stored = [inbox_id for inbox_id in firsts if inbox_id is not None]
    assert firsts_stored == firsts and None not in seconds
    assert len(store.claim("", "p1", LEASE, 50)) == 12  # the first event of each thread
    with ThreadPoolExecutor(max_workers=12) as pool:
        list(pool.map(lambda n: store.finish(firsts_stored[n],
                                             "failed" if n == 0 else "done",
                                             "gone" if n == 0 else None), range(12)))
    rows = {row["id"]: row for row in store.inbox_rows()}
    assert [rows[i]["status"] for i in firsts] == ["failed"] + ["done"] * 11
    assert rows[firsts[0]]["error"] == "gone"
    assert all(rows[firsts[n]]["claimed_by"] is None for n in range(12))
    assert all(f'"q{n}"' not in str(rows[firsts[n]]["message"]) for n in range(12))
    assert all(f'"r{n}"' in str(rows[seconds[n]]["message"]) for n in range(12))  # unfinished
    assert sorted(event.id for event in other.claim("", "p2", LEASE, 50)) == sorted(
        inbox_id for inbox_id in seconds if inbox_id is not None)


def test_no_event_of_a_conversation_is_claimed_while_another_claim_on_it_is_live(
        pair: tuple[EitherStore, EitherStore]) -> None:
    store, other = pair
    """A PostgreSQL sequence can commit an older id after a newer one was claimed."""
    first = store.enqueue(message("one", thread="a", event_id="A1"))
    [claimed] = store.claim("", "p1", LEASE, 10)
    execute(store, "UPDATE inbox SET id = 1000 WHERE id = ?", [first])  # now the newest
    store.enqueue(message("two", thread="a", event_id="A2"))  # older id than the claimed
    assert claimed.id == first
    assert other.claim("", "p2", LEASE, 10) == []


def test_claims_are_per_platform(pair: tuple[EitherStore, EitherStore]) -> None:
    store = pair[0]
    store.enqueue(message("one", thread="a", event_id="A1"))
    assert store.claim("slack", "p1", LEASE, 10) == []
    assert len(store.claim("test", "p1", LEASE, 10)) == 1


def test_concurrent_claimers_never_share_an_event(pair: tuple[EitherStore, EitherStore]) -> None:
    store, other = pair
    for index in range(40):
        store.enqueue(message(f"m{index}", thread=f"t{index}", event_id=f"E{index}"))

    def claim_all(claimer: tuple[EitherStore, str]) -> list[int]:
        db, holder = claimer
        taken: list[int] = []
        for _ in range(20):
            taken += [event.id for event in db.claim("", holder, LEASE, 3)]
        return taken

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(claim_all, [(store, "a"), (other, "b"), (store, "c"),
                                            (other, "d")]))
    everything = [event for taken in results for event in taken]
    assert len(everything) == len(set(everything)) == 40


def test_rate_limits_count_across_processes(pair: tuple[EitherStore, EitherStore]) -> None:
    store, other = pair
    here, there = SharedRateLimiter(store, 2, 0), SharedRateLimiter(other, 2, 0)
    assert here.check("U1", "a1") == 0
    assert there.check("U1", "a2") == 0
    wait = here.check("U1", "a3")
    assert 1 <= wait <= 60  # the third of the minute, whichever process counts it
    assert there.check("U1", "a3") == wait  # the same arrival again: its first verdict
    assert there.check("U1", "a1") == 0  # (a repeat of an admitted one is not counted)
    assert there.check("U2", "b1") == 0  # another user has a budget of their own
    rows = store._rows("SELECT user_key FROM rate_arrivals") if isinstance(
        store, PostgresStore) else list(store.db.query("SELECT user_key FROM rate_arrivals"))
    assert rows and all(len(row["user_key"]) == 64 for row in rows)  # hashed, never the id


def test_concurrent_checks_admit_exactly_the_limit(pair: tuple[EitherStore, EitherStore]) -> None:
    store, other = pair
    limiters = [SharedRateLimiter(db, 0, 7) for db in (store, other)]
    with ThreadPoolExecutor(8) as pool:
        verdicts = list(pool.map(lambda n: limiters[n % 2].check(f"U{n}", f"x{n}"), range(30)))
    assert verdicts.count(0) == 7


def test_retention_runs_in_one_process_a_day(pair: tuple[EitherStore, EitherStore]) -> None:
    store, other = pair
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


def test_a_skipped_retention_run_is_tried_again_when_the_other_lease_ends(
        pair: tuple[EitherStore, EitherStore]) -> None:
    """A process that starts while another's daily lease holds (a restart) runs retention
    once that lease ends, not a whole period later."""
    store, other = pair
    assert other.claim_lease(RETENTION_LEASE, "process-before-restart", 1.5)
    scheduler = RetentionScheduler(store, 30, holder="process-after-restart")
    try:
        scheduler.start()  # skipped: the lease is held
        assert _retention_holder(store) == "process-before-restart"
        assert wait_until(lambda: _retention_holder(store) == "process-after-restart", 15)
    finally:
        scheduler.stop()


def _retention_holder(store: EitherStore) -> str:
    [lease] = [row for row in store.lease_rows() if row["name"] == RETENTION_LEASE]
    return str(lease["holder"])
