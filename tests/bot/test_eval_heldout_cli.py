"""`docassist eval retrieval` on a held-out set: expected paths map to ids by the catalog, one
split is kept, plain bm25s is reported beside our retrievers, and scores come per set and
language. The CLI runs as a subprocess on a small tree it indexes first."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli_run import one_json, run

BM25_ONLY = {"DOCASSIST_EMBEDDER": "none", "DOCASSIST_RETRIEVER": "bm25"}
TREE = {
    "en/man1/ls.md": "# ls(1)\n## DESCRIPTION\nList directory contents, hidden files too.\n",
    "pl/man1/ls.md": "# ls(1)\n## OPIS\nWyświetla zawartość katalogu, także ukryte pliki.\n",
    "en/man1/du.md": "# du(1)\n## DESCRIPTION\nEstimate file space usage of a directory.\n",
    "pl/man1/du.md": "# du(1)\n## OPIS\nSzacuje zajętość miejsca na dysku przez katalog.\n",
    "index.md": "# Pages\nAll manual pages.\n",
}
CASES = [
    {"id": "e1", "set": "man", "language": "en", "split": "test",
     "question": "estimate directory space usage",
     "expected_paths": ["en/man1/du.md", "pl/man1/du.md"]},
    {"id": "p1", "set": "man", "language": "pl", "split": "test",
     "question": "jak pokazać ukryte pliki w katalogu", "expected_paths": ["pl/man1/ls.md"]},
    {"id": "t1", "set": "man", "language": "en", "split": "tune",
     "question": "list hidden files", "expected_paths": ["en/man1/ls.md"]},
]


def _tree(root: Path) -> None:
    for relative, text in TREE.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text, encoding="utf-8")


def test_a_held_out_set_is_read_by_path_with_bm25s_beside_and_groups(tmp_path: Path) -> None:
    corpus, db = tmp_path / "corpus", tmp_path / "x.db"
    _tree(corpus)
    indexed = run("index", str(corpus), "--json", db=db, **BM25_ONLY)
    assert indexed.returncode == 0, indexed.stderr
    assert len(one_json(indexed.stdout)["indexed"]) == len(TREE)  # no file skipped
    cases = tmp_path / "cases.jsonl"
    cases.write_text("\n".join(json.dumps(case) for case in CASES), encoding="utf-8")
    done = run("eval", "retrieval", str(cases), "--root", str(corpus), "--split", "test",
               "--json", db=db, **BM25_ONLY)
    assert done.returncode == 0, done.stderr
    report = one_json(done.stdout)
    assert report["total"] == 2 and report["default"] == "bm25"  # the tune case left out
    assert set(report["retrievers"]) == {"bm25"} and set(report["baselines"]) == {"bm25s"}
    first = report["cases"][0]
    assert first["expected_documents"] == ["DOC-EN_MAN1_DU", "DOC-PL_MAN1_DU"]
    assert first["ranks"] == {"bm25": 1, "bm25s": 1}
    assert (first["set"], first["language"], first["split"]) == ("man", "en", "test")
    assert set(report["groups"]) == {"man/en", "man/pl"}
    assert report["groups"]["man/pl"]["bm25"]["recall_at_5"] == 1.0  # by Polish stems
    assert set(report["groups"]["man/en"]) == {"bm25", "bm25s"}


def test_an_expected_path_the_catalog_lacks_is_a_clear_error(tmp_path: Path) -> None:
    corpus, db = tmp_path / "corpus", tmp_path / "x.db"
    _tree(corpus)
    assert run("index", str(corpus), db=db, **BM25_ONLY).returncode == 0
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps({**CASES[0], "expected_paths": ["en/man1/nope.md"]}),
                     encoding="utf-8")
    done = run("eval", "retrieval", str(cases), "--root", str(corpus), "--json", db=db,
               **BM25_ONLY)
    assert done.returncode == 2
    assert "en/man1/nope.md" in one_json(done.stdout)["error"]
    no_root = run("eval", "retrieval", str(cases), "--json", db=db, **BM25_ONLY)
    assert no_root.returncode == 2 and "not in the catalog" in one_json(no_root.stdout)["error"]


def test_a_set_over_documents_not_indexed_is_refused_or_warned_before_it_runs(
        tmp_path: Path) -> None:
    """The demo's answer set run over a handbook scored "right 0.0%" after 84 s with no
    word that none of its documents was indexed."""
    corpus, db = tmp_path / "corpus", tmp_path / "x.db"
    _tree(corpus)
    assert run("index", str(corpus), db=db, **BM25_ONLY).returncode == 0
    cases = tmp_path / "cases.jsonl"
    elsewhere = {"id": "d1", "question": "How do I renew the TLS certificate?",
                 "expected_documents": ["DOC-TLS"]}
    cases.write_text(json.dumps(elsewhere), encoding="utf-8")
    for kind in ("answers", "retrieval"):
        done = run("eval", kind, str(cases), "--json", db=db, **BM25_ONLY)
        assert done.returncode == 2
        assert "none of the 1 documents its cases expect is indexed (DOC-TLS)" in one_json(
            done.stdout)["error"]
    here = {"id": "e2", "question": "list hidden files", "expected_documents": ["DOC-EN_MAN1_LS"]}
    cases.write_text("\n".join(map(json.dumps, (elsewhere, here))), encoding="utf-8")
    mixed = run("eval", "answers", str(cases), "--json", db=db, **BM25_ONLY)
    assert mixed.returncode == 0 and one_json(mixed.stdout)["total"] == 2
    assert "1 of the 2 documents its cases expect are not indexed (DOC-TLS)" in mixed.stderr
