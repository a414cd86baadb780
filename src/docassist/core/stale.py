"""Answers that went stale: when a sync supersedes or deletes a document version a thread's
latest answer cited, that thread gets one note offering to ask again. No I/O here: the store
records notes as pending work, adapters deliver them (claimed in the store, so exactly one
serving process posts each)."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Final, Literal, Protocol

from pydantic import BaseModel, ConfigDict

from docassist.core import i18n
from docassist.core.documents import CITATION
from docassist.core.messages import ConversationKey
from docassist.core.ports import Catalog
from docassist.core.scopes import Audience
from docassist.core.scoping import ScopeResolver, scoped_catalog
from docassist.core.state import ConversationState, Source


class DocumentChange(StrEnum):
    UPDATED = "updated"
    DELETED = "deleted"


class StaleNote(BaseModel):
    """One pending note for one thread and one changed document version."""

    model_config = ConfigDict(extra="forbid")

    note_id: int
    key: ConversationKey
    document_id: str
    title: str
    change: DocumentChange
    changed_at: str
    collection: str | None = None
    """The collection of the version the answer cited (None: not known, notes recorded
    before it was kept)."""


def note_visible(note: StaleNote, audience: Audience, scopes: ScopeResolver,
                 catalog: Catalog) -> bool:
    """Whether the thread may be told about the document the note names, by the scope its
    audience has now (a scope may have narrowed since the answer; the answer itself could
    only cite what the thread could see then): an updated document only if the thread may
    see it now; a removed one, whose catalog entry is gone, only if the thread may still
    see the collection the cited version was in (not known: never, it fails closed)."""
    scope = scopes.scope_of(audience)
    if note.change is DocumentChange.DELETED:
        return note.collection is not None and scope.allows(note.collection)
    return scoped_catalog(catalog, scope).document(note.document_id) is not None


def note_collection(source: Source, known: dict[str, str] | None) -> str | None:
    """The collection a note keeps: the cited version's, kept with the answer's sources;
    for threads answered before that was kept, what the sync knew (the document's
    collection, or its source's for a removed document)."""
    return source.collection or (known or {}).get(source.document_id)


def version_of(chunk_id: str) -> str:
    """`DOC-X-<hash>-0003` → `DOC-X-<hash>`: the document version a chunk id names."""
    return chunk_id.rsplit("-", 1)[0]


def cited_sources(state: ConversationState) -> list[Source]:
    """The sources the thread's latest answer cited (all of its sources when the answer names
    none, e.g. an extractive quote)."""
    if state.last_result is None:
        return []
    cited = set(CITATION.findall(state.last_result.answer))
    named = [source for source in state.last_sources if source.chunk_id in cited]
    return named or list(state.last_sources)


def last_question(state: ConversationState) -> str | None:
    """The thread's last question, from its bounded history (what "ask again" re-runs)."""
    for message in reversed(state.history):
        if message.role == "user" and message.content.strip():
            return message.content
    return None


AskAgainProblem = Literal["unknown_note", "no_question"]
_ASK_AGAIN_TEXT: Final[dict[AskAgainProblem, str]] = {
    "unknown_note": "stale_note_unknown", "no_question": "stale_no_question"}


class NoteLookup(Protocol):
    def stale_note(self, note_id: int) -> dict[str, Any] | None: ...


class AskAgainRefused(ValueError):
    """An "Ask again" that runs nothing; `problem` is the trace's decision reason."""

    def __init__(self, problem: AskAgainProblem) -> None:
        super().__init__(problem)
        self.problem: AskAgainProblem = problem

    def text(self, language: i18n.Language) -> str:
        return i18n.text(_ASK_AGAIN_TEXT[self.problem], language)


def question_to_ask_again(notes: NoteLookup, key: ConversationKey, note: str,
                          state: ConversationState) -> str:
    """What "Ask again" on note `note` (the id the button carried) re-runs in the thread
    `key`: its last question, read when the turn runs (after the thread's earlier messages).
    Raises AskAgainRefused for an id that is not a note of this thread (malformed, unknown,
    another conversation's: indistinguishable to the user) or a thread with no question."""
    row = notes.stale_note(int(note)) if note.isdigit() and len(note) < 19 else None
    if row is None or row.get("conversation_id") != key.conversation_id:
        raise AskAgainRefused("unknown_note")
    question = last_question(state)
    if question is None:
        raise AskAgainRefused("no_question")
    return question


def note_text(note: StaleNote, language: i18n.Language) -> str:
    key = "stale_note_deleted" if note.change is DocumentChange.DELETED else "stale_note_updated"
    return i18n.text(key, language, title=note.title, document_id=note.document_id,
                     when=note.changed_at[:16].replace("T", " ") + " UTC")


def note_language(state: ConversationState, default: i18n.Language) -> i18n.Language:
    question = last_question(state)
    return i18n.detect_language(question, default) if question else default
