"""The durable inbox: platform events are stored before they are acknowledged, answered in
arrival order per conversation (different conversations in parallel), and finished only
after the reply was delivered. On start, what was not finished is resumed: events without
an answer run their turn, answered ones are delivered again.

Statuses: `pending` (stored, not answered) → `answered` (turn committed, result stored) →
`done` (reply delivered) or `failed` (delivery kept failing; the error is kept). The turn's
commit marks the event `answered` in the same transaction (see ConversationStore.commit_turn).

An event stored with a notice (a refusal or note decided at admission, see admission.py)
gets that notice delivered by the worker like an answer: once per message, whatever the
platform's retries; a refusal runs no turn.

A process killed between a post and its `done` leaves an `answered` event whose reply may
already be out: on resume, `already_delivered` (when the platform can tell) is asked first,
so the reply is not posted twice.

Several processes on one database share the inbox (issue 17): an event stored by any of them
is answered by the one that claims it (`Inbox.claim`: only a conversation's oldest unfinished
event, never while another claim on that conversation is live, so order holds across
processes). A process claims as many events as it has free turn slots (`workers`, from
DOCASSIST_MODEL_CONCURRENCY: turns wait for the model, not for each other), when an event
arrives or a turn ends, and every INBOX_POLL_SECONDS otherwise (events stored by others,
claims that expired). While a turn runs its claim is renewed every third of the lease; a
process that dies stops renewing, and its events are claimed by another once the lease ends.
Acks never wait for turns: storing an event is the ack path's only work here (the store's
group commit, `store`), and claiming happens on the poller thread. A worker of capacity
0 only stores (the serving process when turn processes answer, see turn_processes.py): it
claims nothing, and `on_stored` tells the processes that do.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

from docassist.core.batching import once_after_batch
from docassist.core.errors import StorageUnavailableError
from docassist.core.holder import PROCESS_HOLDER
from docassist.core.limits import INBOX_LEASE_SECONDS, MODEL_CONCURRENCY
from docassist.core.messages import ChatMessage
from docassist.core.ports import Hold, Inbox, InboxEvent, RateCheck
from docassist.core.results import TurnResult
from docassist.core.turn import TurnEngine
from docassist.serving.ack_writes import AckWriters, LateFailure, stored_within
from docassist.serving.delivery import Delivery, Outlet
from docassist.serving.limits import HELD_TURNS_REMEMBERED, INBOX_POLL_SECONDS

logger = logging.getLogger(__name__)


class InboxWorker:
    def __init__(self, engine: TurnEngine, inbox: Inbox, outlet: Outlet,
                 workers: int = MODEL_CONCURRENCY,
                 *, lease_seconds: float = INBOX_LEASE_SECONDS,
                 poll_seconds: float = INBOX_POLL_SECONDS,
                 on_stored: Callable[[], None] | None = None,
                 replica: str = PROCESS_HOLDER, held: int = 0) -> None:
        self.engine = engine
        self.outlet = outlet
        self.inbox = inbox
        self.delivery = Delivery(inbox, outlet)
        self.platform = outlet.platform
        self.holder = f"{replica}:{outlet.platform}:{uuid.uuid4().hex[:6]}"
        self.lease_seconds = lease_seconds
        self.poll_seconds = poll_seconds
        self.capacity = workers
        """Turns this process runs at once; 0: it stores events and answers none."""
        self.on_stored = on_stored
        """Called once an event is stored (wakes the processes that claim it)."""
        self.held = held
        """Turns it runs at once for callers that wait on this process (`store` with
        `hold`), beside `workers`: a worker of capacity 0 runs those too."""
        self._pool = ThreadPoolExecutor(max_workers=max(1, workers + held),
                                        thread_name_prefix="inbox")
        self._acks = AckWriters()
        self._running: dict[int, InboxEvent] = {}
        """Events this process claimed and is answering (their claims are renewed)."""
        self._lost: set[int] = set()
        """Running events whose claim expired and was taken by another process."""
        self._told: set[int] = set()
        """Events whose user was told the turn could not be saved (told once per process)."""
        self._taken: OrderedDict[str, None] = OrderedDict()
        """Platform event ids of held events this process runs (until `took` is asked)."""
        self._left: set[int] = set()
        """Events this process left unfinished and claimed (retried once the claim ends)."""
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._requested = 0
        """Bumped by every reason to look for work (an arrival, a finished turn)."""
        self._settled = -1
        """The last request a look answered with nothing to claim and nothing running."""
        self._wake = threading.Event()
        self._stopped = threading.Event()
        self._threads: list[threading.Thread] = []

    def store(self, message: ChatMessage, dedupe_key: str | None = None,
              rate: RateCheck | None = None, hold: bool = False) -> Future[bool]:
        """Store the event (do this before acking the platform); a process will claim it.
        Returns at once, so a caller on an event loop can use it: the Future completes once
        the event is committed (False when it is a duplicate: ack it, it is (being) answered
        already) or was not stored (the error). `rate` is counted in the same transaction
        (see Inbox.enqueue). The caller bounds its own wait (ack_writes.stored_within); a
        late write goes on and, once stored, is answered.

        With `hold`, a caller waits for the turn on this process: the write claims the
        event for it when it is its conversation's next (ports.Hold) and this process runs
        that turn (`took` says whether it does); otherwise a claimer answers it in order."""
        if message.event_id is None:
            raise ValueError("inbox events need an event id")
        stored: Future[bool] = Future()
        stored.set_running_or_notify_cancel()  # a write once queued is not called off

        def committed(write: Future[int | None]) -> None:  # on the group commit's thread
            error = write.exception()
            if error is not None:
                stored.set_exception(error)
                return
            inbox_id = write.result()
            if inbox_id is not None:  # one wake-up for the whole batch (batching.py)
                once_after_batch(self._announce_stored)
            if inbox_id is not None and hold:  # reads: not on the group commit's thread
                self._pool.submit(self._run_held, inbox_id, stored)
                return
            stored.set_result(inbox_id is not None)

        claim = Hold(self.holder, self.lease_seconds) if hold else None
        self.inbox.enqueue_soon(message, dedupe_key, rate, claim).add_done_callback(committed)
        return stored

    def _run_held(self, inbox_id: int, stored: Future[bool]) -> None:
        """Run the turn of an event stored with `hold`, if the write claimed it for us."""
        try:
            event = (self.inbox.stored_event(inbox_id)
                     if self.inbox.holds(self.holder, inbox_id, 0) else None)
        except Exception as error:  # stored all the same: a claimer answers it
            logger.warning("could not read held inbox event %s: %s", inbox_id, error)
            event = None
        if event is None:
            stored.set_result(True)
            return
        with self._lock:
            self._running[event.id] = event
            self._taken[event.event_id] = None
            while len(self._taken) > HELD_TURNS_REMEMBERED:
                self._taken.popitem(last=False)
        self._start_threads()  # its claim is renewed while the turn runs
        stored.set_result(True)
        self._run(event)

    def took(self, event_id: str) -> bool:
        """Whether this process runs the turn of the held event `event_id` (asked once,
        after its `store` completed)."""
        with self._lock:
            return self._taken.pop(event_id, False) is None

    def submit(self, message: ChatMessage, dedupe_key: str | None = None,
               deadline: float | None = None,
               on_late_failure: LateFailure | None = None,
               rate: RateCheck | None = None) -> bool:
        """`store`, waited for: True when new. With a `deadline` (seconds), an event not
        stored by then raises AckDeadlineError; a failure after it goes to
        `on_late_failure` (see ack_writes.stored_within)."""
        return stored_within(self.store(message, dedupe_key, rate), deadline,
                             f"event {message.event_id}", on_late_failure)

    def within_deadline(self, work: Callable[[], int], deadline: float) -> int:
        """Ack-path work that writes (a rate-limit check), within `deadline` (see
        AckWriters.within_deadline)."""
        return self._acks.within_deadline(work, deadline)

    def _announce_stored(self) -> None:
        if self.on_stored is not None:
            self.on_stored()
        self.poke()  # most likely this process claims it, on its next look (right away)

    def resume(self) -> int:
        """Start looking for work (events left unfinished included); returns how many events
        are unfinished now, whichever process will answer them."""
        with self._lock:
            left = sorted(self._left - set(self._running))
            self._left.clear()
        try:  # what this process left claimed (a turn the database refused) is taken up now
            self.inbox.release_claims(self.holder, left)
        except Exception as error:  # its claims expire anyway
            logger.warning("could not release inbox claims: %s", error)
        events = self.inbox.unfinished()
        self.poke()
        return len([event for event in events if event.platform == self.platform
                    or not self.platform])

    def poke(self) -> None:
        """Look for claimable events now (starting the poller the first time)."""
        if not self.capacity:
            return  # it claims nothing: no poller
        with self._lock:
            self._requested += 1
        self._start_threads()
        self._wake.set()

    def _start_threads(self) -> None:
        """The poller and the claims' renewal, the first time there is work."""
        with self._lock:
            if not self._threads and not self._stopped.is_set():
                self._threads = [threading.Thread(target=loop, name=name, daemon=True)
                                 for loop, name in ((self._poll, "inbox-poll"),
                                                    (self._renew, "inbox-renew"))]
                for thread in self._threads:
                    thread.start()

    def _poll(self) -> None:
        while not self._stopped.is_set():
            self._wake.wait(self.poll_seconds)
            self._wake.clear()
            with self._lock:
                request = self._requested
            claimed = self._claim_free_slots()
            with self._lock:
                # Settled only by a look that began after the last reason to look: a turn
                # that finished during this one may have made its conversation's next
                # event claimable after the claim query ran (poke set `_wake` again).
                if not claimed and not self._running and self._requested == request:
                    self._settled = request
                    self._idle.notify_all()

    def _claim_free_slots(self) -> int:
        with self._lock:
            free = self.capacity - len(self._running)
        if free <= 0 or self._stopped.is_set():
            return 0
        backlog = self.engine.model_backlog
        if backlog is not None and backlog.queued():
            # Its turns already wait for its share of the model: a process (or replica) with
            # room takes the event. Its next finished turn looks again.
            return 0
        try:
            events = self.inbox.claim(self.platform, self.holder, self.lease_seconds, free)
        except Exception as error:  # a busy or unreachable database: the next look retries
            logger.warning("could not claim inbox events: %s", error)
            return 0
        for event in events:
            with self._lock:
                self._running[event.id] = event
            self._pool.submit(self._run, event)
        return len(events)

    def _run(self, event: InboxEvent) -> None:
        try:
            self._process(event)
        except Exception:  # its claim expires, and the event is taken up again
            logger.exception("inbox event %s failed; it stays unfinished", event.id)
            with self._lock:
                self._left.add(event.id)
        finally:
            with self._lock:
                self._running.pop(event.id, None)
                self._lost.discard(event.id)
            self.poke()  # the conversation's next event may be claimable now

    def _renew(self) -> None:
        """Extend the claims of running turns every third of the lease."""
        while not self._stopped.wait(self.lease_seconds / 3):
            with self._lock:
                ids = list(self._running)
            if not ids:
                continue
            try:
                held = self.inbox.renew_claims(self.holder, ids, self.lease_seconds)
            except Exception as error:  # the next renewal tries again, within the lease
                logger.warning("could not renew inbox claims: %s", error)
                continue
            lost = set(ids) - held
            if lost:
                logger.warning("inbox claims lost to another process: %s", sorted(lost))
                with self._lock:
                    self._lost |= lost & set(self._running)

    def _still_mine(self, event: InboxEvent) -> bool:
        """Right before delivering: is the claim still this process's, for long enough that
        no other process can take the event while the reply goes out? A claim with a third of
        its lease left (the renewal thread keeps a running event's claim above that) is
        read, not written: a write per delivery queued behind every turn's commit. A claim
        nearer its end (the database was away) is renewed, which answers too; one that lapsed
        may have been taken."""
        with self._lock:
            if event.id in self._lost:
                return False
        try:
            if self.inbox.holds(self.holder, event.id, self.lease_seconds / 3):
                return True
            return event.id in self.inbox.renew_claims(self.holder, [event.id],
                                                       self.lease_seconds)
        except Exception as error:  # cannot tell: its claim expires, and it is taken up
            logger.warning("could not confirm the claim on inbox event %s: %s", event.id, error)
            raise

    def _process(self, event: InboxEvent) -> None:
        result = event.result
        notice = event.message.notice
        if event.status == "pending" and notice is not None:
            delivered = self.delivery.with_retries(
                event, lambda: self.delivery.notice(event.message, notice.text()))
            if not delivered:
                return
            if notice.replaces_turn:  # a refusal: the notice is the whole reply, no turn runs
                self.inbox.finish(event.id, "done")
                return
        if event.status == "pending" and event.message.direct is not None:
            self._process_direct(event)
            return
        if event.status == "pending":
            if self.outlet.before_turn is not None:
                self._call_quietly(self.outlet.before_turn, event)
            stream_for = self.outlet.stream_for
            sink = stream_for(event.message) if stream_for is not None else None
            result = self.engine.handle(event.message, on_partial=sink)
            if result is not None and result.status == "storage_unavailable":
                self._tell_not_saved(event, result)
                return
            try:
                if result is not None:  # None: answered elsewhere; keep the stored answer
                    self.inbox.record_answer(event.id, result)
            except StorageUnavailableError as error:
                # The turn is committed; only this mark failed. Deliver it now: resumed
                # later, the event is found answered (event_seen) and not run again.
                logger.error("inbox event %s answered, but not marked so: %s", event.id, error)
        if result is None:
            # Answered before: by another process that held this event before its claim
            # expired (its answer is stored with the event, it may not have delivered it),
            # or a duplicate delivery of the same event.
            stored = self.inbox.stored_event(event.id)
            if stored is None or stored.result is None:
                self.inbox.finish(event.id, "done")
                return
            event, result = stored, stored.result
        if event.status == "answered" and self.delivery.before_restart(event, result):
            self.inbox.finish(event.id, "done")
            return
        if not self._still_mine(event):  # another process took the event: it delivers
            return
        answer, deliver = result, self.delivery.deliver
        if self.delivery.with_retries(event, lambda: deliver(event.message, answer)):
            self.inbox.finish(event.id, "done")

    def _process_direct(self, event: InboxEvent) -> None:
        """A request the adapter answers itself (no turn), once: the adapter records the
        posted reply before the event is done, and skips one it finds posted."""
        answer = self.outlet.direct
        if answer is None:
            raise RuntimeError("this worker cannot answer direct requests")
        if self.delivery.with_retries(event, lambda: answer(event.message)):
            self.inbox.finish(event.id, "done")

    @staticmethod
    def _call_quietly(hook: Callable[[ChatMessage], None], event: InboxEvent) -> None:
        try:
            hook(event.message)
        except Exception as error:  # a status line must never cost the answer
            logger.info("before-turn hook failed for inbox event %s: %s", event.id, error)

    def _tell_not_saved(self, event: InboxEvent, result: TurnResult) -> None:
        """The database refused the turn (logged once by the engine): tell the user once, and
        write nothing more. The event stays `pending` and claimed: once the claim expires
        (not renewed any more), a process takes it up again, so nothing is retried in a loop
        and the turn runs when the database is back."""
        with self._lock:
            self._left.add(event.id)
            if event.id in self._told:
                return
            self._told.add(event.id)
        try:
            self.delivery.deliver(event.message, result)
        except Exception as error:
            logger.warning("could not tell the user that inbox event %s was not saved: %s",
                           event.id, error)

    def wait_idle(self, timeout: float = 30.0) -> bool:
        """Block until this process has no turn running and a look found nothing it could
        claim (tests, shutdown)."""
        if not self.capacity:
            return True  # it runs no turns
        self.poke()
        with self._idle:
            target = self._requested
            return self._idle.wait_for(
                lambda: self._settled >= target and not self._running, timeout=timeout)

    def close(self) -> None:
        self._stopped.set()
        self._wake.set()
        for thread in self._threads:
            thread.join(timeout=5)
        self._acks.close()
        self._pool.shutdown(wait=True)
