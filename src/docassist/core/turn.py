"""One turn, start to finish: the pipeline every adapter calls.

`TurnEngine.handle` drops duplicate events, serializes turns per conversation and runs
`_turn`, which reads top to bottom: begin, early reply (clear, invalid message), plan,
execute at most once, compose the reply, commit (one call on the store). A shadow selector,
when configured, is asked after the commit, on its own thread, outside the conversation lock.

The steps that are a concern of their own live beside it: turn_context (what a turn has
learnt so far), early_replies (replies and plans that need no selector), turn_result (the
result and the next state), tracing (the trace rows), shadow (the shadow selector's thread).
"""

from __future__ import annotations

import logging
import random
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from docassist.core import i18n
from docassist.core.early_replies import command_plan, early_reply, model_down
from docassist.core.errors import (
    ConcurrentUpdateError,
    DuplicateEventError,
    ModelError,
    StorageUnavailableError,
)
from docassist.core.gaps import QuestionRecorder
from docassist.core.locks import KeyedLocks
from docassist.core.messages import ChatMessage
from docassist.core.planning import Plan, plan_turn
from docassist.core.ports import (
    NULL_OBSERVER,
    Answerer,
    Catalog,
    ModelBacklog,
    Observer,
    Retriever,
    SelectorModel,
    TurnStore,
)
from docassist.core.replies import Reply, compose_reply
from docassist.core.results import TurnResult
from docassist.core.retrieval import TimedRetriever
from docassist.core.scopes import Audience
from docassist.core.scoping import (
    NoScopeRules,
    ScopeResolver,
    scoped,
    scoped_catalog,
    thread_audience,
)
from docassist.core.selection import selector_catalog_version
from docassist.core.shadow import ShadowAsker
from docassist.core.state import ConversationState, RagResult
from docassist.core.tools import ToolContext, ToolExecutor, ToolRegistry
from docassist.core.tracing import Backends, tool_call_record, turn_record
from docassist.core.turn_context import TurnContext
from docassist.core.turn_result import next_state, turn_result, unsaved_result

__all__ = ["EngineOptions", "TurnEngine", "tool_call_record"]
"""`tool_call_record` lives in tracing.py; re-exported for the callers that import it here."""

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
        model_backlog: ModelBacklog | None = None,
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
        self.model_backlog = model_backlog
        """Whether this process's model requests already queue (the inbox claims no more)."""
        self._locks = KeyedLocks()
        self._shadows = ShadowAsker()
        self._catalog_version: tuple[int, str] | None = None

    def catalog_for(self, audience: Audience) -> Catalog:
        """The catalog as this audience may see it (document lists, suggested prompts)."""
        return scoped_catalog(self.catalog, self.scopes.scope_of(audience))

    @property
    def tool_catalog_version(self) -> str:
        """Hash of the tool specs, prompt and a model's worked examples (not the document
        catalog); see selection. Computed again only after the registry changed (a turn asks
        for it twice)."""
        generation = self.registry.generation
        cached = self._catalog_version
        if cached is None or cached[0] != generation:
            cached = self._catalog_version = (generation, selector_catalog_version(
                self.registry.specs(), self.selector))
        return cached[1]

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
    ) -> tuple[TurnContext, TurnResult] | None:
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
    ) -> tuple[TurnContext, TurnResult]:
        """One turn, top to bottom."""
        turn = self._begin(message, on_partial)
        reply = early_reply(turn, self.store)  # clear, ask again, invalid message, stale choice
        if reply is None:
            turn.plan, reply = self._plan(turn)  # a reply here: the selector's model is down
        if reply is None:
            if turn.plan is not None and turn.plan.decision.status == "action_proposed":
                self._execute(turn)  # at most once per turn
            reply = self._compose(turn)
        return turn, self._commit(turn, reply)

    def _begin(self, message: ChatMessage, on_partial: Callable[[str], None] | None) -> TurnContext:
        stored = self.store.load(message.key)
        state = stored.state  # the caller's own (ConversationStore.load)
        language = self._thread_language(state)
        if isinstance(message.text, str) and message.command is None:
            # "/sources" says nothing about the user's language; the thread does.
            language = i18n.detect_language(message.text, language)
        audience = thread_audience(message.audience, state)
        scope = self.scopes.scope_of(audience)
        return TurnContext(
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

    def _plan(self, turn: TurnContext) -> tuple[Plan, Reply | None]:
        """A command's fixed plan, or the selector's; a handoff reply when its model is down."""
        text = turn.text
        assert text is not None
        fixed = command_plan(turn)
        if fixed is not None:
            return fixed, None
        try:
            return plan_turn(text, turn.state, catalog=turn.scoped_catalog(),
                             selector=self.selector, tool_specs=self.registry.specs(),
                             language=turn.language), None
        except ModelError:
            return model_down(text, turn.language, self.options.human_channel)

    def _execute(self, turn: TurnContext) -> None:
        plan = turn.plan
        assert plan is not None
        context = ToolContext(
            state=turn.state,
            catalog=turn.scoped_catalog(),
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

    def _note_held_back(self, turn: TurnContext) -> None:
        """In a channel, when the asker's own collections hold an answer this channel may not
        see, say so (without a title) and offer a private answer: a warning the reply reads."""
        assert turn.rag is not None and turn.scope is not None and turn.plan is not None
        assert turn.audience is not None
        question = str(turn.plan.decision.arguments.get("question") or turn.plan.message)
        if self.scopes.answers_privately(turn.audience, turn.scope, self.retriever, question,
                                         turn.rag.similarity_threshold):
            turn.rag.warnings.append(HELD_BACK_WARNING)

    def _compose(self, turn: TurnContext) -> Reply:
        assert turn.plan is not None
        reply = compose_reply(
            plan=turn.plan,
            outcome=turn.outcome,
            rag=turn.rag,
            state=turn.state,
            catalog=turn.scoped_catalog(),
            language=turn.language,
            human_channel=self.options.human_channel,
        )
        if turn.rag is not None and HELD_BACK_WARNING in turn.rag.warnings:
            reply.answer += "\n\n" + i18n.text("scope_held_back", turn.language)
        if (reply.status == "no_answer" and turn.rag is not None
                and not turn.rag.closest_document_ids and not self.catalog.documents()):
            # Nothing came back because nothing is indexed (not even outside this
            # audience's scope): say so, and how administrators fix it.
            reply.answer = i18n.text("nothing_indexed", turn.language)
        return reply

    def _commit(self, turn: TurnContext, reply: Reply) -> TurnResult:
        """The result, the next state and the trace rows, saved in one call on the store."""
        backends = self._backends()
        result = turn_result(turn, reply, catalog_version=self.tool_catalog_version,
                             backends=backends)
        state = next_state(turn, reply, result)
        save_raw = self.options.save_raw
        tool_rows = [
            tool_call_record(turn.outcome, attempt=1, result_id=turn.result_id,
                             key=turn.message.key, generation=turn.state.generation,
                             turn_id=turn.turn_id, catalog_version=result.catalog_version,
                             save_raw=save_raw)
        ] if turn.outcome is not None else []
        record = turn_record(turn, result, backends=backends, collections=self._searched(turn),
                             save_raw=save_raw)
        self.store.commit_turn(turn.message.key, state, turn.version, record, tool_rows,
                               result=result)
        return result

    # --- around the turn ----------------------------------------------------------------

    def _not_saved(self, message: ChatMessage, error: StorageUnavailableError) -> TurnResult:
        """The reply to a turn the database could not take: no state, no trace (there is
        nowhere to write them), so the one log line here is the record."""
        language = self.options.default_language
        if isinstance(message.text, str) and message.command is None:
            language = i18n.detect_language(message.text, language)
        logger.error("turn not saved (conversation %s, event %s): %s",
                     message.key.conversation_id, message.event_id, error)
        return unsaved_result(message, error, language=language,
                              catalog_version=self.tool_catalog_version,
                              backends=self._backends())

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

    def _ask_shadow_later(self, turn: TurnContext, result: TurnResult) -> None:
        plan = turn.plan
        if self.shadow is None or plan is None or plan.request is None:
            return
        self._shadows.ask_later(plan, result, log=self.store, active=self.selector,
                                candidate=self.shadow)

    def wait_for_shadows(self, timeout: float | None = None) -> None:
        """Block until the shadow proposals asked so far are recorded (tests, shutdown)."""
        self._shadows.wait(timeout)

    # --- trace rows -------------------------------------------------------------------

    def _searched(self, turn: TurnContext) -> list[str]:
        """The collections the turn could search, by name (every known one for the CLI)."""
        names = turn.scope.names() if turn.scope is not None else None
        return self.scopes.rules.collection_names() if names is None else names

    def _backends(self) -> Backends:
        model = self.answerer.model
        answer = f"{self.answerer.backend}:{model}" if model else self.answerer.backend
        return Backends(selector_backend=self.selector.backend,
                        selector_model=self.selector.model, answer_backend=answer)

