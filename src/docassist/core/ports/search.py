"""The seams of search: the catalog, the indexer's view of it, retrievers, embedders and the
passage reader."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from docassist.core.documents import Chunk, DocumentInfo, ParsedDocument
from docassist.core.scopes import Scope


@dataclass(frozen=True)
class SearchHit:
    """A chunk found for a query, with the retriever's score on its documented scale."""

    chunk: Chunk
    document: DocumentInfo
    score: float
    related: bool | None = None
    """Whether the chunk's page is plausibly related to the question, when the retriever
    judges that apart from its score (the ranked retriever: near in meaning, or, for a
    Polish question, read by its reader as on the question's subject). A refusal names the
    related pages, whether or not they answer; None: the retriever does not say."""
    found_by: str | None = None
    """How the retriever found the chunk when not by the question as asked (the ranked
    retriever: "glossed_into_polish"); an answer from such a page says so in its trace."""


class Catalog(Protocol):
    def documents(self) -> list[DocumentInfo]: ...

    def document(self, document_id: str) -> DocumentInfo | None: ...

    def chunk(self, chunk_id: str) -> Chunk | None: ...


class DocumentIndex(Catalog, Protocol):
    """The catalog as the indexer writes it: a new version supersedes the previous chunks."""

    def replace_document(self, parsed: ParsedDocument, source_path: str) -> None: ...

    def remove_document(self, document_id: str) -> None: ...

    def current_chunks(self) -> list[Chunk]: ...

    def is_superseded(self, chunk_id: str) -> bool: ...

    def prune_superseded(self, before: str) -> int:
        """Delete chunks superseded before the ISO time `before`; returns how many."""
        ...


class Retriever(Protocol):
    """Ranks chunks for a query. `default_threshold` is on the retriever's own score scale."""

    name: str
    default_threshold: float

    def search(self, query: str, top_k: int) -> list[SearchHit]: ...

    def search_in(self, query: str, top_k: int, scope: Scope) -> list[SearchHit]:
        """`search` over the chunks of the scope's collections only: the restriction is
        applied before ranking and `top_k`, never to the results afterwards."""
        ...


class Embedder(Protocol):
    """Text to L2-normalised float32 rows (a dot product is the cosine similarity)."""

    name: str
    dimensions: int

    def embed_queries(self, texts: list[str]) -> npt.NDArray[np.float32]: ...

    def embed_passages(self, texts: list[str]) -> npt.NDArray[np.float32]: ...


class PassageReader(Protocol):
    """A model that reads a question against passages and says how well each answers it."""

    def read(self, question: str, hits: Sequence[SearchHit]) -> list[float | None]:
        """One score per hit (a logit: above 0, the passage reads as answering); None for a
        passage the model cannot read (not in a language it reads)."""
        ...

    def in_english(self, text: str) -> str:
        """A short text (a heading) in the words the model reads: a Polish one glossed, any
        other as written."""
        ...
