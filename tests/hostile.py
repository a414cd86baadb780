"""A document whose text, title and owner hold Slack's control sequences (`<!channel>`,
`<!here>`, `<!everyone>`, a disguised link) and markdown a card could render (a link, **).
Renderers must show all of it as written and link only the catalog `url`."""

from __future__ import annotations

from pathlib import Path
from typing import Final

from docassist.models.embedders import get_embedder
from docassist.storage import Store, index_paths
from docassist.storage.dense import embed_missing

TITLE: Final = "Zebra alarm <!channel> & <https://evil.example/t|the wiki>"
OWNER: Final = "Ops <!here> team"
CATALOG_URL: Final = "https://intranet.example.com/docs/DOC-ZEBRA"
QUESTION: Final = "How do I handle a zebra alarm?"
DOCUMENT: Final = f"""---
id: DOC-ZEBRA
title: {TITLE}
version: 1.0
owner: {OWNER}
language: en
updated: 2026-11-01
url: {CATALOG_URL}
---
# Zebra alarm

## Zebra alarm paging

When the zebra alarm sounds, tell <!everyone> and open <https://evil.example/login|the status page>.

Silence the zebra alarm with `zebra-ctl mute --all <!here>` and read **now** [the zebra runbook](https://evil.example/runbook).
"""
SENTENCES: Final = (
    "When the zebra alarm sounds, tell <!everyone> and open "
    "<https://evil.example/login|the status page>.",
    "Silence the zebra alarm with ",
    "zebra-ctl mute --all <!here>",
    " and read ",
    "now",
    " [the zebra runbook](https://evil.example/runbook). ",
)
"""The answer's pieces as the extractive answerer quotes them: text, a command, text,
emphasis, text (renderers mark each up in their own way)."""


def hostile_database(folder: Path) -> tuple[Path, Path]:
    """A database holding only the hostile document: (database, document file)."""
    docs = folder / "hostile-docs"
    docs.mkdir()
    document = docs / "zebra.md"
    document.write_text(DOCUMENT, encoding="utf-8")
    path = folder / "hostile.db"
    store = Store(path)
    assert index_paths(store, [docs]).indexed
    embed_missing(store, get_embedder("use"))
    store.close()
    return path, document


def chunk_id(store: Store) -> str:
    [chunk] = store.current_chunks()
    return chunk.chunk_id
