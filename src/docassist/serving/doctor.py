"""`docassist doctor`: does each configured backend answer, and how fast; does the index
match its corpus folder."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel

from docassist.config import Settings
from docassist.core.errors import DocAssistError
from docassist.models import chat_model, get_model_embedder
from docassist.models.embedders import EMBEDDER_NAMES
from docassist.models.registry import RULES
from docassist.runtime import FIRST_INDEX_KEY
from docassist.storage.backends import open_store, shown
from docassist.storage.formats import SUPPORTED_SUFFIXES, format_of
from docassist.storage.indexer import catalog_path, collect_files

PING = "Reply with the single word OK."


class Check(BaseModel):
    role: str
    spec: str
    ok: bool
    latency_ms: float | None = None
    detail: str = ""


def _timed(role: str, spec: str, probe: Callable[[], str]) -> Check:
    started = time.perf_counter()
    try:
        detail = probe()
    except DocAssistError as error:
        return Check(role=role, spec=spec, ok=False, detail=str(error))
    latency = round((time.perf_counter() - started) * 1000, 1)
    return Check(role=role, spec=spec, ok=True, latency_ms=latency, detail=detail)


def run_checks(settings: Settings) -> list[Check]:
    checks = model_checks(settings)

    def database() -> str:
        store = open_store(settings.db)
        try:
            return (f"{len(store.documents())} documents, {len(store.current_chunks())} chunks, "
                    f"index version {store.index_version()}")
        finally:
            store.close()

    checks.append(_timed("database", shown(settings.db), database))
    checks.append(_timed("index", str(settings.docs), lambda: index_drift(settings)))
    return checks


def model_checks(settings: Settings, with_local: bool = True) -> list[Check]:
    """Does each model server answer a tiny question; without `with_local`, an embedder
    that runs in the process (`use`, `e5`) is taken as answering (/readyz: loaded once)."""
    config = settings.model_config_for()
    checks: list[Check] = []
    for role, spec in (("selection", settings.model),
                       ("answers", settings.answer_model or settings.model)):
        if spec == RULES:
            checks.append(Check(role=role, spec=spec, ok=True, latency_ms=0.0,
                                detail="built-in rules, no model"))
            continue

        def chat(spec: str = spec) -> str:
            reply = chat_model(spec, config).chat([{"role": "user", "content": PING}])
            return f"replied {reply.strip()[:40]!r}"

        checks.append(_timed(role, spec, chat))
    if settings.embedder == "none":
        checks.append(Check(role="embeddings", spec="none", ok=True,
                            detail="dense retrieval off (BM25 only)"))
    elif settings.embedder in EMBEDDER_NAMES and not with_local:
        checks.append(Check(role="embeddings", spec=settings.embedder, ok=True,
                            detail="embedded in the process"))
    else:
        def embed() -> str:
            vectors = get_model_embedder(settings.embedder, config).embed_queries([PING])
            return f"{vectors.shape[1]} dimensions"

        checks.append(_timed("embeddings", settings.embedder, embed))
    return checks


class IndexDrift(DocAssistError):
    """The catalog differs from the corpus folder it was built from."""


def index_drift(settings: Settings) -> str:
    """Compare the catalog with the configured corpus folder: files not indexed, changed
    since, or gone; an unfinished first-start indexing. Raises IndexDrift naming them."""
    store = open_store(settings.db)
    try:
        unfinished = store.meta_value(FIRST_INDEX_KEY) is not None
        catalog = {document.source_path: document for document in store.documents()}
    finally:
        store.close()
    folder = settings.docs
    if not folder.is_dir():
        return f"no corpus folder {folder}; {len(catalog)} documents in the catalog"
    files = [file.path for file in collect_files([folder]).files
             if format_of(file.path.name) in SUPPORTED_SUFFIXES]
    missing = changed = 0
    for path in files:
        document = catalog.get(str(catalog_path(path)))
        if document is None:
            missing += 1
        elif document.content_sha256 != hashlib.sha256(path.read_bytes()).hexdigest():
            changed += 1
    root = catalog_path(folder)
    from_folder = [source for source in catalog if Path(source).is_relative_to(root)]
    if not from_folder and not unfinished:
        return f"the catalog was not built from {folder} ({len(catalog)} documents)"
    gone = sum(1 for source in from_folder if not Path(source).exists())
    problems = [f"{count} {label}" for count, label in ((missing, "not indexed"),
                (changed, "changed since indexed"), (gone, "gone from the folder")) if count]
    if unfinished:
        problems.insert(0, "the first indexing did not finish")
    if problems:
        raise IndexDrift(f"{len(files)} files in {folder}: {', '.join(problems)}; run "
                         f"`docassist index {folder}`")
    return f"{len(files)} files in {folder}, all indexed"
