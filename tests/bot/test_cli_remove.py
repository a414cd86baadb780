"""`docassist remove`: documents taken out of the catalog are neither listed nor answered
from, and a wrong name removes nothing. A newcomer who followed the README had the demo's
procedures answering questions about their own handbook, and no way to take them out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.cli_run import one_json, run
from tests.conftest import REPO

DEMO = ["DOC-ACCESS", "DOC-DB", "DOC-INCIDENT", "DOC-INSTR", "DOC-ONBOARDING-FAQ", "DOC-TLS",
        "DOC-WORKER"]
DEMO_FOLDER = REPO / "samples" / "docs"


def _catalog(db: str) -> list[str]:
    return [document["document_id"] for document in one_json(run("docs", "--json",
                                                                  db=db).stdout)]


def _cited_documents(answer: dict[str, Any]) -> set[str]:
    return {source["document_id"] for source in answer["sources"]}


def test_a_removed_document_is_neither_listed_nor_answered_from(any_db: str) -> None:
    question = "How do I renew the TLS certificate?"
    before = one_json(run("ask", question, "--json", db=any_db).stdout)
    assert "DOC-TLS" in _cited_documents(before)
    done = run("remove", "DOC-TLS", "--json", db=any_db)
    assert done.returncode == 0, done.stderr
    assert one_json(done.stdout) == {"removed": ["DOC-TLS"]}
    assert _catalog(any_db) == [document for document in DEMO if document != "DOC-TLS"]
    after = one_json(run("ask", question, "--json", db=any_db).stdout)
    assert "DOC-TLS" not in _cited_documents(after)
    assert "DOC-TLS" not in after["answer"]


def test_a_collection_is_removed_whole(any_db: str) -> None:
    done = run("remove", "--collection", "default", db=any_db)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"removed 7: {', '.join(DEMO)}"
    assert _catalog(any_db) == []


def test_a_wrong_name_removes_nothing(any_db: str) -> None:
    unknown = run("remove", "DOC-TLS", "DOC-NOPE", db=any_db)
    assert unknown.returncode == 2
    assert "error: no such document: DOC-NOPE (nothing removed)" in unknown.stderr
    assert unknown.stdout == ""
    collection = run("remove", "--collection", "hr", "--json", db=any_db)
    assert collection.returncode == 2
    assert one_json(collection.stdout) == {
        "error": "no document is in collection 'hr' (nothing removed); collections: default"}
    nothing = run("remove", db=any_db)
    assert nothing.returncode == 2
    assert "name the documents to remove, or --collection NAME" in nothing.stderr
    assert _catalog(any_db) == DEMO


def test_indexing_beside_the_demo_says_how_to_take_it_out(any_db: str, tmp_path: Path) -> None:
    page = tmp_path / "handbook" / "leave.md"
    page.parent.mkdir()
    page.write_text("# Annual leave\n\nBook leave in the HR portal two weeks ahead.\n",
                    encoding="utf-8")
    done = run("index", str(page.parent), "--collection", "hr", db=any_db)
    assert done.returncode == 0, done.stderr
    assert (f"note: this database also holds the demo corpus (7 documents from {DEMO_FOLDER}), "
            f"searched with yours; `docassist remove {' '.join(DEMO)}` takes it out"
            ) in done.stderr
    assert "demo corpus" not in done.stdout
    assert "demo corpus" not in run("index", str(DEMO_FOLDER), db=any_db).stderr  # the demo
    assert run("remove", "--collection", "default", db=any_db).returncode == 0
    again = run("index", str(page.parent), "--collection", "hr", db=any_db)
    assert "demo corpus" not in again.stderr
    [left] = one_json(run("docs", "--json", db=any_db).stdout)
    assert left["collection"] == "hr"
