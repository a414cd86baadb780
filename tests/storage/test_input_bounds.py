"""What a file may expand to is bounded for every format: refused with a note, not indexed."""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path

import docx

from docassist.core.limits import MAX_CHUNKS_PER_DOCUMENT
from docassist.storage import Store, index_paths
from docassist.storage.limits import MAX_DOCUMENT_TEXT_CHARS, MAX_EXPANDED_BYTES
from tests.cli_run import one_json, run

PARAGRAPH = ("<w:p><w:r><w:t>Restart the service and check the status page again.</w:t>"
             "</w:r></w:p>")


def docx_bomb(path: Path, xml_bytes: int) -> None:
    """A real DOCX whose document.xml is replaced by `xml_bytes` of repeated paragraphs:
    tiny on disk, huge once unpacked (the 108 KB → 20 MB DOCX of the report)."""
    plain = io.BytesIO()
    document = docx.Document()
    document.add_heading("Bomb", level=1)
    document.save(plain)
    with zipfile.ZipFile(plain) as source, zipfile.ZipFile(
            path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as target:
        for member in source.infolist():
            data = source.read(member)
            if member.filename == "word/document.xml":
                text = data.decode()
                body = PARAGRAPH * (xml_bytes // len(PARAGRAPH))
                data = re.sub(r"<w:body>", "<w:body>" + body, text, count=1).encode()
            target.writestr(member, data)


def test_a_docx_that_unpacks_to_20_mb_is_refused_before_parsing(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.docx"
    docx_bomb(bomb, 20_000_000)
    assert bomb.stat().st_size < 200_000 and MAX_EXPANDED_BYTES < 20_000_000
    done = run("index", str(bomb), "--json", db=tmp_path / "d.db", DOCASSIST_EMBEDDER="none",
               DOCASSIST_RETRIEVER="bm25")
    assert done.returncode == 1  # nothing indexed
    report = one_json(done.stdout)
    assert report["indexed"] == []
    [note] = report["notes"]
    assert "bomb.docx: skipped: unpacks to too much" in note and "limit" in note
    assert "bomb.docx: skipped: unpacks to too much" in done.stderr
    store = Store(tmp_path / "d.db")
    assert store.documents() == [] and store.current_chunks() == []
    store.close()


def test_a_docx_within_the_bound_still_indexes(tmp_path: Path) -> None:
    small = tmp_path / "small.docx"
    docx_bomb(small, 20_000)
    store = Store(tmp_path / "d.db")
    report = index_paths(store, [small])
    assert report.indexed == ["DOC-SMALL"], report.notes
    store.close()


def test_a_text_file_beyond_the_text_limit_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    line = "Check the queue depth before restarting the worker service again.\n"
    (folder / "huge.txt").write_text(line * (MAX_DOCUMENT_TEXT_CHARS // len(line) + 10))
    (folder / "ok.md").write_text("# Fine\nRotate the keys yearly.\n")
    assert (folder / "huge.txt").stat().st_size < 5_000_000  # under the on-disk limit
    store = Store(tmp_path / "d.db")
    report = index_paths(store, [folder])
    assert report.indexed == ["DOC-OK"]
    assert any("huge.txt: skipped: too much text (more than" in note for note in report.notes)
    assert [d.document_id for d in store.documents()] == ["DOC-OK"]
    store.close()


def test_a_document_of_too_many_chunks_is_refused(tmp_path: Path) -> None:
    sections = "".join(f"## Step {n}\nDo step {n}.\n" for n in range(MAX_CHUNKS_PER_DOCUMENT + 1))
    assert len(sections) < MAX_DOCUMENT_TEXT_CHARS
    (tmp_path / "steps.md").write_text(sections)
    store = Store(tmp_path / "d.db")
    report = index_paths(store, [tmp_path / "steps.md"])
    assert report.indexed == []
    assert report.notes == [f"{tmp_path / 'steps.md'}: skipped: too many chunks "
                            f"({MAX_CHUNKS_PER_DOCUMENT + 1}, limit {MAX_CHUNKS_PER_DOCUMENT})"]
    assert store.current_chunks() == []
    store.close()
