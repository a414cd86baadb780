"""Folders are indexed inside their root, and documents keep their collection (issue 39):
a link leading out of the folder is skipped and named, never read; re-indexing without
`--collection` leaves every document where it is, new files included; naming another
collection moves them and says so."""

from __future__ import annotations

from pathlib import Path

from docassist.storage import Bm25Retriever, Store, index_paths
from tests.cli_run import one_json, run

BM25_ONLY = {"DOCASSIST_EMBEDDER": "none", "DOCASSIST_RETRIEVER": "bm25"}
SECRET = "db_password = Tr0ub4dor-outside"


def _folder(tmp_path: Path) -> tuple[Path, Path]:
    outside = tmp_path / "etc"
    outside.mkdir()
    (outside / "secrets.md").write_text(f"# Secrets\n{SECRET}\n")
    (outside / "more").mkdir()
    (outside / "more" / "keys.md").write_text("# Keys\napi_key = outside-key-77\n")
    folder = tmp_path / "handbook"
    folder.mkdir()
    (folder / "leave.md").write_text("# Leave\nAsk your manager for leave two weeks ahead.\n")
    (folder / "passwords.md").symlink_to(outside / "secrets.md")
    (folder / "vault").symlink_to(outside / "more")
    return folder, outside


def test_links_leading_out_of_the_folder_are_skipped_by_name_and_never_read(
        tmp_path: Path) -> None:
    folder, _outside = _folder(tmp_path)
    store = Store(tmp_path / "walls.db")
    report = index_paths(store, [folder])
    assert report.indexed == ["DOC-LEAVE"]
    assert [note.split(": skipped")[0] for note in report.notes] == [
        str(folder / "passwords.md"), str(folder / "vault")]
    assert all("a link leading outside" in note for note in report.notes)
    assert Bm25Retriever(store).search("db_password", 3) == []
    assert Bm25Retriever(store).search("api_key", 3) == []
    store.close()


def test_a_file_once_indexed_that_became_a_link_outside_leaves_the_catalog(
        tmp_path: Path) -> None:
    folder = tmp_path / "handbook"
    folder.mkdir()
    (folder / "leave.md").write_text("# Leave\nAsk your manager.\n")
    (folder / "passwords.md").write_text("# Passwords\nUse the vault.\n")
    store = Store(tmp_path / "walls.db")
    assert sorted(index_paths(store, [folder]).indexed) == ["DOC-LEAVE", "DOC-PASSWORDS"]
    outside = tmp_path / "secrets.md"
    outside.write_text(f"# Passwords\n{SECRET}\n")
    (folder / "passwords.md").unlink()
    (folder / "passwords.md").symlink_to(outside)
    report = index_paths(store, [folder])
    assert report.removed == ["DOC-PASSWORDS"] and report.unchanged == ["DOC-LEAVE"]
    assert [d.document_id for d in store.documents()] == ["DOC-LEAVE"]
    store.close()


def test_a_link_that_stays_inside_the_root_and_a_file_named_directly_are_indexed(
        tmp_path: Path) -> None:
    folder, outside = _folder(tmp_path)
    (folder / "current.md").symlink_to(folder / "leave.md")
    store = Store(tmp_path / "walls.db")
    assert sorted(index_paths(store, [folder]).indexed) == ["DOC-CURRENT", "DOC-LEAVE"]
    # named by the operator, a file is its own root
    assert index_paths(store, [outside / "secrets.md"]).indexed == ["DOC-SECRETS"]
    store.close()


def test_reindexing_without_a_collection_keeps_every_document_in_its_collection(
        tmp_path: Path) -> None:
    folder = tmp_path / "hr"
    folder.mkdir()
    (folder / "pay.md").write_text("# Pay\nSalaries are paid on the 25th.\n")
    (folder / "bonus.md").write_text("# Bonus\nBonuses are paid in March.\n")
    store = Store(tmp_path / "c.db")
    index_paths(store, [folder], collection="restricted")
    (folder / "reviews.md").write_text("# Reviews\nReviews happen in October.\n")
    again = index_paths(store, [folder])
    assert sorted(again.unchanged) == ["DOC-BONUS", "DOC-PAY"] and again.moved == []
    assert again.indexed == ["DOC-REVIEWS"]
    assert {d.document_id: d.collection for d in store.documents()} == {
        "DOC-BONUS": "restricted", "DOC-PAY": "restricted", "DOC-REVIEWS": "restricted"}
    moved = index_paths(store, [folder], collection="hr")
    assert sorted((m.document_id, m.from_collection, m.to_collection) for m in moved.moved) == [
        ("DOC-BONUS", "restricted", "hr"), ("DOC-PAY", "restricted", "hr"),
        ("DOC-REVIEWS", "restricted", "hr")]
    assert {d.collection for d in store.documents()} == {"hr"}
    store.close()


def test_the_index_command_keeps_the_collection_and_says_when_it_moves_documents(
        tmp_path: Path) -> None:
    db = tmp_path / "cli.db"
    folder = tmp_path / "hr"
    folder.mkdir()
    (folder / "pay.md").write_text("# Pay\nSalaries are paid on the 25th.\n")
    first = run("index", str(folder), "--collection", "restricted", "--json", db=db, **BM25_ONLY)
    assert first.returncode == 0, first.stderr
    again = run("index", str(folder), db=db, **BM25_ONLY)
    assert again.returncode == 0 and again.stdout.strip() == "indexed 0, unchanged 1, removed 0"
    [document] = one_json(run("docs", "--json", db=db, **BM25_ONLY).stdout)
    assert document["collection"] == "restricted"
    moved = run("index", str(folder), "--collection", "hr", db=db, **BM25_ONLY)
    assert "moved DOC-PAY from collection restricted to hr" in moved.stdout
    as_json = one_json(run("index", str(folder), "--collection", "ops", "--json", db=db,
                           **BM25_ONLY).stdout)
    assert as_json["moved"] == [{"document_id": "DOC-PAY", "from": "hr", "to": "ops"}]


def test_indexing_a_path_that_does_not_exist_is_a_usage_error_naming_it(
        tmp_path: Path) -> None:
    db = tmp_path / "none.db"
    done = run("index", str(tmp_path / "nope"), "--json", db=db, **BM25_ONLY)
    assert done.returncode == 2
    assert one_json(done.stdout) == {"error": f"no such file or folder: {tmp_path / 'nope'}"}
    assert not db.exists()
