"""The tool catalog and the guarded executor.

Each tool is defined once: its name, its description for the model, its pydantic argument
model (whose JSON Schema goes into the prompt and which validates the model's arguments),
an optional state check and its function. The executor looks tools up by name in a registry
(never `eval`), allows one attempt per turn, validates, checks state, runs the function,
and normalizes what it returns. Every outcome is a value, never an exception.
"""

from __future__ import annotations

import copy
import json
import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Generic, Literal, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
)

from docassist.core.answering import answer_question
from docassist.core.documents import CITATION, DOCUMENT_ID_PATTERN
from docassist.core.errors import (
    ModelResponseError,
    ModelUnavailableError,
    StorageUnavailableError,
    ToolStateError,
    ToolValidationError,
)
from docassist.core.limits import (
    DEFAULT_TOP_K,
    MAX_DOCUMENT_ID_CHARS,
    MAX_QUESTION_CHARS,
    MAX_RESULT_CHARS,
    MAX_TOP_K,
    MAX_TRANSLATIONS,
)
from docassist.core.messages import InvalidMessage, validate_message
from docassist.core.ports import Answerer, Catalog, Retriever
from docassist.core.retrieval import TranslatedSearch
from docassist.core.state import ConversationState
from docassist.core.statuses import ToolStatus

logger = logging.getLogger(__name__)

@dataclass
class ToolContext:
    """What a tool may use: trusted application state, never anything the model supplies."""

    state: ConversationState
    catalog: Catalog
    retriever: Retriever
    answerer: Answerer
    current_message: str
    language: Literal["pl", "en"]
    on_partial: Callable[[str], None] | None = None
    """Receives answer text as it is released (sentence by sentence, citations checked)."""


def _checked_question(value: str) -> str:
    try:
        return validate_message(value, MAX_QUESTION_CHARS)
    except InvalidMessage as error:
        raise ValueError(error.problem) from error


class AnswerArguments(BaseModel):
    """Arguments of `answer_from_documents`."""

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)

    question: Annotated[
        str,
        StringConstraints(max_length=MAX_QUESTION_CHARS),
        AfterValidator(_checked_question),
    ] = Field(description="The standalone question to search the documents for.")
    top_k: Annotated[int, Field(ge=1, le=MAX_TOP_K)] = Field(
        default=DEFAULT_TOP_K, description="How many chunks to retrieve."
    )
    similarity_threshold: Annotated[float, Field(ge=-1, le=1)] | None = Field(
        default=None,
        description="Minimum score a chunk needs on the retriever's scale; omit it for the "
        "retriever's default, null for no threshold.",
    )

    def threshold_for(self, retriever: Retriever) -> float | None:
        """The threshold to apply: explicit value, explicit null, or the retriever default."""
        if "similarity_threshold" in self.model_fields_set:
            return self.similarity_threshold
        return retriever.default_threshold


class TranslatedAnswerArguments(AnswerArguments):
    """`answer_from_documents` as a model selector sees it: it may add translations."""

    translations: Annotated[
        list[Annotated[str, StringConstraints(max_length=MAX_QUESTION_CHARS),
                       AfterValidator(_checked_question)]],
        Field(max_length=MAX_TRANSLATIONS),
    ] = Field(
        default_factory=list,
        description="Optional. If the documents may be in other languages than the question, "
        "the standalone question in those languages (each is searched too).",
    )


class NoArguments(BaseModel):
    """`show_last_sources` takes nothing."""

    model_config = ConfigDict(extra="forbid", strict=True)


class MetadataArguments(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    document_id: Annotated[
        str,
        StringConstraints(max_length=MAX_DOCUMENT_ID_CHARS, pattern=DOCUMENT_ID_PATTERN.pattern),
    ] = Field(description="A catalog id written in the current message, e.g. DOC-INSTR.")


A = TypeVar("A", bound=BaseModel)
ToolFunction = Callable[[Any, ToolContext], Any]


@dataclass(frozen=True)
class ToolDefinition(Generic[A]):
    name: str
    description: str
    arguments_model: type[A]
    function: ToolFunction
    check: Callable[[A, ToolContext], None] | None = None

    def spec(self) -> dict[str, Any]:
        """Name, description and argument JSON Schema, as the selector sees them."""
        schema = self.arguments_model.model_json_schema()
        schema.pop("title", None)
        schema.pop("description", None)
        return {"name": self.name, "description": self.description, "parameters": schema}

    def validate(self, arguments: object, context: ToolContext) -> A:
        if not isinstance(arguments, dict):
            raise ToolValidationError("arguments_not_object")
        try:
            parsed = self.arguments_model.model_validate(arguments)
        except ValidationError as error:
            raise ToolValidationError(_error_code(error), str(error.errors()[0]["msg"])) from None
        if self.check is not None:
            self.check(parsed, context)
        return parsed


def _error_code(error: ValidationError) -> str:
    first = error.errors()[0]
    if first["type"] == "extra_forbidden":
        return "unexpected_argument"
    if first["type"] == "missing":
        return "missing_argument"
    field = str(first["loc"][0]) if first["loc"] else "arguments"
    return {"top_k": "invalid_top_k", "similarity_threshold": "invalid_threshold",
            "translations": "invalid_translations"}.get(
        field, f"invalid_{field}"
    )


# --- the three tools --------------------------------------------------------------------


def run_answer_from_documents(arguments: AnswerArguments, context: ToolContext) -> dict[str, Any]:
    translations = (arguments.translations if isinstance(arguments, TranslatedAnswerArguments)
                    else [])
    retriever = (TranslatedSearch(context.retriever, translations) if translations
                 else context.retriever)
    result = answer_question(
        arguments.question,
        retriever=retriever,
        answerer=context.answerer,
        top_k=arguments.top_k,
        threshold=arguments.threshold_for(retriever),
        language=context.language,
        catalog=context.catalog,
        on_partial=context.on_partial,
        thread_pages=frozenset(source.document_id for source in context.state.last_sources),
    )
    return result.model_dump()


def check_has_last_sources(_: NoArguments, context: ToolContext) -> None:
    if context.state.last_result is None:
        raise ToolStateError("no_last_sources")
    if not context.state.last_sources:
        raise ToolStateError("last_answer_had_no_sources")


def run_show_last_sources(_: NoArguments, context: ToolContext) -> dict[str, Any]:
    """The last answer's sources that this conversation may still see: checked again now
    (a scope may have narrowed since), the others withheld and only counted."""
    state = context.state
    visible = [source for source in state.last_sources
               if context.catalog.document(source.document_id) is not None]
    answer = state.last_result.answer if state.last_result is not None else ""
    return {
        "source_turn_id": state.last_source_turn_id,
        "source_result_id": state.last_source_result_id,
        "sources": [source.model_dump() for source in visible],
        "cited": list(dict.fromkeys(CITATION.findall(answer))),
        "withheld": len(state.last_sources) - len(visible),
    }


def check_known_document(arguments: MetadataArguments, context: ToolContext) -> None:
    if context.catalog.document(arguments.document_id) is None:
        raise ToolValidationError("unknown_document_id", arguments.document_id)
    if arguments.document_id.casefold() not in context.current_message.casefold():
        # The id must come from what the user wrote now, never from history or a guess.
        raise ToolValidationError("document_id_not_in_message", arguments.document_id)


def run_get_document_metadata(
    arguments: MetadataArguments, context: ToolContext
) -> dict[str, Any]:
    document = context.catalog.document(arguments.document_id)
    if document is None:  # removed between the check and the call
        raise ToolValidationError("unknown_document_id", arguments.document_id)
    return document.model_dump(exclude={"extra", "services"})


ANSWER_FROM_DOCUMENTS: ToolDefinition[AnswerArguments] = ToolDefinition(
    name="answer_from_documents",
    description="Search the indexed documents for the standalone question and answer from the "
    "retrieved chunks with citations. Use for every procedure question.",
    arguments_model=AnswerArguments,
    function=run_answer_from_documents,
)
ANSWER_FROM_DOCUMENTS_TRANSLATED: ToolDefinition[TranslatedAnswerArguments] = ToolDefinition(
    name=ANSWER_FROM_DOCUMENTS.name,
    description=ANSWER_FROM_DOCUMENTS.description,
    arguments_model=TranslatedAnswerArguments,
    function=run_answer_from_documents,
)
SHOW_LAST_SOURCES: ToolDefinition[NoArguments] = ToolDefinition(
    name="show_last_sources",
    description="Show the sources of this conversation's previous answer (no new search). "
    "Only when state_summary.has_last_sources is true.",
    arguments_model=NoArguments,
    function=run_show_last_sources,
    check=check_has_last_sources,
)
GET_DOCUMENT_METADATA: ToolDefinition[MetadataArguments] = ToolDefinition(
    name="get_document_metadata",
    description="Show the catalog entry (title, version, owner, updated…) of a document whose "
    "id is written in the current message.",
    arguments_model=MetadataArguments,
    function=run_get_document_metadata,
    check=check_known_document,
)


class ToolRegistry:
    """Tools by name; `register` adds one or puts a new definition in place of a tool."""

    def __init__(self, tools: list[ToolDefinition[Any]]) -> None:
        self._tools = {tool.name: tool for tool in tools}
        self.generation = 0
        """Counts `register` calls: what a view of the specs computed once is keyed by."""
        # Built once: pydantic's JSON Schema generation was ~25% of a turn's CPU (several
        # calls per turn), CPU that Slack acks then waited for under the GIL.
        self._specs = [tool.spec() for tool in tools]

    def get(self, name: str) -> ToolDefinition[Any] | None:
        return self._tools.get(name)

    def names(self) -> list[str]:
        return list(self._tools)

    def specs(self) -> list[dict[str, Any]]:
        return copy.deepcopy(self._specs)  # callers may change their copy

    def register(self, tool: ToolDefinition[Any]) -> ToolDefinition[Any] | None:
        """Add `tool`, or put it in place of the tool of the same name (returned)."""
        previous = self._tools.get(tool.name)
        self._tools[tool.name] = tool
        self._specs = [each.spec() for each in self._tools.values()]
        self.generation += 1
        return previous


def default_registry(*, translations: bool = False) -> ToolRegistry:
    """The three tools; with `translations` (a model selects), `answer_from_documents` also
    takes the question in the documents' languages. The rules selector never writes them."""
    answer = ANSWER_FROM_DOCUMENTS_TRANSLATED if translations else ANSWER_FROM_DOCUMENTS
    return ToolRegistry([answer, SHOW_LAST_SOURCES, GET_DOCUMENT_METADATA])


class ToolOutcome(BaseModel):
    """One attempt to run a tool, whatever happened."""

    model_config = ConfigDict(extra="forbid")

    attempt_id: str
    name: str | None
    status: ToolStatus
    data: dict[str, Any] | None = None
    error_code: str | None = None
    arguments: dict[str, Any] = Field(default_factory=dict)
    duration_ms: float


def normalize_output(output: object) -> dict[str, Any]:
    """A JSON-serialisable dict without NaN, at most MAX_RESULT_CHARS when serialised."""
    if not isinstance(output, dict):
        raise ToolValidationError("invalid_output")
    try:
        text = json.dumps(output, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as error:
        raise ToolValidationError("invalid_output") from error
    if len(text) > MAX_RESULT_CHARS:
        raise ToolValidationError("result_too_large")
    copied: dict[str, Any] = json.loads(text)
    return copied


class ToolExecutor:
    def __init__(self, registry: ToolRegistry) -> None:
        self.registry = registry

    def execute(self, call: object, context: ToolContext) -> ToolOutcome:
        """Run one proposed call `{"action": name, "arguments": {...}}` under every guard."""
        started = time.perf_counter()
        name: str | None = None
        arguments: dict[str, Any] = {}

        def finish(
            status: ToolStatus, data: dict[str, Any] | None = None, code: str | None = None
        ) -> ToolOutcome:
            return ToolOutcome(
                attempt_id=uuid.uuid4().hex,
                name=name,
                status=status,
                data=data,
                error_code=code,
                arguments=arguments,
                duration_ms=round((time.perf_counter() - started) * 1000, 3),
            )

        if context.state.tool_attempted_this_turn:
            return finish("tool_rejected", code="attempt_limit")
        # Set before any check: a rejected attempt also uses the turn's one attempt.
        context.state.mark_tool_attempted()
        if not isinstance(call, dict) or set(call) != {"action", "arguments"}:
            return finish("invalid_arguments", code="invalid_envelope")
        raw_name, raw_arguments = call["action"], call["arguments"]
        if isinstance(raw_arguments, dict):
            arguments = dict(raw_arguments)
        name = raw_name if isinstance(raw_name, str) else None
        tool = self.registry.get(raw_name) if isinstance(raw_name, str) else None
        if tool is None:
            return finish("unknown_tool", code="unknown_tool")
        try:
            parsed = tool.validate(raw_arguments, context)
        except ToolStateError as error:
            return finish("clarification_needed", code=error.code)
        except ToolValidationError as error:
            return finish("invalid_arguments", code=error.code)
        arguments = parsed.model_dump()
        try:
            output = normalize_output(tool.function(parsed, context))
        except ToolValidationError as error:
            return finish("tool_error", code=error.code)
        except ModelUnavailableError:
            logger.warning("tool %s: model unavailable", name)
            return finish("tool_error", code="model_unavailable")
        except ModelResponseError:
            logger.warning("tool %s: unusable model response", name)
            return finish("tool_error", code="model_bad_response")
        except StorageUnavailableError:
            # The database went away mid-turn (a restart, a lost connection): the turn
            # cannot be recorded either, so it ends as storage_unavailable, not a tool error
            # that a commit after the database came back would keep.
            raise
        except Exception:
            logger.exception("tool %s failed", name)
            return finish("tool_error", code="tool_execution_failed")
        return finish("tool_completed", data=output)
