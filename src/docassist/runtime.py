"""Wiring: settings → store, retriever, backend, tools → a TurnEngine."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from docassist.config import Settings
from docassist.core.errors import ConfigurationError
from docassist.core.tools import default_registry
from docassist.core.turn import EngineOptions, TurnEngine
from docassist.models import get_backend
from docassist.storage import Bm25Retriever, IndexReport, Store, index_paths


@dataclass
class Runtime:
    settings: Settings
    store: Store
    engine: TurnEngine


def open_runtime(settings: Settings) -> Runtime:
    store = Store(settings.db)
    backend = get_backend(settings.model)
    engine = TurnEngine(
        store=store,
        catalog=store,
        retriever=Bm25Retriever(store),
        selector=backend.selector,
        answerer=backend.answerer,
        registry=default_registry(),
        options=EngineOptions(
            default_language=settings.language,
            human_channel=settings.human_channel,
            save_raw=settings.save_raw,
        ),
    )
    return Runtime(settings=settings, store=store, engine=engine)


def ensure_demo_index(
    runtime: Runtime,
    on_start: Callable[[int], None] | None = None,
    on_file: Callable[[Path], None] | None = None,
) -> IndexReport | None:
    """Index the configured corpus when the catalog is empty (the first start)."""
    if runtime.store.documents():
        return None
    docs = runtime.settings.docs
    if not docs.is_dir():
        raise ConfigurationError(f"the catalog is empty and the corpus {docs} does not exist; "
                                 "run `docassist index PATH` or set DOCASSIST_DOCS")
    return index_paths(runtime.store, [docs], on_file=on_file, on_start=on_start)
