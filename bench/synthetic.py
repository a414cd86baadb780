"""Synthetic corpora for the retrieval benchmark, built fast enough for 1M chunks.

Random text from a 30-word vocabulary (every chunk matches almost every question: BM25's
worst case) and random unit 512-d vectors, stored through the product's own store calls
(`replace_document`, `save_embeddings`), so the file is what `docassist index` would write.
What makes it fast: the words and vectors are drawn with numpy in blocks; documents of
DOCUMENT_CHUNKS chunks; and the throwaway file is written without fsync (a crash loses a
benchmark corpus, nothing else). Before, a 1M corpus took about 45 minutes, most of it in a
quadratic delete (fixed in storage.catalog_rows._supersede).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any, Final

import numpy as np

from docassist.core.documents import Chunk, DocumentInfo, ParsedDocument
from docassist.storage import Store

WORDS: Final = ("config backup restore service restart status certificate renew access request "
                "incident report queue worker node database gateway token rotate deploy rollback "
                "konfiguracja kopia usługa restart stan certyfikat dostęp zgłoszenie baza").split()
WORDS_PER_CHUNK: Final = 60
DOCUMENT_CHUNKS: Final = 100
BLOCK: Final = 5000
"""Chunks (and vectors) drawn at a time: memory stays flat at any corpus size."""
DIMENSIONS: Final = 512


def synthetic_store(path: Path, chunks: int, dimensions: int = DIMENSIONS) -> Store:
    store = Store(path)
    # A benchmark corpus: durability buys nothing here, and 10k commits' fsyncs cost minutes.
    store.db.execute("PRAGMA synchronous = OFF")
    words = np.asarray(WORDS, dtype=object)
    text_rng = np.random.default_rng(7)
    for start in range(0, chunks, BLOCK):
        drawn = words[text_rng.integers(0, len(WORDS), (min(BLOCK, chunks - start),
                                                        WORDS_PER_CHUNK))]
        texts = ["h\n" + " ".join(row) for row in drawn.tolist()]
        for first in range(0, len(texts), DOCUMENT_CHUNKS):
            store.replace_document(*_document(start + first, texts[first:first + DOCUMENT_CHUNKS]))
    # Vectors in blocks, as the indexer embeds them: the whole matrix at once would be the
    # indexing memory peak, which real indexing never has.
    vector_rng = np.random.default_rng(7)
    ids = _chunk_ids(store)
    for start in range(0, len(ids), BLOCK):
        batch = vector_rng.standard_normal((len(ids[start:start + BLOCK]), dimensions),
                                           dtype=np.float32)
        batch /= np.linalg.norm(batch, axis=1, keepdims=True)
        store.save_embeddings("synthetic", ids[start:start + BLOCK], batch)
    store.db.execute("PRAGMA synchronous = FULL")
    return store


def _document(start: int, texts: list[str]) -> tuple[ParsedDocument, str]:
    document_id = f"DOC-SYN-{start // DOCUMENT_CHUNKS:05d}"
    info = DocumentInfo(document_id=document_id, title=f"Synthetic {start}", version="1",
                        source_path=f"/syn/{start}.md", content_sha256="0" * 64,
                        chunk_count=len(texts))
    parts = [Chunk(chunk_id=f"{document_id}-{i:010x}-{i:04d}", document_id=document_id,
                   ordinal=i, section=f"S{i}", header="h", text=text)
             for i, text in enumerate(texts)]
    return ParsedDocument(info=info, chunks=parts), info.source_path


def _chunk_ids(store: Store) -> list[str]:
    """The current chunks' ids, without reading their text (1M chunks: ~1 GB as objects)."""
    connection: Any = sqlite3.connect(store.path)
    try:
        return [row[0] for row in connection.execute(
            "SELECT chunk_id FROM chunks WHERE superseded_at IS NULL ORDER BY chunk_id")]
    finally:
        connection.close()


class SyntheticEmbedder:
    name = "synthetic"
    dimensions = DIMENSIONS

    def embed_queries(self, texts: list[str]) -> Any:
        vectors = np.random.default_rng(len(texts[0])).standard_normal(
            (len(texts), self.dimensions)).astype(np.float32)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)

    embed_passages = embed_queries
