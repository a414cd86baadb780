"""What only the PostgreSQL store has to show: two processes' stores on one database see one
index (a replica searches what another indexed, without a restart); a read-only database
and a server that is gone give the clear `storage_unavailable` reply, with no tool run and
nothing half-written; migrations of replicas starting together do not race."""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Iterator

import pytest

from docassist.core import i18n
from docassist.core.answering import ExtractiveAnswerer
from docassist.core.documents import parse_document
from docassist.core.errors import StorageUnavailableError
from docassist.core.rules import RulesSelector
from docassist.core.tools import ToolRegistry
from docassist.core.turn import TurnEngine
from docassist.models.embedders import get_embedder
from docassist.storage import Bm25Retriever
from docassist.storage.dense import DenseRetriever, HybridRetriever, embed_missing
from docassist.storage.postgres import PostgresStore
from docassist.storage.postgres.schema import MIGRATIONS
from tests.helpers import message, recording
from tests.pg import PgCluster


@pytest.fixture
def two_stores(pg_demo_url: str) -> Iterator[tuple[PostgresStore, PostgresStore]]:
    """Two stores on one database, as two replicas hold them."""
    first, second = PostgresStore(pg_demo_url), PostgresStore(pg_demo_url)
    yield first, second
    first.close()
    second.close()


ZEBRA = ("---\nid: DOC-ZEBRA\n---\n# Zebra crossing duty\n\n## Painting the stripes\n"
         "Paint the zebra stripes with reflective paint every spring.\n")


def test_a_replica_searches_what_another_indexed_without_a_restart(
        two_stores: tuple[PostgresStore, PostgresStore]) -> None:
    indexer, replica = two_stores
    embedder = get_embedder("use")
    search = HybridRetriever(Bm25Retriever(replica), DenseRetriever(replica, embedder))
    before = search.search("When are the zebra stripes painted?", 3)
    assert all(hit.document.document_id != "DOC-ZEBRA" for hit in before)  # indexes built
    indexer.replace_document(parse_document("zebra.md", "zebra", ZEBRA), "zebra.md")
    embed_missing(indexer, embedder)
    after = search.search("When are the zebra stripes painted?", 3)
    assert after[0].document.document_id == "DOC-ZEBRA"
    assert after[0].score > 0.3  # its vector came from the database, not re-embedded here
    dense = search.dense.search("zebra crossing stripes", 1)
    assert dense[0].document.document_id == "DOC-ZEBRA"
    indexer.remove_document("DOC-ZEBRA")
    assert all(hit.document.document_id != "DOC-ZEBRA"
               for hit in search.search("When are the zebra stripes painted?", 3))


def test_a_read_only_database_gets_a_clear_reply_and_nothing_runs(
        pg_cluster: PgCluster, pg_demo_url: str, registry: ToolRegistry,
        caplog: pytest.LogCaptureFixture) -> None:
    name = pg_demo_url.rsplit("/", 1)[1]
    pg_cluster.admin(f'ALTER DATABASE "{name}" SET default_transaction_read_only = on')
    store = PostgresStore(pg_demo_url)  # new connections are read-only; reading works
    try:
        engine = TurnEngine(store=store, catalog=store, retriever=Bm25Retriever(store),
                            selector=RulesSelector(), answerer=ExtractiveAnswerer(),
                            registry=registry)
        with caplog.at_level(logging.ERROR), recording(registry,
                                                       *registry.names()) as recorders:
            english = engine.handle(message("How do I renew the TLS certificate?"))
            polish = engine.handle(message("Jak odnowić certyfikat TLS?", thread="t2"))
        assert english and english.status == "storage_unavailable" and english.turn_id == 0
        assert english.answer == i18n.text("storage_read_only", "en")
        assert polish and polish.answer == i18n.text("storage_read_only", "pl")
        assert all(recorder.calls == [] for recorder in recorders.values())
        assert store.turns() == [] and store.tool_calls() == []
        assert any("read-only" in record.getMessage() for record in caplog.records)
        assert store.document("DOC-TLS") is not None
    finally:
        store.close()


def test_a_server_that_is_gone_gets_a_clear_reply_and_the_engine_goes_on(
        pg_cluster: PgCluster, registry: ToolRegistry) -> None:
    name = f"t_{uuid.uuid4().hex[:12]}"
    pg_cluster.admin(f'CREATE DATABASE "{name}"')
    store = PostgresStore(pg_cluster.url(name))
    engine = TurnEngine(store=store, catalog=store, retriever=Bm25Retriever(store),
                        selector=RulesSelector(), answerer=ExtractiveAnswerer(),
                        registry=registry)
    try:
        pg_cluster.admin(f'DROP DATABASE "{name}" WITH (FORCE)')  # connections are cut
        with recording(registry, *registry.names()) as recorders:
            result = engine.handle(message("How do I renew the TLS certificate?"))
        assert result and result.status == "storage_unavailable" and result.turn_id == 0
        assert result.answer == i18n.text("storage_unavailable", "en")
        assert all(recorder.calls == [] for recorder in recorders.values())
        with pytest.raises(StorageUnavailableError):
            store.turns()
    finally:
        store.close()


def test_replicas_starting_together_migrate_once(pg_url: str) -> None:
    opened: list[PostgresStore] = []
    applied_by: list[list[str]] = []
    errors: list[BaseException] = []
    ready = threading.Barrier(4)

    def start() -> None:
        try:
            store = PostgresStore(pg_url, migrate_now=False)
            opened.append(store)
            ready.wait(30)
            applied_by.append(store.migrate())
        except BaseException as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=start) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert errors == []
    assert sorted(applied_by) == [[], [], [], [name for name, _ in MIGRATIONS]]
    assert all(store.pending_migrations() == [] for store in opened)
    applied = opened[0]._value("SELECT count(*) FROM docassist_migrations")
    assert applied == len(MIGRATIONS)
    for store in opened:
        store.close()
