"""One turn, start to finish: the pipeline every adapter calls.

`TurnEngine.handle` drops duplicate events, serializes turns per conversation and runs
`_turn`, which reads top to bottom: begin, early reply (clear, invalid message), plan,
execute at most once, compose the reply, commit (one call on the store). A shadow selector,
when configured, is asked after the commit, on its own thread, outside the conversation lock.
"""

from __future__ import annotations

import logging
import random
import time
import uuid
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_all
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from docassist.core import i18n
from docassist.core.documents import is_document_id
from docassist.core.errors import (
    ConcurrentUpdateError,
    DuplicateEventError,
    ModelError,
    StorageUnavailableError,
)
from docassist.core.followup import Resolution
from docassist.core.gaps import QuestionRecorder
from docassist.core.limits import MAX_MESSAGE_CHARS
from docassist.core.locks import KeyedLocks
from docassist.core.messages import ChatMessage, Command, ConversationKey, InvalidMessage
from docassist.core.messages import validate_message as check_message
from docassist.core.planning import Plan, plan_turn
from docassist.core.ports import (
    NULL_OBSERVER,
    Answerer,
    Catalog,
    Observer,
    Retriever,
    SelectorModel,
    TurnStore,
)
from docassist.core.replies import Reply, compose_reply, storage_problem_text
from docassist.core.results import (
    ConversationView,
    DecisionView,
    ToolView,
    TurnResult,
)
from docassist.core.retrieval import TimedRetriever
from docassist.core.scopes import Audience, Scope
from docassist.core.scoping import (
    NoScopeRules,
    ScopeResolver,
    scoped,
    scoped_catalog,
    thread_audience,
)
from docassist.core.selection import (
    Decision,
    Selection,
    normalize,
    propose_action,
    tool_catalog_version,
)
from docassist.core.stale import AskAgainRefused, question_to_ask_again
from docassist.core.state import (
    ConversationState,
    PendingClarification,
    RagResult,
    TurnSummary,
)
from docassist.core.tools import ToolContext, ToolExecutor, ToolOutcome, ToolRegistry
from docassist.core.trace import ShadowRecord, ToolCallRecord, TurnRecord, sha256_text

logger = logging.getLogger(__name__)

HELD_BACK_WARNING = "sources_held_back"
"""A RAG warning: the asker's own collections answer what this channel may not see."""
MAX_COMMIT_RETRIES = 8
"""Times a turn is re-run when another writer (process) changed the conversation under it."""
RETRY_BACKOFF_SECONDS = 0.02


@dataclass(frozen=True)
class EngineOptions:
    default_language: i18n.Language = "en"
    human_channel: str = "#docassist-help"
    save_raw: bool = False


@dataclass
class _Turn:
    """What one turn has learnt so far; `Reply` is what it will say."""

    message: ChatMessage
    state: ConversationState
    version: int
    turn_id: int
    result_id: str
    language: i18n.Language
    started: float
    text: str | None = None
    plan: Plan | None = None
    outcome: ToolOutcome | None = None
    rag: RagResult | None = None
    on_partial: Callable[[str], None] | None = None
    audience: Audience | None = None
    """The message's audience, as narrow as the thread has been (`scoping.thread_audience`)."""
    scope: Scope | None = None
    """The collections this turn may search (from the audience)."""
    catalog: Catalog | None = None
    """The catalog seen through the scope: out of scope = unknown."""
    retriever: Retriever | None = None
    """The retriever restricted to the scope inside its ranking."""


class TurnEngine:
    def __init__(
        self,
        *,
        store: TurnStore,
        catalog: Catalog,
        retriever: Retriever,
        selector: SelectorModel,
        answerer: Answerer,
        registry: ToolRegistry,
        options: EngineOptions | None = None,
        shadow: SelectorModel | None = None,
        scopes: ScopeResolver | None = None,
        observer: Observer = NULL_OBSERVER,
        questions: QuestionRecorder | None = None,
    ) -> None:
        self.store = store
        self.catalog = catalog
        self.retriever = retriever
        self.selector = selector
        self.answerer = answerer
        self.registry = registry
        self.executor = ToolExecutor(registry)
        self.options = options or EngineOptions()
        self.scopes = scopes or ScopeResolver(NoScopeRules())
        """Decides each message's collections from its audience (issue 22)."""
        self.shadow = shadow
        """A candidate selector asked beside the active one; its proposals are only recorded."""
        self.questions = questions
        """Keeps each question as a vector for `docassist gaps`, after the commit."""
        self.observer = observer
        """Told of every turn (status, decision, duration) and search (metrics.py)."""
        self._locks = KeyedLocks()
        self._shadow_worker: ThreadPoolExecutor | None = None
        self._shadow_pending: set[Future[None]] = set()

    def catalog_for(self, audience: Audience) -> Catalog:
        """The catalog as this audience may see it (document lists, suggested prompts)."""
        return scoped_catalog(self.catalog, self.scopes.scope_of(audience))

    @property
    def tool_catalog_version(self) -> str:
        """Hash of the tool specs and prompt (not the document catalog); see selection."""
        return tool_catalog_version(self.registry.specs())

    def handle(
        self, message: ChatMessage, on_partial: Callable[[str], None] | None = None
    ) -> TurnResult | None:
        """Run one turn; None when the event id was already handled (a platform retry).

        `on_partial` receives answer sentences as a streaming answerer releases them. When the
        database cannot take writes, the result has status `storage_unavailable`: nothing was
        recorded, and the answer says so.
        """
        started = time.perf_counter()
        with self._locks.hold(message.key):
            try:
                done = self._run_until_committed(message, on_partial)
            except DuplicateEventError:
                return None  # the same event answered meanwhile by another worker or process
            except StorageUnavailableError as error:
                return self._observed(self._not_saved(message, error), started)
        if done is None:
            return None
        turn, result = done
        self._ask_shadow_later(turn, result)
        if self.questions is not None:
            self.questions.after_turn(result.conversation.standalone_question or turn.text,
                                      result, turn.rag)
        return self._observed(result, started)

    def _observed(self, result: TurnResult, started: float) -> TurnResult:
        """Tell the observer (metrics) and the log: ids and hashes only, never the text."""
        seconds = time.perf_counter() - started
        decision = result.decision.status or "none"  # replies decided before any plan
        self.observer.turn_finished(result.status, decision, seconds)
        logger.info("turn finished", extra={
            "turn_id": result.result_id, "conversation": result.conversation_id,
            "status": result.status, "decision": decision,
            "duration_ms": round(seconds * 1000, 1)})
        return result

    def _run_until_committed(
        self, message: ChatMessage, on_partial: Callable[[str], None] | None
    ) -> tuple[_Turn, TurnResult] | None:
        for attempt in range(1, MAX_COMMIT_RETRIES + 1):
            if message.event_id and self.store.event_seen(message.key.platform, message.event_id):
                return None
            try:
                # A turn that cannot be recorded must not act: check before any tool.
                self.store.ensure_writable()
                return self._turn(message, on_partial)
            except ConcurrentUpdateError:
                if attempt == MAX_COMMIT_RETRIES:
                    raise
                # Another process wrote this conversation: wait, then load it again.
                time.sleep(random.uniform(0.5, 1.5) * RETRY_BACKOFF_SECONDS * attempt)
        raise AssertionError("unreachable")

    # --- the turn ---------------------------------------------------------------------

    def _turn(
        self, message: ChatMessage, on_partial: Callable[[str], None] | None
    ) -> tuple[_Turn, TurnResult]:
        """One turn, top to bottom."""
        turn = self._begin(message, on_partial)
        reply = self._early_reply(turn)  # clear, invalid message
        if reply is None:
            turn.plan, reply = self._plan(turn)  # a reply here: the selector's model is down
        if reply is None:
            if turn.plan is not None and turn.plan.decision.status == "action_proposed":
                self._execute(turn)  # at most once per turn
            reply = self._compose(turn)
        return turn, self._commit(turn, reply)

    def _begin(self, message: ChatMessage, on_partial: Callable[[str], None] | None) -> _Turn:
        stored = self.store.load(message.key)
        state = stored.state.model_copy(deep=True)
        language = self._thread_language(state)
        if isinstance(message.text, str) and message.command is None:
            # "/sources" says nothing about the user's language; the thread does.
            language = i18n.detect_language(message.text, language)
        audience = thread_audience(message.audience, state)
        scope = self.scopes.scope_of(audience)
        return _Turn(
            message=message,
            state=state,
            version=stored.version,
            turn_id=state.begin_turn(),
            result_id=uuid.uuid4().hex[:16],
            language=language,
            started=time.perf_counter(),
            on_partial=on_partial,
            audience=audience,
            scope=scope,
            catalog=scoped_catalog(self.catalog, scope),
            retriever=scoped(self.retriever, scope),
        )

    def _early_reply(self, turn: _Turn) -> Reply | None:
        """The replies that need no plan: a cleared thread, a message that cannot be read.
        Sets `turn.text` (the checked message) when the turn goes on."""
        message, language = turn.message, turn.language
        if message.command is Command.CLEAR:
            return Reply("cleared", i18n.text("cleared", language), clear=True)
        if message.command is Command.ASK_AGAIN:
            return self._ask_again(turn)
        text = message.text
        if message.command is not None and not (isinstance(text, str) and text.strip()):
            text = f"/{message.command.value}"  # a button press carries no words
        try:
            turn.text = check_message(text)
        except InvalidMessage as problem:
            answer = i18n.text(problem.problem, language, length=problem.length,
                               limit=MAX_MESSAGE_CHARS)
            return Reply(problem.problem, answer, remember=False)
        return self._stale_choice(turn)

    def _ask_again(self, turn: _Turn) -> Reply | None:
        """"Ask again" on a stale note runs the thread's last question, resolved here (on
        the worker, in the conversation's order); a note that is not this thread's, or a
        thread with no question left, runs nothing and leaves the thread as it was."""
        note = (turn.message.command_argument or "").strip()
        try:
            turn.text = question_to_ask_again(self.store, turn.message.key, note, turn.state)
        except AskAgainRefused as refused:
            text = f"/{Command.ASK_AGAIN.value} {note[:40]}".strip()
            turn.plan = Plan(message=text, resolution=_unchanged(text),
                             decision=Decision(status="rejected", reason=refused.problem,
                                               decided_by="validation"))
            return Reply("invalid_message", refused.text(turn.language), remember=False)
        turn.language = i18n.detect_language(turn.text, turn.language)
        return None

    def _stale_choice(self, turn: _Turn) -> Reply | None:
        """A clicked choice answers the question it was shown under, and only while that
        question is the one pending: a click on an old or unknown one runs nothing and
        leaves the thread as it was (its pending question included)."""
        choice_for = turn.message.choice_for
        pending = turn.state.pending_clarification
        if choice_for is None or (pending is not None and pending.result_id == choice_for):
            return None
        assert turn.text is not None
        turn.plan = Plan(message=turn.text, resolution=_unchanged(turn.text),
                         decision=Decision(status="rejected", reason="stale_choice",
                                           decided_by="validation"))
        return Reply("invalid_message", i18n.text("choice_stale", turn.language),
                     remember=False)

    def _plan(self, turn: _Turn) -> tuple[Plan, Reply | None]:
        """A command's fixed plan, or the selector's; a handoff reply when its model is down."""
        text, command = turn.text, turn.message.command
        assert text is not None
        if command is Command.SHOW_SOURCES:
            return _command_plan(text, "show_last_sources", {}), None
        if command is Command.METADATA:
            argument = (turn.message.command_argument or "").strip()
            document_id = argument.upper() if is_document_id(argument.upper()) else argument
            return _command_plan(text, "get_document_metadata", {"document_id": document_id}), None
        try:
            return plan_turn(text, turn.state, catalog=_catalog(turn), selector=self.selector,
                             tool_specs=self.registry.specs(), language=turn.language), None
        except ModelError:
            plan = Plan(message=text, resolution=_unchanged(text),
                        decision=Decision(status="handoff", reason="model_unavailable",
                                          decided_by="handoff"))
            answer = i18n.text("handoff_model_down", turn.language,
                               channel=self.options.human_channel)
            return plan, Reply("handoff", answer)

    def _execute(self, turn: _Turn) -> None:
        plan = turn.plan
        assert plan is not None
        context = ToolContext(
            state=turn.state,
            catalog=_catalog(turn),
            retriever=TimedRetriever(turn.retriever or self.retriever, self.observer),
            answerer=self.answerer,
            current_message=plan.message,
            language=turn.language,
            on_partial=turn.on_partial,
        )
        call = {"action": plan.decision.action, "arguments": plan.decision.arguments}
        turn.outcome = self.executor.execute(call, context)
        if turn.outcome.status == "tool_completed" and turn.outcome.name == "answer_from_documents":
            turn.rag = RagResult.model_validate(turn.outcome.data)
            self._note_held_back(turn)

    def _note_held_back(self, turn: _Turn) -> None:
        """In a channel, when the asker's own collections hold an answer this channel may not
        see, say so (without a title) and offer a private answer: a warning the reply reads."""
        assert turn.rag is not None and turn.scope is not None and turn.plan is not None
        assert turn.audience is not None
        question = str(turn.plan.decision.arguments.get("question") or turn.plan.message)
        if self.scopes.answers_privately(turn.audience, turn.scope, self.retriever, question,
                                         turn.rag.similarity_threshold):
            turn.rag.warnings.append(HELD_BACK_WARNING)

    def _compose(self, turn: _Turn) -> Reply:
        assert turn.plan is not None
        reply = compose_reply(
            plan=turn.plan,
            outcome=turn.outcome,
            rag=turn.rag,
            state=turn.state,
            catalog=_catalog(turn),
            language=turn.language,
            human_channel=self.options.human_channel,
        )
        if turn.rag is not None and HELD_BACK_WARNING in turn.rag.warnings:
            reply.answer += "\n\n" + i18n.text("scope_held_back", turn.language)
        return reply

    def _commit(self, turn: _Turn, reply: Reply) -> TurnResult:
        """The result, the next state and the trace rows, saved in one call on the store."""
        result = self._result(turn, reply)
        state = _next_state(turn, reply, result)
        tool_rows = [
            tool_call_record(turn.outcome, attempt=1, result_id=turn.result_id,
                             key=turn.message.key, generation=turn.state.generation,
                             turn_id=turn.turn_id, catalog_version=result.catalog_version,
                             save_raw=self.options.save_raw)
        ] if turn.outcome is not None else []
        self.store.commit_turn(turn.message.key, state, turn.version,
                               self._turn_record(turn, result), tool_rows, result=result)
        return result

    def _result(self, turn: _Turn, reply: Reply) -> TurnResult:
        rag = turn.rag
        return TurnResult(
            result_id=turn.result_id,
            conversation_id=turn.message.key.conversation_id,
            generation=turn.state.generation,
            turn_id=turn.turn_id,
            status=reply.status,
            answer=reply.answer,
            language=turn.language,
            sources=reply.sources if reply.sources is not None else (rag.sources if rag else []),
            source_turn_id=reply.source_turn_id,
            metadata=reply.metadata,
            clarification=reply.clarification,
            decision=_decision_view(turn.plan),
            tool=_tool_view(turn.outcome),
            conversation=_conversation_view(turn.plan, turn.text),
            warnings=list(rag.warnings) if rag else [],
            duration_ms=round((time.perf_counter() - turn.started) * 1000, 3),
            catalog_version=self.tool_catalog_version,
            backend=self.selector.backend,
            model=self.selector.model,
        )

    # --- around the turn ----------------------------------------------------------------

    def _not_saved(self, message: ChatMessage, error: StorageUnavailableError) -> TurnResult:
        """The reply to a turn the database could not take: no state, no trace (there is
        nowhere to write them), so the one log line here is the record."""
        language = self.options.default_language
        if isinstance(message.text, str) and message.command is None:
            language = i18n.detect_language(message.text, language)
        logger.error("turn not saved (conversation %s, event %s): %s",
                     message.key.conversation_id, message.event_id, error)
        return TurnResult(
            result_id=uuid.uuid4().hex[:16],
            conversation_id=message.key.conversation_id,
            generation=0,
            turn_id=0,  # no turn was recorded
            status="storage_unavailable",
            answer=storage_problem_text(error, language),
            language=language,
            catalog_version=self.tool_catalog_version,
            backend=self.selector.backend,
            model=self.selector.model,
        )

    def _thread_language(self, state: ConversationState) -> i18n.Language:
        """The thread's language, for messages that don't tell (states saved before it was
        kept: the language of the last user message)."""
        if state.language is not None:
            return state.language
        default = self.options.default_language
        for item in reversed(state.history):
            if item.role == "user":
                return i18n.detect_language(item.content, default)
        return default

    # --- the shadow selector, off the user's path ---------------------------------------

    def _ask_shadow_later(self, turn: _Turn, result: TurnResult) -> None:
        plan = turn.plan
        if self.shadow is None or plan is None or plan.request is None:
            return
        if self._shadow_worker is None:
            self._shadow_worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="shadow")
        future = self._shadow_worker.submit(self._record_shadow, plan, result, self.shadow)
        self._shadow_pending.add(future)
        future.add_done_callback(self._shadow_pending.discard)

    def wait_for_shadows(self, timeout: float | None = None) -> None:
        """Block until the shadow proposals asked so far are recorded (tests, shutdown)."""
        wait_all(list(self._shadow_pending), timeout=timeout)

    def _record_shadow(self, plan: Plan, result: TurnResult, shadow: SelectorModel) -> None:
        try:
            self.store.record_shadow(self._shadow_record(plan, result, shadow))
        except Exception:  # a broken candidate or a busy database must not hurt anyone
            logger.exception("shadow record of %s not saved", result.result_id)

    def _shadow_record(self, plan: Plan, result: TurnResult,
                       shadow: SelectorModel) -> ShadowRecord:
        """Ask the candidate what it would have done; never act on it."""
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
            turn_id=result.turn_id, created_at=_now(),
            active_backend=self.selector.backend, active_model=self.selector.model,
            active_status=active.status, active_action=active.action,
            candidate_backend=shadow.backend, candidate_model=shadow.model,
            candidate_status=candidate.status, candidate_action=candidate.action,
            agree=error is None and (candidate.status, candidate.action, candidate.arguments)
            == (active.status, active.action, active.arguments),
            candidate_error=error, catalog_version=result.catalog_version)

    # --- trace rows -------------------------------------------------------------------

    def _searched(self, turn: _Turn) -> list[str]:
        """The collections the turn could search, by name (every known one for the CLI)."""
        names = turn.scope.names() if turn.scope is not None else None
        return self.scopes.rules.collection_names() if names is None else names

    def _answer_backend(self) -> str:
        model = self.answerer.model
        return f"{self.answerer.backend}:{model}" if model else self.answerer.backend

    def _turn_record(self, turn: _Turn, result: TurnResult) -> TurnRecord:
        plan = turn.plan
        selection = plan.selection if plan else None
        raw: dict[str, Any] | None = None
        if self.options.save_raw:
            raw = {
                "user": turn.message.user,
                "question": turn.text,
                "standalone_question": result.conversation.standalone_question,
                "answer": result.answer,
                "prompt": selection.prompt if selection else None,
                "raw_response": selection.raw_response if selection else None,
                "parse_error": selection.parse_error if selection else None,
            }
        standalone = result.conversation.standalone_question
        return TurnRecord(
            result_id=result.result_id,
            conversation_id=result.conversation_id,
            generation=result.generation,
            turn_id=result.turn_id,
            platform=turn.message.key.platform,
            created_at=_now(),
            status=result.status,
            decision_status=result.decision.status,
            decision_reason=result.decision.reason,
            decided_by=result.decision.decided_by,
            action=result.decision.action,
            tool_name=result.tool.name,
            tool_status=result.tool.status,
            error_code=result.tool.error_code or _selection_error(selection),
            language=result.language,
            question_sha256=sha256_text(turn.text),
            standalone_sha256=sha256_text(standalone),
            answer_sha256=sha256_text(result.answer),
            resolution_status=result.conversation.resolution_status,
            history_used=result.conversation.history_used,
            source_ids=[source.chunk_id for source in result.sources],
            source_turn_id=result.source_turn_id,
            warnings=result.warnings,
            duration_ms=result.duration_ms,
            backend=self.selector.backend if selection else "none",
            model=self.selector.model if selection else "none",
            answer_backend=self._answer_backend() if turn.rag else None,
            retriever=turn.rag.retriever if turn.rag else None,
            audience=(turn.audience or turn.message.audience).label(),
            collections=self._searched(turn),
            catalog_version=result.catalog_version,
            prompt_sha256=selection.prompt_sha256 if selection else None,
            user_sha256=sha256_text(turn.message.user),
            event_id=turn.message.event_id,
            raw=raw,
        )


def _catalog(turn: _Turn) -> Catalog:
    assert turn.catalog is not None  # set by _begin
    return turn.catalog


def tool_call_record(
    outcome: ToolOutcome,
    *,
    attempt: int,
    result_id: str,
    key: ConversationKey,
    generation: int,
    turn_id: int,
    catalog_version: str,
    save_raw: bool,
) -> ToolCallRecord:
    """The tool-trace row of one attempt; every attempt gets one, early returns included."""
    return ToolCallRecord(
        result_id=result_id,
        conversation_id=key.conversation_id,
        generation=generation,
        turn_id=turn_id,
        attempt=attempt,
        tool_name=outcome.name,
        status=outcome.status,
        error_code=outcome.error_code,
        arguments=_private_arguments(outcome.arguments, save_raw),
        duration_ms=outcome.duration_ms,
        created_at=_now(),
        catalog_version=catalog_version,
    )


def _next_state(turn: _Turn, reply: Reply, result: TurnResult) -> ConversationState:
    """The state the turn leaves: its RAG, its pending question, its exchange and summary."""
    state, plan = turn.state, turn.plan
    state.language = turn.language  # what this turn was answered in: the thread's now
    if turn.rag is not None:
        # A new RAG replaces the previous one, also when it found nothing.
        state.last_result = turn.rag
        state.last_sources = list(turn.rag.sources)
        state.last_source_turn_id = turn.turn_id
        state.last_source_result_id = turn.result_id
    clarification = reply.clarification
    if clarification is not None and plan is not None:
        state.pending_clarification = PendingClarification(
            missing_field=clarification.missing_field,
            original_message=plan.message,
            language=turn.language,
            attempts=clarification.attempts,
            options=[subject.key for subject in plan.options],
            result_id=turn.result_id,
        )
    elif reply.remember:
        state.pending_clarification = None
    if reply.remember and turn.text is not None:
        state.remember_exchange(turn.text, reply.answer)
    state.log_turn(TurnSummary(
        turn_id=turn.turn_id,
        result_id=turn.result_id,
        status=result.status,
        decision_status=result.decision.status,
        tool_status=result.tool.status,
        source_ids=[source.chunk_id for source in result.sources],
    ))
    if not reply.clear:
        return state
    fresh = state.cleared()  # `clear` forgets what was said, not the language it was in
    fresh.language = state.language
    return fresh


def _command_plan(text: str, action: str, arguments: dict[str, Any]) -> Plan:
    return Plan(message=text, resolution=_unchanged(text),
                decision=Decision(status="action_proposed", action=action, arguments=arguments,
                                  decided_by="command"))


def _unchanged(text: str) -> Resolution:
    return Resolution(original_question=text, standalone_question=text)


def _selection_error(selection: Selection | None) -> str | None:
    return "parse_error" if selection is not None and selection.parse_error else None


def _private_arguments(arguments: dict[str, Any], save_raw: bool) -> dict[str, Any]:
    """Text arguments become hashes unless raw saving is on; ids and numbers stay."""
    if save_raw:
        return arguments
    private: dict[str, Any] = {}
    for name, value in arguments.items():
        if isinstance(value, str) and name == "question":
            private[name] = {"sha256": sha256_text(value)}
        elif name == "translations" and isinstance(value, list):
            private[name] = [{"sha256": sha256_text(str(text))} for text in value]
        else:
            private[name] = value
    return private


def _decision_view(plan: Plan | None) -> DecisionView:
    if plan is None:
        return DecisionView()
    decision = plan.decision
    return DecisionView(status=decision.status, reason=decision.reason, action=decision.action,
                        arguments=decision.arguments, decided_by=decision.decided_by)


def _tool_view(outcome: ToolOutcome | None) -> ToolView:
    if outcome is None:
        return ToolView()
    return ToolView(name=outcome.name, status=outcome.status, error_code=outcome.error_code,
                    duration_ms=outcome.duration_ms, attempts=1)


def _conversation_view(plan: Plan | None, text: str | None) -> ConversationView:
    if plan is None:
        return ConversationView(original_question=text)
    resolution = plan.resolution
    return ConversationView(
        original_question=text,
        standalone_question=resolution.standalone_question,
        resolution_status=resolution.status,
        history_used=resolution.history_used,
    )


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")

