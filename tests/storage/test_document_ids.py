"""Document ids come from paths: a real tree (many index.md, parallel ru/ and en/ folders)
indexes every file, ids are stable across re-indexing, and two paths never share an id."""

from __future__ import annotations

import hashlib
from pathlib import Path, PurePosixPath

from docassist.core.documents import DOCUMENT_ID_PATTERN, document_id_from_path, is_document_id
from docassist.storage import Bm25Retriever, Store, index_paths

TREE = {
    "index.md": "# Home\nWelcome to the generator.\n",
    "quickstart.md": "# Quickstart\nInstall the generator with pip.\n",
    "en/index.md": "# Docs\nThe English documentation.\n",
    "en/quickstart.md": "# Quickstart\nRun the build command.\n",
    "en/guides/index.md": "# Guides\nAll guides.\n",
    "en/guides/generate-pdf.md": "# Generate a PDF\nUse the pdf exporter with weasyprint.\n",
    "ru/index.md": "# Документация\nРусская документация.\n",
    "ru/quickstart.md": "# Быстрый старт\nЗапустите команду сборки.\n",
    "ru/guides/index.md": "# Руководства\nВсе руководства.\n",
    "ru/guides/generate-pdf.md": "# Генерация PDF\nИспользуйте экспорт в PDF.\n",
    "ru/guides/generate_pdf.md": "# Другой PDF\nЭтот файл даёт тот же id.\n",
}


def _write_tree(root: Path) -> None:
    for relative, text in TREE.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def test_ids_follow_the_path_rule() -> None:
    assert document_id_from_path(PurePosixPath("onboarding-faq.md")) == "DOC-ONBOARDING-FAQ"
    assert (document_id_from_path(PurePosixPath("ru/guides/generate-pdf.md"))
            == "DOC-RU_GUIDES_GENERATE-PDF")
    assert document_id_from_path(PurePosixPath("a b/c.d/index.html")) == "DOC-A-B_C-D_INDEX"
    deep = PurePosixPath("/".join(["very-long-folder-name"] * 6) + "/page.md")
    long_id = document_id_from_path(deep)
    assert is_document_id(long_id)
    assert long_id.endswith(hashlib.sha256(str(deep).encode()).hexdigest()[:6].upper())


def test_a_real_tree_indexes_every_file_with_stable_ids(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    _write_tree(docs)
    store = Store(tmp_path / "x.db")
    report = index_paths(store, [docs])
    assert not [note for note in report.notes if "duplicate" in note]
    by_path = {str(Path(d.source_path).relative_to(docs.resolve())): d.document_id
               for d in store.documents()}
    assert len(by_path) == len(TREE)  # every file, none skipped
    assert by_path["index.md"] == "DOC-INDEX"
    assert by_path["en/index.md"] == "DOC-EN_INDEX"
    assert by_path["ru/guides/index.md"] == "DOC-RU_GUIDES_INDEX"
    assert by_path["ru/guides/generate-pdf.md"] == "DOC-RU_GUIDES_GENERATE-PDF"
    # "generate_pdf.md" would have the same id; it sorts second and gets its path's hash.
    suffix = hashlib.sha256(b"ru/guides/generate_pdf.md").hexdigest()[:6].upper()
    assert by_path["ru/guides/generate_pdf.md"] == f"DOC-RU_GUIDES_GENERATE-PDF-{suffix}"
    ids = list(by_path.values())
    assert len(set(ids)) == len(ids)
    assert all(DOCUMENT_ID_PATTERN.match(i) for i in ids)
    chunks = store.current_chunks()
    assert all(chunk.chunk_id.startswith(chunk.document_id + "-") for chunk in chunks)
    header = next(c.header for c in chunks if c.document_id == "DOC-RU_GUIDES_INDEX")
    assert header.startswith("ru/guides/index.md | ")  # not one of many "index.md"
    hit = Bm25Retriever(store).search("weasyprint", 1)[0]
    assert hit.document.document_id == "DOC-EN_GUIDES_GENERATE-PDF"

    # Re-indexing keeps every id, also after a file changes.
    (docs / "ru/guides/generate-pdf.md").write_text("# Генерация PDF\nНовый текст.\n",
                                                    encoding="utf-8")
    again = index_paths(store, [docs])
    assert again.indexed == [by_path["ru/guides/generate-pdf.md"]]
    assert {str(Path(d.source_path).relative_to(docs.resolve())): d.document_id
            for d in store.documents()} == by_path
    store.close()


def test_a_declared_id_never_takes_the_id_of_another_files_path(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    (docs / "en").mkdir(parents=True)
    (docs / "en" / "setup.md").write_text("# Setup\nInstall it.\n")
    (docs / "a.md").write_text("---\nid: DOC-EN_SETUP\n---\n# A\nClaims a path id.\n")
    store = Store(tmp_path / "x.db")
    report = index_paths(store, [docs])
    assert report.indexed == ["DOC-EN_SETUP"]
    assert "a.md: skipped: duplicate document id DOC-EN_SETUP" in "\n".join(report.notes)
    holder = store.document("DOC-EN_SETUP")
    assert holder is not None and holder.source_path.endswith("en/setup.md")
    store.close()
