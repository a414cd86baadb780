"""Sharing a private answer in its channel: which answer a "share" names, and whether it may
be shown to everyone there. One decision, one function: `may_share` asks the channel's
scope (collections and audiences, issue 22) about every cited document."""

from __future__ import annotations

from collections.abc import Iterable

from docassist.core.documents import CITATION
from docassist.core.ports import Catalog
from docassist.core.state import ConversationState, RagResult, Source


def may_share(cited_document_ids: Iterable[str], channel_catalog: Catalog) -> bool:
    """True when every cited document is within the scope of the channel the answer would be
    shown in (`channel_catalog`: the catalog as the channel's audience sees it). An answer
    given privately from the asker's wider scope answers False, so it is offered no share
    button and a click is refused."""
    return all(channel_catalog.document(document_id) is not None
               for document_id in cited_document_ids)


def cited_document_ids(answer: str, sources: list[Source]) -> list[str]:
    """The documents whose chunks the answer cites (in the order of the sources)."""
    cited = set(CITATION.findall(answer))
    return list(dict.fromkeys(s.document_id for s in sources if s.chunk_id in cited))


def shareable_answer(state: ConversationState, result_id: str) -> RagResult | None:
    """The answer a share click names, while it is still the thread's latest answer: a
    cleared thread or a newer answer withdraws it (None)."""
    rag = state.last_result
    if rag is None or rag.status != "answered" or state.last_source_result_id != result_id:
        return None
    return rag
