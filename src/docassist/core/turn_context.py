"""What one turn has learnt so far, passed from step to step of `TurnEngine._turn`.

Its own module so that the steps kept outside turn.py (result shaping in turn_result.py,
trace rows in tracing.py) read the same record the engine fills in.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from docassist.core.messages import ChatMessage
from docassist.core.planning import Plan
from docassist.core.ports import Catalog, Retriever
from docassist.core.scopes import Audience, Scope
from docassist.core.state import ConversationState, RagResult
from docassist.core.statuses import Language
from docassist.core.tools import ToolOutcome


@dataclass
class TurnContext:
    """What one turn has learnt so far; `Reply` is what it will say."""

    message: ChatMessage
    state: ConversationState
    version: int
    turn_id: int
    result_id: str
    language: Language
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

    def scoped_catalog(self) -> Catalog:
        assert self.catalog is not None  # set when the turn begins
        return self.catalog
