"""A page that never mentions a thing the question names (a product, a tool, a protocol) is
not answered from: the reply says the documents do not have it and names the page, and the
trace keeps the reason. On the twenty-fifth held-out set, yes/no questions about a feature
a service's page never names ("czy mogę włączyć rozszerzenie PostGIS?") were answered."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_run import demo_pages_with, one_json, run, trace_rows

DATABASES = """---
id: DOC-DATABASES
title: Managed databases
language: en
---
## Extensions on the postgres database

The managed postgres database comes with the pg_trgm and postgres_fdw extensions{more}.
Enable an extension with CREATE EXTENSION from the database's admin account.

## Backups

Backups of the managed database are taken every night and kept for 14 days.
"""


def _indexed(tmp_path: Path, more: str) -> Path:
    return demo_pages_with(tmp_path, "databases.md", DATABASES.format(more=more))


@pytest.mark.parametrize(("question", "said"), [
    ("can I enable the PostGIS extension on our postgres database?",
     "I didn't find this in the documents. The closest document, Managed databases "
     "(DOC-DATABASES), does not mention PostGIS."),
    ("czy mogę włączyć rozszerzenie PostGIS na naszej bazie postgres?",
     "Nie znalazłem tego w dokumentach. Najbliższy dokument, Managed databases "
     "(DOC-DATABASES), nie wspomina o PostGIS."),
])
def test_a_page_that_never_names_the_thing_asked_about_is_not_answered_from(
        tmp_path: Path, question: str, said: str) -> None:
    db = _indexed(tmp_path, more="")
    done = run("ask", question, "--thread", "T1", "--json", db=db, DOCASSIST_MODEL="rules")
    assert done.returncode == 0, done.stderr
    reply = one_json(done.stdout)
    assert reply["status"] == "no_answer", reply["answer"]
    assert reply["answer"] == said
    assert reply["sources"] == []
    (row,) = trace_rows(tmp_path, db)
    assert row["status"] == "no_answer"
    assert row["warnings"] == ["unmentioned_name"]
    # The search ran and refused; nothing else did.
    assert [call["tool_name"] for call in row["tool_calls"]] == ["answer_from_documents"]


def test_the_same_page_naming_it_answers(tmp_path: Path) -> None:
    db = _indexed(tmp_path, more=", and PostGIS on request")
    done = run("ask", "can I enable the PostGIS extension on our postgres database?", "--json",
               db=db, DOCASSIST_MODEL="rules")
    assert done.returncode == 0, done.stderr
    reply = one_json(done.stdout)
    assert reply["status"] == "answered", reply["answer"]
    assert "PostGIS" in reply["answer"]
    assert reply["sources"][0]["document_id"] == "DOC-DATABASES"


MAPS = """---
id: DOC-MAPS
title: Map tiles service
language: en
---
## Where the tiles come from

The map tiles service renders tiles from its own PostGIS database, refreshed weekly.
"""


def test_a_name_another_retrieved_page_holds_is_a_word_of_the_collection(tmp_path: Path
                                                                         ) -> None:
    """"OTel" in the OpenTelemetry community's pages: not every page says it, and a question
    naming it is not refused for that; only a name nothing retrieved mentions is."""
    db = _indexed(tmp_path, more="")
    corpus = tmp_path / "corpus"
    (corpus / "maps.md").write_text(MAPS, encoding="utf-8")
    assert run("index", str(corpus), "--json", db=db).returncode == 0
    done = run("ask", "can I enable the PostGIS extension on our postgres database?", "--json",
               db=db, DOCASSIST_MODEL="rules")
    assert done.returncode == 0, done.stderr
    reply = one_json(done.stdout)
    assert reply["status"] == "answered", reply["answer"]
    assert "does not mention" not in reply["answer"]
    # From the databases page, which never names PostGIS: the maps page holds the name.
    assert reply["sources"][0]["document_id"] == "DOC-DATABASES"


POOLER = """---
id: DOC-POOLER
title: Connection pooling
language: en
---
## The pooler in front of the maps database

The maps service reaches its database through pgbouncer, in transaction mode.
"""


def test_a_name_written_in_lower_case_that_no_document_holds_is_not_answered_from(
        tmp_path: Path) -> None:
    """Chat writes names in lower case; a word general English rarely uses is one."""
    db = _indexed(tmp_path, more="")
    question = "can we put pgbouncer in front of our managed postgres database?"
    done = run("ask", question, "--json", db=db, DOCASSIST_MODEL="rules")
    assert done.returncode == 0, done.stderr
    reply = one_json(done.stdout)
    assert reply["status"] == "no_answer", reply["answer"]
    assert reply["answer"] == (
        "I didn't find this in the documents. The closest document, Managed databases "
        "(DOC-DATABASES), does not mention pgbouncer.")
    assert reply["sources"] == []
    (row,) = trace_rows(tmp_path, db)
    assert row["warnings"] == ["unmentioned_name"]
    assert [call["tool_name"] for call in row["tool_calls"]] == ["answer_from_documents"]

    # Once a document of the collection holds the word, it is the collection's word, not a
    # missing thing.
    (tmp_path / "corpus" / "pooler.md").write_text(POOLER, encoding="utf-8")
    assert run("index", str(tmp_path / "corpus"), "--json", db=db).returncode == 0
    reply = one_json(run("ask", question, "--json", db=db, DOCASSIST_MODEL="rules").stdout)
    assert "does not mention" not in reply["answer"], reply["answer"]
