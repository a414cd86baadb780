"""The operator's side as a real process: `index --collection`, `docs --json`, `ask
--collections`, `scopes …` (and its errors), traces filtered by audience and collection."""

from __future__ import annotations

import json
from pathlib import Path

from docassist.storage import Store
from tests.cli_run import one_json, run
from tests.conftest import DEMO_DOCS
from tests.scopes.scoped_corpus import TLS_QUESTION

FAST = {"DOCASSIST_EMBEDDER": "none", "DOCASSIST_RETRIEVER": "bm25"}


def indexed(tmp_path: Path) -> Path:
    db = tmp_path / "scopes.db"
    assert run("index", str(DEMO_DOCS / "tls-renewal.md"), "--collection", "security",
               db=db, **FAST).returncode == 0
    assert run("index", str(DEMO_DOCS / "worker-queue.md"), db=db, **FAST).returncode == 0
    return db


def test_collections_from_index_to_docs_ask_and_traces(tmp_path: Path) -> None:
    db = indexed(tmp_path)
    listed = one_json(run("docs", "--json", db=db, **FAST).stdout)
    assert {(d["document_id"], d["collection"]) for d in listed} == {
        ("DOC-TLS", "security"), ("DOC-WORKER", "default")}
    every = one_json(run("ask", TLS_QUESTION, "--json", db=db, **FAST).stdout)
    assert every["status"] == "answered" and every["sources"][0]["document_id"] == "DOC-TLS"
    narrowed = run("ask", TLS_QUESTION, "--collections", "default", "--json", db=db, **FAST)
    assert narrowed.returncode == 0
    assert "DOC-TLS" not in narrowed.stdout  # the answer, sources and all
    out = tmp_path / "traces.jsonl"
    assert run("traces", "export", "--out", str(out), "--collection", "security",
               db=db, **FAST).returncode == 0
    [row] = [json.loads(line) for line in out.read_text().splitlines()]
    assert (row["audience"], row["collections"]) == ("operator", ["default", "security"])


def test_scopes_set_list_share_and_the_change_log(tmp_path: Path) -> None:
    db = indexed(tmp_path)
    done = run("scopes", "set", "slack:C1", "security", "default", "--json", db=db)
    assert done.returncode == 0, done.stderr
    assert one_json(done.stdout)["mappings"] == {"slack:C1": ["default", "security"]}
    assert run("scopes", "share", "security", db=db).returncode == 0
    listing = one_json(run("scopes", "--json", db=db).stdout)
    assert listing["shareable"] == ["security"]
    assert listing["collections"] == ["default", "security"]
    store = Store(db)
    try:
        changes = store.scope_changes()
    finally:
        store.close()
    assert [c["subject"] for c in changes] == ["slack:C1", "shareable:security"]
    assert all(c["admin"].startswith("cli") for c in changes)


def test_an_unknown_collection_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    db = indexed(tmp_path)
    done = run("scopes", "set", "slack:C1", "securty", "--json", db=db)
    assert done.returncode == 2
    assert "Unknown collection: securty" in one_json(done.stdout)["error"]
    assert "Unknown collection" in done.stderr
    asked = run("ask", TLS_QUESTION, "--collections", "hr", "--json", db=db, **FAST)
    assert asked.returncode == 2 and "unknown collection: hr" in one_json(asked.stdout)["error"]
    bad = run("index", str(DEMO_DOCS), "--collection", "no spaces", "--json", db=db, **FAST)
    assert bad.returncode == 2 and "invalid collection name" in one_json(bad.stdout)["error"]
    store = Store(db)
    try:
        assert store.scope_mappings() == {} and store.scope_changes() == []
        assert store.turns() == [] and store.tool_calls() == []  # no turn ran, no tool
        assert {d.document_id for d in store.documents()} == {"DOC-TLS", "DOC-WORKER"}
    finally:
        store.close()


def test_a_channel_named_instead_of_its_id_and_clearing_nothing_are_refused(
        tmp_path: Path) -> None:
    """Issue 39: `slack:general` could never match a channel; clearing a subject with no
    mapping said "Scopes changed."."""
    db = indexed(tmp_path)
    for subject in ("slack:general", "slack:#ops", "user:slack:alice"):
        named = run("scopes", "set", subject, "security", "--json", db=db)
        assert named.returncode == 2, subject
        assert f"“{subject}” is not a Slack id" in one_json(named.stdout)["error"]
    cleared = run("scopes", "clear", "slack:C0NOTMAPPED", "--json", db=db)
    assert cleared.returncode == 2
    assert one_json(cleared.stdout)["error"] == (
        "slack:C0NOTMAPPED has no mapping. Nothing changed.")
    store = Store(db)
    try:
        assert store.scope_mappings() == {} and store.scope_changes() == []
    finally:
        store.close()
