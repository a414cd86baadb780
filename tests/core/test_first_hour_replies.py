"""Replies a newcomer meets first (issue 42, items 4 and 6): `/meta` gives the document's
link, never the server's path to its file, and "—" for a document without a version; a
question over an empty catalog says that nothing is indexed yet, in the user's language;
the Slack and Teams catalogs show a document's own version only, never its content hash."""

from __future__ import annotations

import json

from docassist.bot.slack.render import catalog_message
from docassist.bot.teams.cards import catalog_card
from docassist.core.messages import Command
from docassist.core.turn import TurnEngine
from docassist.storage import Store
from tests.helpers import message


def meta(engine: TurnEngine, document_id: str) -> str:
    result = engine.handle(message(f"/meta {document_id}", thread=document_id,
                                   command=Command.METADATA, argument=document_id))
    assert result and result.status == "metadata_shown"
    assert result.metadata and result.metadata["source_path"]  # JSON keeps every field
    return result.answer


def test_meta_shows_the_documents_link_not_the_servers_file(engine: TurnEngine,
                                                           store: Store) -> None:
    paths = [document.source_path for document in store.documents()]
    answer = meta(engine, "DOC-TLS")
    assert answer.splitlines()[-1] == "Link: https://intranet.example.com/docs/DOC-TLS"
    assert not any(path in answer for path in paths)
    without_link = meta(engine, "DOC-DB")  # no url in its front matter: no link line at all
    assert "Link:" not in without_link and not any(path in without_link for path in paths)


def test_meta_of_a_versionless_document_shows_a_dash_not_its_hash(engine: TurnEngine,
                                                                 store: Store) -> None:
    [faq] = [d for d in store.documents() if d.document_id == "DOC-ONBOARDING-FAQ"]
    answer = meta(engine, faq.document_id)
    assert "Version: — ·" in answer and faq.version not in answer


def test_an_empty_catalog_says_nothing_is_indexed_in_polish_too(engine: TurnEngine,
                                                               store: Store) -> None:
    for document in store.documents():
        store.remove_document(document.document_id)
    result = engine.handle(message("Jak odnowić certyfikat TLS?"))
    assert result and result.status == "no_answer"
    assert result.answer.startswith("Nie ma jeszcze żadnych zaindeksowanych dokumentów")
    assert "docassist index ŚCIEŻKA" in result.answer


def test_the_slack_and_teams_catalogs_show_no_hash_for_a_versionless_document(
        store: Store) -> None:
    documents = store.documents()
    [faq] = [d for d in documents if d.document_id == "DOC-ONBOARDING-FAQ"]
    [tls] = [d for d in documents if d.document_id == "DOC-TLS"]
    slack = catalog_message(documents, "en")["text"]
    teams = json.dumps(catalog_card(documents, "en"), ensure_ascii=False)
    for shown in (slack, teams):
        assert faq.version not in shown and f"(v{tls.version})" in shown
