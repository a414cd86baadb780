"""Indexing files into the store: incremental by content hash, with a note per skipped file.

Unchanged files (same path, same bytes) are skipped; a changed file becomes a new version
(new chunk ids, previous chunks kept as superseded); a file that disappeared from an indexed
folder leaves the catalog. Superseded chunks older than the retention are pruned.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from docassist.core.documents import ChunkSizes, parse_document
from docassist.core.limits import MAX_CHUNKS_PER_DOCUMENT, SUPERSEDED_RETENTION_DAYS
from docassist.storage.database import Store
from docassist.storage.formats import read_document


@dataclass
class IndexReport:
    indexed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    pruned_chunks: int = 0
    notes: list[str] = field(default_factory=list)
    embedded: int = 0
    """Chunks embedded by this run (those a killed run had stored are not counted again)."""
    embed_seconds: float = 0.0

    @property
    def chunks_per_s(self) -> float:
        return self.embedded / self.embed_seconds if self.embed_seconds > 0 else 0.0


def collect_files(paths: Iterable[Path]) -> tuple[list[Path], list[Path], list[str]]:
    """Files under the given paths (folders recursively, sorted), the folders, and notes."""
    files: list[Path] = []
    folders: list[Path] = []
    notes: list[str] = []
    for path in paths:
        if path.is_dir():
            folders.append(catalog_path(path))
            files.extend(sorted(p for p in path.rglob("*") if p.is_file()))
        elif path.is_file():
            files.append(path)
        else:
            notes.append(f"{path}: not found")
    return files, folders, notes


def catalog_path(path: Path) -> Path:
    """The absolute path a file is catalogued under, symlinks NOT resolved: a symlinked
    file's entry is its link, so deleting the link removes the document (resolved to its
    target outside the folder, it stayed in the catalog and kept being cited)."""
    return Path(os.path.abspath(path))


def _same_file(first: Path, second: Path) -> bool:
    """One file under two names (e.g. catalogued before through its resolved path)."""
    try:
        return first.samefile(second)
    except OSError:
        return False


def index_paths(
    store: Store,
    paths: Iterable[Path],
    on_file: Callable[[Path], None] | None = None,
    on_start: Callable[[int], None] | None = None,
    retention_days: int = SUPERSEDED_RETENTION_DAYS,
    sizes: ChunkSizes = ChunkSizes(),  # noqa: B008 - frozen, shared safely
) -> IndexReport:
    files, folders, notes = collect_files(paths)
    report = IndexReport(notes=notes)
    if on_start is not None:
        on_start(len(files))
    seen_ids: dict[str, Path] = {}
    seen_paths: set[str] = set()
    for path in files:
        try:
            _index_file(store, path, seen_ids, seen_paths, report, sizes)
        except (OSError, ValueError) as error:
            report.notes.append(f"{path}: skipped: {error}")
        finally:
            if on_file is not None:
                on_file(path)
    for document in store.documents():
        source = Path(document.source_path)
        in_folder = any(source.is_relative_to(folder) for folder in folders)
        if in_folder and document.source_path not in seen_paths and not source.exists():
            store.remove_document(document.document_id)
            report.removed.append(document.document_id)
    cutoff = datetime.now(UTC) - timedelta(days=retention_days)
    report.pruned_chunks = store.prune_superseded(cutoff.isoformat(timespec="milliseconds"))
    return report


def _index_file(
    store: Store,
    path: Path,
    seen_ids: dict[str, Path],
    seen_paths: set[str],
    report: IndexReport,
    sizes: ChunkSizes,
) -> None:
    source_path = str(catalog_path(path))
    text, data = read_document(path)
    digest = hashlib.sha256(data).hexdigest()
    seen_paths.add(source_path)
    previous = store.document_at(source_path)
    if previous is not None and previous.content_sha256 == digest:
        seen_ids[previous.document_id] = path
        report.unchanged.append(previous.document_id)
        return
    parsed = parse_document(path.name, path.stem, text, content_sha256=digest, sizes=sizes)
    if not parsed.chunks:
        raise ValueError("no text to index")
    if len(parsed.chunks) > MAX_CHUNKS_PER_DOCUMENT:
        raise ValueError(f"too many chunks ({len(parsed.chunks)}, limit "
                         f"{MAX_CHUNKS_PER_DOCUMENT})")
    document_id = parsed.info.document_id
    earlier = seen_ids.get(document_id)
    if earlier is None:
        holder = store.document(document_id)
        if holder is not None and holder.source_path != source_path \
                and Path(holder.source_path).exists() \
                and not _same_file(Path(holder.source_path), path):
            earlier = Path(holder.source_path)
    if earlier is not None:
        raise ValueError(f"duplicate document id {document_id} (also in {earlier})")
    if previous is not None and previous.document_id != document_id:
        store.remove_document(previous.document_id)  # the file now declares another id
    seen_ids[document_id] = path
    store.replace_document(parsed, source_path)
    report.indexed.append(document_id)
