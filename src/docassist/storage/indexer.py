"""Indexing files into the store: incremental by content hash, with a note per skipped file.

Unchanged files (same path, same bytes) are skipped; a changed file becomes a new version
(new chunk ids, previous chunks kept as superseded); a file that disappeared from an indexed
folder leaves the catalog. Superseded chunks older than the retention are pruned.
"""

from __future__ import annotations

import hashlib
import os
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path, PurePosixPath

from docassist.core.documents import (
    DEFAULT_COLLECTION,
    ChunkSizes,
    DocumentInfo,
    document_id_from_path,
    page_stem,
    parse_document,
    path_hash,
)
from docassist.core.limits import MAX_CHUNKS_PER_DOCUMENT, SUPERSEDED_RETENTION_DAYS
from docassist.storage.formats import read_document
from docassist.storage.roles import IndexWrites


@dataclass(frozen=True)
class Move:
    """A document an explicit `--collection` moved from the collection it was in."""

    document_id: str
    from_collection: str
    to_collection: str


@dataclass
class IndexReport:
    indexed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    moved: list[Move] = field(default_factory=list)
    pruned_chunks: int = 0
    notes: list[str] = field(default_factory=list)
    embedded: int = 0
    """Chunks embedded by this run (those a killed run had stored are not counted again)."""
    embed_seconds: float = 0.0

    @property
    def chunks_per_s(self) -> float:
        return self.embedded / self.embed_seconds if self.embed_seconds > 0 else 0.0


@dataclass(frozen=True)
class FoundFile:
    """A file to index and its path relative to the folder it was found in (its name alone
    when it was named directly): the path its id comes from."""

    path: Path
    relative: PurePosixPath
    root: Path
    """The folder (or the file) named on the command line, as given: its documents'
    collection, when none is named, is the one its documents already have."""


@dataclass
class Found:
    """What the named paths hold: files to index, the folders, links that lead out of their
    folder (never read), and notes."""

    files: list[FoundFile] = field(default_factory=list)
    folders: list[Path] = field(default_factory=list)
    outside: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def readable_name(path: Path) -> str | None:
    """None when the path is UTF-8 text; else the path with its other bytes as \\xNN, for a
    note (the catalog stores paths as text, so such a file cannot be catalogued)."""
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        return os.fsencode(path).decode("utf-8", "backslashreplace")
    return None


def _add_file(found: Found, file: FoundFile) -> None:
    shown = readable_name(file.path)
    if shown is None:
        found.files.append(file)
    else:
        found.notes.append(f"{shown}: skipped: its name is not valid UTF-8; rename the file "
                           "to index it")


def collect_files(paths: Iterable[Path]) -> Found:
    """Files under the given paths (folders recursively, sorted). A folder's root is its
    resolved path: a link inside it that leads outside (to a file or a folder) is skipped
    and noted, never read; links that stay inside are indexed under their own name."""
    found = Found()
    for path in paths:
        if path.is_dir():
            found.folders.append(catalog_path(path))
            _walk(path, found)
        elif path.is_file():
            _add_file(found, FoundFile(path, PurePosixPath(path.name), catalog_path(path)))
        else:
            found.notes.append(f"{path}: not found")
    return found


def _walk(folder: Path, found: Found) -> None:
    root = folder.resolve()
    entries: list[Path] = []
    for directory, subfolders, names in os.walk(folder, followlinks=False):
        entries.extend(Path(directory) / name for name in names)
        entries.extend(Path(directory) / name for name in subfolders
                       if (Path(directory) / name).is_symlink())
    for entry in sorted(entries):
        target = entry.resolve()
        if not target.is_relative_to(root):
            found.outside.append(catalog_path(entry))
            found.notes.append(f"{entry}: skipped: a link leading outside {folder}")
        elif entry.is_file() and not entry.is_dir():
            _add_file(found, FoundFile(entry, PurePosixPath(entry.relative_to(folder).as_posix()),
                                       catalog_path(folder)))


def catalog_path(path: Path) -> Path:
    """The absolute path a file is catalogued under, symlinks NOT resolved: a symlinked
    file's entry is its link, so deleting the link removes the document (resolved to its
    target outside the folder, it stayed in the catalog and kept being cited)."""
    return Path(os.path.abspath(path))


def _collections_of(store: IndexWrites, roots: set[Path]) -> dict[Path, str]:
    """The collection each named folder's documents are in (the most common one, should an
    operator have moved some by hand)."""
    counts: dict[Path, Counter[str]] = {root: Counter() for root in roots}
    for document in store.documents():
        location = Path(document.source_path)
        for root, seen in counts.items():
            if location == root or location.is_relative_to(root):
                seen[document.collection] += 1
    return {root: seen.most_common(1)[0][0] for root, seen in counts.items() if seen}


def _same_file(first: Path, second: Path) -> bool:
    """One file under two names (e.g. catalogued before through its resolved path)."""
    try:
        return first.samefile(second)
    except OSError:
        return False


def index_paths(
    store: IndexWrites,
    paths: Iterable[Path],
    on_file: Callable[[Path], None] | None = None,
    on_start: Callable[[int], None] | None = None,
    retention_days: int = SUPERSEDED_RETENTION_DAYS,
    sizes: ChunkSizes = ChunkSizes(),  # noqa: B008 - frozen, shared safely
    source: str | None = None,
    collection: str | None = None,
) -> IndexReport:
    """Index files and folders; `source` names the configured source the documents come
    from (None for `docassist index PATH`). With a `collection`, every document goes there
    (those elsewhere move, and `moved` says so); without one, every document keeps its
    collection and a new file takes the one its folder's documents have."""
    found = collect_files(paths)
    report = IndexReport(notes=found.notes)
    if on_start is not None:
        on_start(len(found.files))
    run = _Run(store, report, sizes, source=source, collection=collection,
               homes=_collections_of(store, {f.root for f in found.files}))
    for file in found.files:  # a front-matter id never takes the id another file's path gives
        run.path_ids.setdefault(document_id_from_path(file.relative), file.path)
    for file in found.files:
        try:
            run.index_file(file)
        except (OSError, ValueError) as error:
            report.notes.append(f"{file.path}: skipped: {error}")
        finally:
            if on_file is not None:
                on_file(file.path)
    outside = {str(path) for path in found.outside}
    for document in store.documents():
        location = Path(document.source_path)
        in_folder = any(location.is_relative_to(folder) for folder in found.folders)
        gone = document.source_path not in run.seen_paths and not location.exists()
        if in_folder and (gone or document.source_path in outside):
            store.remove_document(document.document_id)
            report.removed.append(document.document_id)
    cutoff = datetime.now(UTC) - timedelta(days=retention_days)
    report.pruned_chunks = store.prune_superseded(cutoff.isoformat(timespec="milliseconds"))
    return report


@dataclass
class _Run:
    """One indexing run: the ids handed out so far, by the file that holds them."""

    store: IndexWrites
    report: IndexReport
    sizes: ChunkSizes
    source: str | None = None
    collection: str | None = None
    """Named by the operator: every document goes there. None: each keeps its own."""
    homes: dict[Path, str] = field(default_factory=dict)
    """Each named folder's collection, from its documents (for new files when none is named)."""
    seen_ids: dict[str, Path] = field(default_factory=dict)
    seen_paths: set[str] = field(default_factory=set)
    path_ids: dict[str, Path] = field(default_factory=dict)

    def index_file(self, found: FoundFile) -> None:
        path = found.path
        source_path = str(catalog_path(path))
        text, data = read_document(path)
        digest = hashlib.sha256(data).hexdigest()
        self.seen_paths.add(source_path)
        previous = self.store.document_at(source_path)
        collection = self._collection_for(found, previous)
        if previous is not None and previous.content_sha256 == digest \
                and previous.chunked_current:
            self.seen_ids[previous.document_id] = path
            self.report.unchanged.append(previous.document_id)
            if (previous.source, previous.collection) != (self.source, collection):
                self.store.tag_document(previous.document_id, self.source, collection)
            return
        # Nested files name their path in the chunk header: a tree has many `index.md`.
        label = path.name if len(found.relative.parts) == 1 else str(found.relative)
        path_id = document_id_from_path(found.relative)
        stem = page_stem(path.name)
        parsed = parse_document(label, stem, text, content_sha256=digest, sizes=self.sizes,
                                default_id=path_id)
        if not parsed.chunks:
            raise ValueError("no text to index")
        if len(parsed.chunks) > MAX_CHUNKS_PER_DOCUMENT:
            raise ValueError(f"too many chunks ({len(parsed.chunks)}, limit "
                             f"{MAX_CHUNKS_PER_DOCUMENT})")
        if parsed.declared_id:
            document_id = parsed.info.document_id
            by_path = self.path_ids.get(document_id)
            earlier = self._holder(document_id, source_path) or (
                by_path if by_path != path else None)
            if earlier is not None:
                raise ValueError(f"duplicate document id {document_id} (also in {earlier})")
        else:
            document_id = self._free_path_id(path_id, found.relative, source_path, previous)
            if document_id != path_id:
                parsed = parse_document(label, stem, text, content_sha256=digest,
                                        sizes=self.sizes, default_id=document_id)
        if previous is not None and previous.document_id != document_id:
            self.store.remove_document(previous.document_id)  # the file now has another id
        self.seen_ids[document_id] = path
        self.store.replace_document(parsed, source_path, source=self.source,
                                    collection=collection)
        self.report.indexed.append(document_id)

    def _collection_for(self, found: FoundFile, previous: DocumentInfo | None) -> str:
        """The named collection (a document elsewhere moves, said in `moved`); else the
        document's own; else its folder's."""
        if self.collection is None:
            if previous is not None:
                return previous.collection
            return self.homes.get(found.root, DEFAULT_COLLECTION)
        if previous is not None and previous.collection != self.collection:
            self.report.moved.append(Move(previous.document_id, previous.collection,
                                          self.collection))
        return self.collection

    def _free_path_id(self, path_id: str, relative: PurePosixPath, source_path: str,
                      previous: DocumentInfo | None) -> str:
        """The path's id, or — held by another file — the id plus the path's hash. A file
        keeps the id it had, so re-indexing never renames a document."""
        suffixed = f"{path_id}-{path_hash(relative)}"
        if previous is not None and previous.document_id in (path_id, suffixed):
            return previous.document_id
        for candidate in (path_id, suffixed):
            if self._holder(candidate, source_path) is None:
                return candidate
        raise ValueError(f"duplicate document id {suffixed} (also in "
                         f"{self._holder(suffixed, source_path)})")

    def _holder(self, document_id: str, source_path: str) -> Path | None:
        """Another existing file holding `document_id`, in this run or in the catalog."""
        earlier = self.seen_ids.get(document_id)
        if earlier is not None:
            return earlier
        holder = self.store.document(document_id)
        if holder is not None and holder.source_path != source_path \
                and Path(holder.source_path).exists() \
                and not _same_file(Path(holder.source_path), Path(source_path)):
            return Path(holder.source_path)
        return None
