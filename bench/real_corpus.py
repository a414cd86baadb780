"""Real embeddings of public text, made once and cached outside the repository.

    python bench/real_corpus.py [--min-chunks 50000]   # builds the cache if it is missing

The text comes from Debian packages, downloaded (not installed) with `apt-get download` and
unpacked with `dpkg-deb -x`, as /work/evalsets/fetch_corpora.sh does: the Python 3.11 HTML
documentation, the PostgreSQL 15 HTML documentation, and the manual pages (`manpages`,
`manpages-dev`, rendered to text by `mandoc` when it is there). Files are chunked by the
product's own reader and chunker and embedded by the product's default embedder (USE), in
parts of PART_CHUNKS, so a build that is stopped continues from its last part.

Cache (`$DOCASSIST_BENCH_CACHE`, default ~/.cache/docassist-bench): `real-use/chunks.jsonl`
(chunk id, section, text), `real-use/parts/*.npy` (passage vectors) and `queries.npy`
(section titles embedded as questions, the queries of the agreement figure).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from docassist.core.documents import parse_document
from docassist.storage.formats import read_document

CACHE = Path(os.environ.get("DOCASSIST_BENCH_CACHE",
                            Path.home() / ".cache" / "docassist-bench"))
PACKAGES = ("python3.11-doc", "postgresql-doc-15", "manpages", "manpages-dev")
PART_CHUNKS = 2000
QUERIES = 500


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def unpacked_root() -> Path:
    """The packages' files, downloaded and unpacked once."""
    root = CACHE / "root"
    if (root / ".complete").exists():
        return root
    debs = CACHE / "debs"
    debs.mkdir(parents=True, exist_ok=True)
    _log(f"downloading {' '.join(PACKAGES)} into {debs}")
    subprocess.run(["apt-get", "download", *PACKAGES], cwd=debs, check=True,
                   stdout=subprocess.DEVNULL)
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    for deb in sorted(debs.glob("*.deb")):
        subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], check=True)
    (root / ".complete").touch()
    return root


def _manual_page(path: Path) -> str | None:
    """A manual page as markdown-like text: column-0 lines are sections (as fetch_corpora)."""
    rendered = subprocess.run(["mandoc", "-T", "utf8", "-O", "width=100", str(path)],
                              capture_output=True, check=False)
    text = rendered.stdout.decode("utf-8", "replace")
    lines = text.replace("\b", "").splitlines()[1:-1]
    if not lines:
        return None
    body = "\n".join(f"## {line}" if line[:1].strip() else line for line in lines)
    return f"# {path.name.removesuffix('.gz')}\n\n{body}\n"


def document_texts(root: Path) -> list[tuple[str, str]]:
    """(file name, text) of every document, sorted by path (a stable chunk order)."""
    found: list[tuple[str, str]] = []
    for folder in ("usr/share/doc/python3.11/html", "usr/share/doc/postgresql-doc-15/html"):
        for path in sorted((root / folder).rglob("*.html")):
            try:
                text, _ = read_document(path)
            except (OSError, ValueError):
                continue
            found.append((str(path.relative_to(root)), text))
    if shutil.which("mandoc"):
        for path in sorted((root / "usr/share/man").rglob("*.gz")):
            page = _manual_page(path)
            if page:
                found.append((str(path.relative_to(root)), page))
    else:
        _log("mandoc not found: manual pages left out (apt-get install mandoc)")
    return found


def chunk_corpus(folder: Path) -> list[dict[str, str]]:
    chunks_file = folder / "chunks.jsonl"
    if chunks_file.exists():
        return [json.loads(line) for line in chunks_file.read_text("utf-8").splitlines()]
    rows: list[dict[str, str]] = []
    for name, text in document_texts(unpacked_root()):
        parsed = parse_document(Path(name).name, Path(name).stem, text)
        rows.extend({"chunk_id": chunk.chunk_id, "section": chunk.section, "text": chunk.text}
                    for chunk in parsed.chunks)
    folder.mkdir(parents=True, exist_ok=True)
    chunks_file.write_text("".join(json.dumps(row) + "\n" for row in rows), "utf-8")
    return rows


def load(min_chunks: int = 50_000, from_end: bool = False
         ) -> tuple[list[dict[str, str]], Any, Any]:
    """(chunks, passage vectors, query vectors), building what the cache lacks. A second
    process started `from_end` embeds the parts from the other end (two cores, two
    processes: USE runs one BLAS thread)."""
    from docassist.models.embedders import get_embedder

    folder = CACHE / "real-use"
    rows = chunk_corpus(folder)
    if len(rows) < min_chunks:
        raise SystemExit(f"only {len(rows)} chunks of public text; {min_chunks} wanted")
    parts = folder / "parts"
    parts.mkdir(exist_ok=True)
    embedder = None
    began, done = time.perf_counter(), 0
    starts = list(enumerate(range(0, len(rows), PART_CHUNKS)))
    for number, start in reversed(starts) if from_end else starts:
        part = parts / f"{number:04d}.npy"
        if part.exists():
            continue
        embedder = embedder or get_embedder("use")
        vectors = embedder.embed_passages([row["text"] for row in rows[start:start + PART_CHUNKS]])
        np.save(part.with_suffix(f".{os.getpid()}.npy"), np.asarray(vectors, dtype=np.float32))
        part.with_suffix(f".{os.getpid()}.npy").rename(part)  # a part is there whole or not at all
        done += min(PART_CHUNKS, len(rows) - start)
        _log(f"embedded {start + PART_CHUNKS}/{len(rows)} "
             f"({done / (time.perf_counter() - began):.0f} chunks/s)")
    vectors = np.concatenate([np.load(part) for part in
                              sorted(parts.glob("[0-9][0-9][0-9][0-9].npy"))])
    if len(vectors) != len(rows):  # the other process is still writing its last part
        raise SystemExit(f"{len(vectors)} vectors for {len(rows)} chunks: run again when the "
                         "other embedding process has finished")
    queries_file = folder / "queries.npy"
    if not queries_file.exists():
        sections = sorted({row["section"] for row in rows})
        picked = random.Random(11).sample(sections, min(QUERIES, len(sections)))
        embedder = embedder or get_embedder("use")
        np.save(queries_file, np.asarray(embedder.embed_queries(picked), dtype=np.float32))
    return rows, vectors, np.load(queries_file)


if __name__ == "__main__":
    minimum = int(sys.argv[sys.argv.index("--min-chunks") + 1]) if "--min-chunks" in sys.argv \
        else 50_000
    chunks, passages, questions = load(minimum, "--from-end" in sys.argv)
    print(json.dumps({"chunks": len(chunks), "vectors": list(passages.shape),
                      "queries": list(questions.shape), "cache": str(CACHE)}))
