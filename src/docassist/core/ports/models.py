"""The seams to models: what a selector is asked and answers, the answerer (`can_stream`
declared), and a model server's chat client."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol, TypedDict

from pydantic import BaseModel, ConfigDict, Field

from docassist.core.ports.search import SearchHit
from docassist.core.state import HistoryMessage
from docassist.core.statuses import Language


class StateSummary(BaseModel):
    model_config = ConfigDict(extra="forbid")

    has_last_sources: bool
    known_document_ids_in_message: list[str] = Field(default_factory=list)
    unknown_document_ids_in_message: list[str] = Field(default_factory=list)
    pending_clarification: str | None = None


class SelectionRequest(BaseModel):
    """Everything a selector may look at for one message."""

    model_config = ConfigDict(extra="forbid")

    message: str
    standalone_question: str
    history: list[HistoryMessage]
    state_summary: StateSummary
    tool_specs: list[dict[str, Any]]
    language: Language


class SelectorModel(Protocol):
    """Something that reads a selection prompt and returns raw text (JSON, hopefully)."""

    backend: str
    model: str

    def propose(self, request: SelectionRequest) -> str: ...


class Answerer(Protocol):
    """Writes an answer from retrieved chunks, citing chunk ids in brackets."""

    backend: str
    model: str | None
    """The model behind it, for the traces; None when no model writes (extractive)."""
    can_stream: bool
    """True when `compose_stream` yields the answer as it is written; only then is it called."""

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
