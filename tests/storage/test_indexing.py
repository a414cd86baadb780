"""Documents into chunks and the catalog; what gets skipped and why."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from docassist.core.documents import document_id_from_stem, parse_document, split_front_matter
from docassist.storage import Bm25Retriever, Store, index_paths
from tests.conftest import DEMO_DOCS

CHUNK_ID = re.compile(r"^[A-Z][A-Z0-9-]*-[0-9a-f]{10}-\d{4}$")


def test_front_matter_known_and_unknown_keys() -> None:
    meta, body = split_front_matter("---\nid: DOC-A\ntitle: 'A'\nreviewer: Ola\n---\n# A\n")
    assert meta == {"id": "DOC-A", "title": "A", "reviewer": "Ola"}
    assert body == "# A"
    parsed = parse_document("a.md", "a", "---\nid: DOC-A\nreviewer: Ola\n---\n## One\ntext\n")
    assert parsed.info.extra == {"reviewer": "Ola"}  # kept, not fatal


def test_chunks_have_header_lines_and_versioned_ids() -> None:
    raw = (DEMO_DOCS / "instrukcja.txt").read_text(encoding="utf-8")
    parsed = parse_document("instrukcja.txt", "instrukcja", raw)
    digest = hashlib.sha256(raw.encode()).hexdigest()[:10]
    assert parsed.info.document_id == "DOC-INSTR" and parsed.info.version == "1.4"
    sections = [chunk.section for chunk in parsed.chunks]
    assert "Kopia konfiguracji" in sections
    copy = parsed.chunks[sections.index("Kopia konfiguracji")]
    assert copy.chunk_id == f"DOC-INSTR-{digest}-{copy.ordinal:04d}"
    assert copy.text.splitlines()[0] == "instrukcja.txt | version=1.4 | Kopia konfiguracji"
    assert all(CHUNK_ID.match(chunk.chunk_id) for chunk in parsed.chunks)
    assert [chunk.ordinal for chunk in parsed.chunks] == list(range(1, len(parsed.chunks) + 1))
    assert parsed.info.services == ["docassist-api"]


def test_a_new_version_gets_new_chunk_ids() -> None:
    one = parse_document("a.md", "a", "---\nid: DOC-A\nversion: 1\n---\n## S\ntext\n")
    two = parse_document("a.md", "a", "---\nid: DOC-A\nversion: 2\n---\n## S\ntext changed\n")
    assert one.chunks[0].chunk_id != two.chunks[0].chunk_id


def test_document_id_from_the_file_stem() -> None:
    assert document_id_from_stem("onboarding-faq") == "DOC-ONBOARDING-FAQ"
    assert document_id_from_stem("Notatki z 2026 r.") == "DOC-NOTATKI-Z-2026-R"
    parsed = parse_document("onboarding-faq.md", "onboarding-faq",
                            (DEMO_DOCS / "onboarding-faq.md").read_text(encoding="utf-8"))
    assert parsed.info.document_id == "DOC-ONBOARDING-FAQ"
    assert parsed.info.title == "DocAssist onboarding FAQ"


def test_bad_files_are_skipped_with_a_note_and_the_rest_indexed(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "good.md").write_text("# Good\n## Section\nRotate the keys monthly.\n")
    (docs / "empty.md").write_text("  \n")
    (docs / "binary.txt").write_bytes(b"abc\x00def")
    (docs / "latin1.txt").write_bytes("zażółć".encode("iso-8859-2"))
    (docs / "slides.pptx").write_bytes(b"PK")
    (docs / "dup.md").write_text("---\nid: DOC-GOOD\n---\n## X\nsame id\n")
    store = Store(tmp_path / "x.db")
    report = index_paths(store, [docs, tmp_path / "nope.md"])
    assert report.indexed == ["DOC-GOOD"]
    notes = "\n".join(report.notes)
    for fragment in ("nope.md: not found", "empty.md: skipped: empty",
                     "binary.txt: skipped: binary", "latin1.txt: skipped: not UTF-8",
                     "slides.pptx: skipped: unsupported format", "duplicate document id"):
        assert fragment in notes
    assert [d.document_id for d in store.documents()] == ["DOC-GOOD"]
    store.close()


def test_reindexing_replaces_a_documents_chunks(tmp_path: Path) -> None:
    path = tmp_path / "a.md"
    path.write_text("---\nid: DOC-A\n---\n## S\nold words about kettles\n")
    store = Store(tmp_path / "x.db")
    index_paths(store, [path])
    path.write_text("---\nid: DOC-A\n---\n## S\nnew words about teapots\n")
    index_paths(store, [path])
    retriever = Bm25Retriever(store)
    assert retriever.search("kettles", 3) == []
    [hit] = retriever.search("teapots", 3)
    assert hit.chunk.document_id == "DOC-A" and hit.score == 1.0
    store.close()


def test_bm25_finds_polish_inflected_forms(store: Store) -> None:
    retriever = Bm25Retriever(store)
    [best, *_] = retriever.search("kopia zapasowa bazy", 3)
    assert best.document.document_id == "DOC-DB"
    [best, *_] = retriever.search("zgloszenie incydentu", 3)  # no diacritics
    assert best.document.document_id == "DOC-INCIDENT"
    assert retriever.search("", 3) == [] and retriever.search("?!", 3) == []
    retriever.search('"; DROP TABLE chunks; -- AND OR NEAR(', 3)  # FTS syntax is quoted away
    assert store.chunk(best.chunk.chunk_id) is not None


def test_incremental_indexing_versions_and_removals(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    kept, changing, leaving = docs / "kept.md", docs / "changing.md", docs / "leaving.md"
    kept.write_text("## Kept\nThe kettle policy stays the same.\n")
    changing.write_text("---\nid: DOC-CHANGE\nversion: 1\n---\n## Step\nUse the blue form.\n")
    leaving.write_text("## Leaving\nThis file will be deleted.\n")
    store = Store(tmp_path / "x.db")
    first = index_paths(store, [docs])
    assert sorted(first.indexed) == ["DOC-CHANGE", "DOC-KEPT", "DOC-LEAVING"]
    old_chunk = store.current_chunks()[0].chunk_id
    version_before = store.index_version()

    changing.write_text("---\nid: DOC-CHANGE\nversion: 2\n---\n## Step\nUse the green form.\n")
    leaving.unlink()
    second = index_paths(store, [docs])
    assert second.indexed == ["DOC-CHANGE"]
    assert second.unchanged == ["DOC-KEPT"]
    assert second.removed == ["DOC-LEAVING"]
    assert store.index_version() > version_before
    assert [d.document_id for d in store.documents()] == ["DOC-CHANGE", "DOC-KEPT"]
    assert store.document("DOC-CHANGE").version == "2"  # type: ignore[union-attr]
    # The old version's chunk is kept (old citations resolve) but no longer searched.
    assert old_chunk.startswith("DOC-CHANGE-")
    assert store.chunk(old_chunk) is not None and store.is_superseded(old_chunk)
    retriever = Bm25Retriever(store)
    assert [h.chunk.chunk_id for h in retriever.search("blue form", 5)
            if h.chunk.chunk_id == old_chunk] == []
    assert retriever.search("green form", 1)[0].chunk.document_id == "DOC-CHANGE"

    # Retention: superseded chunks older than the setting are pruned.
    third = index_paths(store, [docs], retention_days=0)
    assert third.pruned_chunks >= 2 and store.chunk(old_chunk) is None
    store.close()


def test_a_second_process_indexes_while_the_engine_serves(tmp_path: Path) -> None:
    import subprocess
    import sys

    from docassist.core.extractive import ExtractiveAnswerer
    from docassist.core.tools import default_registry
    from docassist.core.turn import TurnEngine
    from tests.helpers import message, rules_selector

    db = tmp_path / "live.db"
    store = Store(db)
    engine = TurnEngine(store=store, catalog=store, retriever=Bm25Retriever(store),
                        selector=rules_selector(), answerer=ExtractiveAnswerer(),
                        registry=default_registry())
    question = "What is the watering schedule for the office ficus?"
    before = engine.handle(message(question))
    assert before and before.status == "no_answer"
    doc = tmp_path / "plants.md"
    doc.write_text("---\nid: DOC-PLANTS\n---\n## Watering the ficus\n"
                   "Water the office ficus every Monday with half a litre.\n")
    done = subprocess.run([sys.executable, "-m", "docassist", "index", str(doc)],
                          env={"DOCASSIST_DB": str(db), "PATH": ""}, capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    after = engine.handle(message(question, thread="t2"))
    assert after and after.status == "answered"
    assert after.sources[0].document_id == "DOC-PLANTS"
    store.close()
