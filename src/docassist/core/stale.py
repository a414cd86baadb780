"""Answers that went stale: when a sync supersedes or deletes a document version a thread's
latest answer cited, that thread gets one note offering to ask again. No I/O here: the store
records notes as pending work, adapters deliver them (claimed in the store, so exactly one
serving process posts each)."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Final, Literal, Protocol

from pydantic import BaseModel, ConfigDict

from docassist.core import i18n
from docassist.core.answering import CITATION
from docassist.core.messages import ConversationKey
from docassist.core.ports import Catalog
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


def note_visible(note: StaleNote, catalog: Catalog) -> bool:
    """Whether the thread may still see the document the note names (`catalog` as the
    thread's audience sees it now: a scope may have narrowed since the answer). A removed
    document's collection is gone with it: that note is posted as before."""
    return note.change is DocumentChange.DELETED or catalog.document(note.document_id) is not None


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
