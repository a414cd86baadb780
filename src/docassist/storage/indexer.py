"""Indexing files into the store: read, check, parse, replace. Notes for what is skipped."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from docassist.core.documents import parse_document
from docassist.core.limits import MAX_DOCUMENT_BYTES
from docassist.storage.database import Store

SUPPORTED_SUFFIXES: Final = frozenset({".txt", ".md", ".markdown"})


@dataclass
class IndexReport:
    indexed: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def collect_files(paths: Iterable[Path]) -> tuple[list[Path], list[str]]:
    """Files under the given paths (folders recursively, sorted) and notes for missing ones."""
    files: list[Path] = []
    notes: list[str] = []
    for path in paths:
        if path.is_dir():
            files.extend(sorted(p for p in path.rglob("*") if p.is_file()))
        elif path.is_file():
            files.append(path)
        else:
            notes.append(f"{path}: not found")
    return files, notes


def read_text(path: Path) -> str:
    """The file as UTF-8 text, or ValueError saying why it cannot be indexed."""
    if path.suffix.lower() not in SUPPORTED_SUFFIXES:
        raise ValueError(f"unsupported format {path.suffix or '(none)'}")
    size = path.stat().st_size
    if size > MAX_DOCUMENT_BYTES:
        raise ValueError(f"too large ({size} bytes, limit {MAX_DOCUMENT_BYTES})")
    data = path.read_bytes()
    if b"\x00" in data:
        raise ValueError("binary content")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ValueError(f"not UTF-8 ({error.reason} at byte {error.start})") from error
    if not text.strip():
        raise ValueError("empty")
    return text


def index_paths(
    store: Store,
    paths: Iterable[Path],
    on_file: Callable[[Path], None] | None = None,
    on_start: Callable[[int], None] | None = None,
) -> IndexReport:
    files, notes = collect_files(paths)
    report = IndexReport(notes=notes)
    if on_start is not None:
        on_start(len(files))
    seen_ids: dict[str, Path] = {}
    for path in files:
        try:
            text = read_text(path)
            parsed = parse_document(path.name, path.stem, text)
            if not parsed.chunks:
                raise ValueError("no text to index")
            earlier = seen_ids.get(parsed.info.document_id)
            if earlier is not None:
                raise ValueError(
                    f"duplicate document id {parsed.info.document_id} (also in {earlier})")
            seen_ids[parsed.info.document_id] = path
            store.replace_document(parsed, str(path.resolve()))
            report.indexed.append(parsed.info.document_id)
        except (OSError, ValueError) as error:
            report.notes.append(f"{path}: skipped: {error}")
        finally:
            if on_file is not None:
                on_file(path)
    return report
