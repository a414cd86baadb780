"""`docassist doctor`: does each configured backend answer, and how fast; does the index hold
documents, and do they still match the files they were indexed from."""

from __future__ import annotations

import hashlib
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Final

from pydantic import BaseModel

from docassist.config import Settings
from docassist.core.documents import DocumentInfo
from docassist.core.errors import DocAssistError
from docassist.models import chat_model, get_model_embedder
from docassist.models.embedders import EMBEDDER_NAMES
from docassist.models.registry import RULES
from docassist.runtime import FIRST_INDEX_KEY, interrupted_index
from docassist.storage.backends import open_store, shown
from docassist.storage.formats import SUPPORTED_SUFFIXES, format_of
from docassist.storage.indexer import catalog_path, collect_files
from docassist.storage.roles import MetaValues

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
    checks.append(_timed("index", "catalog", lambda: index_drift(settings)))
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
    """The catalog is empty, or differs from the files it was built from."""


EMPTY_INDEX = ("the index is empty (0 documents): no question can be answered; run "
               "`docassist index PATH` (or `docassist sync` for configured sources)")
FIRST_INDEX_UNFINISHED = "the first indexing did not finish"
EXAMPLE_PATHS: Final = 3
"""Paths named per kind of drift: enough to find the folder to re-index, not a listing."""


def index_drift(settings: Settings) -> str:
    """What the catalog holds (documents per collection) and whether it still matches its
    files: indexed files changed since or gone (wherever they were indexed from), files of
    the corpus folder not indexed (when the catalog was built from it), an indexing that did
    not finish. Raises IndexDrift naming them, and when the catalog is empty (nothing can be
    answered: not a healthy service)."""
    store = open_store(settings.db)
    try:
        unfinished = _unfinished(store)
        documents = store.documents()
    finally:
        store.close()
    if not documents and not unfinished:
        raise IndexDrift(EMPTY_INDEX)
    first_start = FIRST_INDEX_UNFINISHED in unfinished
    drift = _file_drift(documents)
    folder, not_indexed = _folder_drift(settings.docs, documents, first_start)
    problems = unfinished + ([f"{len(not_indexed)} not indexed in {folder}"] if not_indexed
                             else [])
    problems += [f"{len(paths)} {label}{_examples(paths)}" for label, paths in drift.items()
                 if paths]
    summary = _summary(documents)
    if problems:
        concerned = not_indexed + [path for paths in drift.values() for path in paths]
        hint = _reindex_hint(settings.docs, concerned, first_start)
        raise IndexDrift(f"{summary}: {'; '.join(problems)}{hint}")
    files = sum(1 for document in documents if _is_file(document))
    checked = f"{summary}; {files} indexed files unchanged"
    return checked + (f"; every file in {folder} indexed" if folder else "")


def _unfinished(store: MetaValues) -> list[str]:
    """The indexings a killed process left unfinished (each leaves its mark in the meta)."""
    problems = []
    if store.meta_value(FIRST_INDEX_KEY) is not None:
        problems.append(FIRST_INDEX_UNFINISHED)
    interrupted = interrupted_index(store)
    if interrupted is not None:
        problems.append(f"`docassist index {' '.join(interrupted)}` did not finish: run it "
                        "again")
    return problems


def _is_file(document: DocumentInfo) -> bool:
    """Indexed from a file on this machine (not fetched from a URL by a source)."""
    return "://" not in document.source_path and Path(document.source_path).is_absolute()


def _file_drift(documents: list[DocumentInfo]) -> dict[str, list[str]]:
    """The indexed files whose bytes changed since, those no longer there, and those this
    process may not read, by label."""
    drift: dict[str, list[str]] = {"changed since indexed": [], "gone": [], "unreadable": []}
    for document in filter(_is_file, documents):
        try:
            digest = hashlib.sha256(Path(document.source_path).read_bytes()).hexdigest()
        except (FileNotFoundError, NotADirectoryError):
            drift["gone"].append(document.source_path)
        except OSError:
            drift["unreadable"].append(document.source_path)
        else:
            if digest != document.content_sha256:
                drift["changed since indexed"].append(document.source_path)
    return drift


def _folder_drift(folder: Path, documents: list[DocumentInfo], first_start: bool
                  ) -> tuple[Path | None, list[str]]:
    """The corpus folder (None unless the catalog was built from it, or the first start's
    indexing of it did not finish) and its supported files that are not in the catalog."""
    root = catalog_path(folder)
    if not folder.is_dir() or not (first_start or any(
            Path(document.source_path).is_relative_to(root) for document in documents)):
        return None, []
    indexed = {document.source_path for document in documents}
    return folder, [str(catalog_path(file.path)) for file in collect_files([folder]).files
                    if format_of(file.path.name) in SUPPORTED_SUFFIXES
                    and str(catalog_path(file.path)) not in indexed]


def _summary(documents: list[DocumentInfo]) -> str:
    """"12 documents (default 7, hr 5)": how many, by collection."""
    counts = sorted(Counter(document.collection for document in documents).items())
    by_collection = ", ".join(f"{name} {count}" for name, count in counts)
    noun = "document" if len(documents) == 1 else "documents"
    return f"{len(documents)} {noun}" + (f" ({by_collection})" if counts else "")


def _examples(paths: list[str]) -> str:
    shown_paths = ", ".join(paths[:EXAMPLE_PATHS])
    return f" ({shown_paths}{', …' if len(paths) > EXAMPLE_PATHS else ''})" if paths else ""


def _reindex_hint(folder: Path, paths: list[str], first_start: bool) -> str:
    """`; run docassist index FOLDER` when every file concerned is in the corpus folder (or
    the first start's indexing of it did not finish); otherwise the generic command (the
    catalog does not record which folder indexed a file). Empty when only an `index` run
    did not finish (its problem says to run it again)."""
    if not paths and not first_start:
        return ""
    root = catalog_path(folder)
    if all(Path(path).is_relative_to(root) for path in paths):
        return f"; run `docassist index {folder}`"
    return ("; run `docassist index PATH` on their folders (`docassist sync` for a "
            "configured source)")
