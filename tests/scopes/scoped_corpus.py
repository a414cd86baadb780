"""The demo corpus split into collections, and a turn engine that decides scopes from the
store's mappings (as `runtime.open_runtime` wires it)."""

from __future__ import annotations

from typing import Final

from docassist.core.extractive import ExtractiveAnswerer
from docassist.core.ports import Answerer, Retriever
from docassist.core.scoping import ScopeResolver
from docassist.core.tools import default_registry
from docassist.core.turn import TurnEngine
from docassist.storage import Store
from tests.helpers import rules_selector

COLLECTION_OF: Final = {"DOC-TLS": "security", "DOC-DB": "ops", "DOC-ACCESS": "hr"}
"""Every other demo document stays in `default`."""
COLLECTIONS: Final = ("default", "security", "ops", "hr")
TLS_QUESTION: Final = "How do I renew the TLS certificate?"


def split_into_collections(store: Store) -> None:
    for document_id, collection in COLLECTION_OF.items():
        store.tag_document(document_id, None, collection)


def collection_of(document_id: str) -> str:
    return COLLECTION_OF.get(document_id, "default")


def scoped_engine(store: Store, retriever: Retriever,
                  answerer: Answerer | None = None) -> TurnEngine:
    return TurnEngine(store=store, catalog=store, retriever=retriever,
                      selector=rules_selector(), answerer=answerer or ExtractiveAnswerer(),
                      registry=default_registry(), scopes=ScopeResolver(store))
