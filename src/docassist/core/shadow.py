"""The shadow selector: a candidate asked what it would have done after a turn's commit, on
its own thread and outside the conversation lock. Its proposal is recorded, never acted on;
`docassist eval shadow` reads the agreement."""

from __future__ import annotations

import logging
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_all

from docassist.core.planning import Plan
from docassist.core.ports import SelectorModel, ShadowLog
from docassist.core.results import TurnResult
from docassist.core.selection import Decision, normalize, propose_action
from docassist.core.trace import ShadowRecord
from docassist.core.tracing import now

logger = logging.getLogger(__name__)


class ShadowAsker:
    """Asks a candidate selector beside the active one (one worker thread, started on first
    use); the selectors and the log are passed per turn, as the engine holds them then."""

    def __init__(self) -> None:
        self._worker: ThreadPoolExecutor | None = None
        self._pending: set[Future[None]] = set()

    def ask_later(self, plan: Plan, result: TurnResult, *, log: ShadowLog,
                  active: SelectorModel, candidate: SelectorModel) -> None:
        if self._worker is None:
            self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="shadow")
        future = self._worker.submit(_record, plan, result, log, active, candidate)
        self._pending.add(future)
        future.add_done_callback(self._pending.discard)

    def wait(self, timeout: float | None = None) -> None:
        """Block until the proposals asked so far are recorded (tests, shutdown)."""
        wait_all(list(self._pending), timeout=timeout)


def shadow_record(plan: Plan, result: TurnResult, selector: SelectorModel,
                  shadow: SelectorModel) -> ShadowRecord:
    """Ask the candidate (`shadow`) what it would have done; never act on it."""
    assert plan.request is not None
    error: str | None = None
    try:
        candidate = normalize(propose_action(plan.request, shadow))
    except Exception as problem:  # a broken candidate must not hurt the user
        error = f"{type(problem).__name__}: {problem}"
        candidate = Decision(status="parse_error", reason="shadow_error")
    active = plan.decision
    return ShadowRecord(
        result_id=result.result_id, conversation_id=result.conversation_id,
        turn_id=result.turn_id, created_at=now(),
        active_backend=selector.backend, active_model=selector.model,
        active_status=active.status, active_action=active.action,
        candidate_backend=shadow.backend, candidate_model=shadow.model,
        candidate_status=candidate.status, candidate_action=candidate.action,
        agree=error is None and (candidate.status, candidate.action, candidate.arguments)
        == (active.status, active.action, active.arguments),
        candidate_error=error, catalog_version=result.catalog_version)


def _record(plan: Plan, result: TurnResult, log: ShadowLog, active: SelectorModel,
            candidate: SelectorModel) -> None:
    try:
        log.record_shadow(shadow_record(plan, result, active, candidate))
    except Exception:  # a broken candidate or a busy database must not hurt anyone
        logger.exception("shadow record of %s not saved", result.result_id)
