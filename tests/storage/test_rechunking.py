"""A document cut by an older chunking is cut anew by the next `index` or sync, even when
its bytes did not change (issue 40: long sections keep their lists and lines), and its
chunks' vectors are made again for their new text."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from docassist.core.documents import CHUNKING_VERSION, split_by_size
from docassist.core.sources import Source, SourceKind
from docassist.models.embedders import get_embedder
from docassist.sources.sync import sync_all
from docassist.storage import Store, index_paths
from docassist.storage.dense import embed_missing
from docassist_testkit.fakes.web_site import WebSite, page

ITEMS = "\n".join(f"- Step {n}: open the console and check the value of setting {n}."
                  for n in range(40))
LONG = f"# Checklist\n\n## Before a release\n\nDo these in order:\n\n{ITEMS}\n"


def test_long_sections_are_cut_between_lines_and_keep_their_list_items() -> None:
    windows = split_by_size(LONG.split("\n\n", 2)[2], 1500, 1000, 200)
    assert len(windows) > 1
    for window in windows:
        assert all(line.startswith(("- Step", "Do these")) for line in window.splitlines()
                   if line)


def _age(db: Path) -> None:
    """The catalog as a release before CHUNKING_VERSION left it."""
    with sqlite3.connect(db) as connection:
        connection.execute("UPDATE documents SET chunking = NULL")


def test_index_cuts_a_document_of_an_older_chunking_again(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "checklist.md").write_text(LONG)
    db = tmp_path / "c.db"
    store = Store(db)
    assert index_paths(store, [folder]).indexed == ["DOC-CHECKLIST"]
    store.close()
    _age(db)
    store = Store(db)
    again = index_paths(store, [folder])
    assert again.indexed == ["DOC-CHECKLIST"] and again.unchanged == []
    document = store.document("DOC-CHECKLIST")
    assert document is not None and document.chunking == CHUNKING_VERSION
    assert index_paths(store, [folder]).unchanged == ["DOC-CHECKLIST"]  # once only
    store.close()


def test_a_web_page_of_an_older_chunking_is_fetched_whole_and_cut_again(
        tmp_path: Path) -> None:
    site = WebSite()
    try:
        site.state.pages["/checklist.html"] = page("Checklist", ("Before a release", ITEMS))
        db = tmp_path / "w.db"
        store = Store(db)
        store.add_source(Source(name="wiki", kind=SourceKind.WEB,
                                settings={"url": f"{site.url}/sitemap.xml"}))
        assert sync_all(store)[0].added == ["DOC-CHECKLIST"]
        store.close()
        _age(db)
        site.state.headers_seen.clear()
        store = Store(db)
        [outcome] = sync_all(store)
        assert outcome.updated == ["DOC-CHECKLIST"]
        conditional = [h for h in site.state.headers_seen if "If-None-Match" in h]
        assert conditional == []  # no 304 could hand back the old cut
        document = store.document("DOC-CHECKLIST")
        assert document is not None and document.chunking == CHUNKING_VERSION
        store.close()
    finally:
        site.stop()


def test_a_recut_keeps_the_vectors_of_chunks_whose_text_did_not_change(tmp_path: Path) -> None:
    """A new chunking re-cuts every page at the next index; a page it cuts as before keeps
    its vectors (re-embedding a whole corpus for nothing took as long as a first index)."""
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "checklist.md").write_text(LONG)
    (folder / "short.md").write_text("# Short\n\n## Once\n\nOne line.\n")
    db = tmp_path / "k.db"
    store = Store(db)
    index_paths(store, [folder])
    embed_missing(store, get_embedder("use"))
    store.close()
    with sqlite3.connect(db) as connection:
        before = dict(connection.execute("SELECT chunk_id, vector FROM embeddings"))
        # An older cut of the short page: its one chunk had another text then.
        connection.execute("UPDATE chunks SET text = text || ' (old cut)' "
                           "WHERE document_id = 'DOC-SHORT'")
    _age(db)
    store = Store(db)
    assert sorted(index_paths(store, [folder]).indexed) == ["DOC-CHECKLIST", "DOC-SHORT"]
    store.close()
    with sqlite3.connect(db) as connection:
        after = dict(connection.execute("SELECT chunk_id, vector FROM embeddings"))
    short = [chunk_id for chunk_id in before if chunk_id.startswith("DOC-SHORT-")]
    assert short and not any(chunk_id in after for chunk_id in short)  # made again
    assert {k: v for k, v in before.items() if k not in short} == after
