"""The seams to models: what a selector is asked and answers, the answerer (`can_stream`
declared), and a model server's chat client."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypedDict

from pydantic import BaseModel, ConfigDict, Field

from docassist.core.ports.search import SearchHit
from docassist.core.state import HistoryMessage
from docassist.core.statuses import Language

FollowUp = Literal["none", "resolved", "ambiguous", "unresolved"]
"""What the follow-up resolver made of a message: no reference to resolve, rewritten with
the one subject the history names, several subjects fit, or none does."""


class StateSummary(BaseModel):
    model_config = ConfigDict(extra="forbid")

    has_last_sources: bool
    known_document_ids_in_message: list[str] = Field(default_factory=list)
    unknown_document_ids_in_message: list[str] = Field(default_factory=list)
    pending_clarification: str | None = None
    follow_up: FollowUp = "none"
    names_a_title: bool = False
    """A short message ("testing", "code review") whose words a document's title holds: a
    topic to search, whatever it reads like. Not shown to a model selector (its recorded
    prompts stay as they were)."""


class LabelledExample(BaseModel):
    """A message of the selector's training bank and the decision it was labelled with:
    shown to a model selector as a worked example (data, never instructions)."""

    model_config = ConfigDict(extra="forbid")

    message: str
    has_history: bool
    has_last_sources: bool
    kind: str
    decision: str
    action: str | None = None


class SelectionRequest(BaseModel):
    """Everything a selector may look at for one message."""

    model_config = ConfigDict(extra="forbid")

    message: str
    standalone_question: str
    history: list[HistoryMessage]
    state_summary: StateSummary
    tool_specs: list[dict[str, Any]]
    language: Language
    examples: list[LabelledExample] = Field(default_factory=list)
    """Labelled messages nearest to this one, for a selector that reads a prompt."""


class ExampleSource(Protocol):
    """Where a model selector's few-shot examples come from (core/examples.py)."""

    version: str
    """A digest of the examples it can pick from: part of the tool catalog version."""

    def nearest(self, request: SelectionRequest) -> list[LabelledExample]: ...

    def load(self) -> None:
        """Load the embedder and the examples now (a server does, before its first event)."""
        ...


@dataclass(frozen=True)
class Reading:
    """What a learned selector read in a message: the bank kind it chose (the contract's
    finer label: `smalltalk`, `off_topic`, `injection`…, or `low_confidence`) and the
    calibrated probability of that kind's decision."""

    kind: str
    confidence: float


class SelectorModel(Protocol):
    """Something that reads a selection request and returns raw text (JSON, hopefully)."""

    backend: str
    model: str
    examples: ExampleSource | None
    """Labelled examples for its prompt (a model); None when it reads no prompt."""

    def propose(self, request: SelectionRequest) -> str: ...

    def reading(self, request: SelectionRequest) -> Reading | None:
        """The kind behind its last proposal for `request` (a learned selector); None for
        a selector that only proposes (a model)."""
        ...


class Answerer(Protocol):
    """Writes an answer from retrieved chunks, citing chunk ids in brackets."""

    backend: str
    model: str | None
    """The model behind it, for the traces; None when no model writes (extractive)."""
    can_stream: bool
    """True when `compose_stream` yields the answer as it is written; only then is it called."""
    reads_whole_page: bool
    """True when it chooses the passage itself from every section of the page it answers
    from (the sections retrieval did not return carry score 0); False: it is given only the
    retrieved ones (a model's prompt stays short)."""

    def compose(self, question: str, hits: list[SearchHit], language: str) -> str: ...

    def compose_stream(self, question: str, hits: list[SearchHit], language: str
                       ) -> Iterator[str]: ...


class Message(TypedDict):
    role: str
    content: str


class ChatModel(Protocol):
    """A model server's client: chat, streamed chat, embeddings."""

    backend: str
    model: str

    def chat(self, messages: list[Message], schema: dict[str, Any] | None = None) -> str: ...

    def chat_stream(self, messages: list[Message]) -> Iterator[str]: ...

    def embed(self, texts: list[str]) -> list[list[float]]: ...


class ModelBacklog(Protocol):
    """This process's share of the model's capacity (models/gate.py), as the inbox sees it."""

    def queued(self) -> bool:
        """True while a model request of this process waits for a free slot."""
        ...
