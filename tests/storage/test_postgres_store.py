"""What only the PostgreSQL store has to show: two processes' stores on one database see one
index (a replica searches what another indexed, without a restart); a read-only database
and a server that is gone give the clear `storage_unavailable` reply, with no tool run and
nothing half-written; migrations of replicas starting together do not race."""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Iterator

import pytest
from sqlite_utils import Database

from docassist.core import i18n
from docassist.core.documents import parse_document
from docassist.core.errors import StorageUnavailableError
from docassist.core.extractive import ExtractiveAnswerer
from docassist.core.tools import ToolRegistry
from docassist.core.turn import TurnEngine
from docassist.models.embedders import get_embedder
from docassist.runtime import WARM_POLL_SECONDS, IndexWarmer
from docassist.storage import Bm25Retriever
from docassist.storage.dense import DenseRetriever, HybridRetriever, embed_missing
from docassist.storage.limits import PG_CHECK_IDLE_SECONDS
from docassist.storage.migrations import migrations as sqlite_migrations
from docassist.storage.postgres import PostgresStore
from docassist.storage.postgres.schema import MIGRATIONS
from docassist_testkit.pg import PgCluster
from tests.helpers import message, recording, rules_selector


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
                            selector=rules_selector(), answerer=ExtractiveAnswerer(),
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
                        selector=rules_selector(), answerer=ExtractiveAnswerer(),
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


def test_the_store_recovers_by_itself_after_the_server_restarts(
        pg_cluster: PgCluster, pg_demo_url: str, registry: ToolRegistry) -> None:
    store = PostgresStore(pg_demo_url)
    engine = TurnEngine(store=store, catalog=store, retriever=Bm25Retriever(store),
                        selector=rules_selector(), answerer=ExtractiveAnswerer(),
                        registry=registry)
    try:
        first = engine.handle(message("How do I renew the TLS certificate?"))
        assert first and first.status == "answered"
        pg_cluster.stop("fast")  # every pooled connection is cut
        try:
            down = engine.handle(message("How do I renew the TLS certificate?", thread="t2"))
        finally:
            pg_cluster.start()  # the other tests share this server
        assert down and down.status == "storage_unavailable" and down.turn_id == 0
        time.sleep(PG_CHECK_IDLE_SECONDS * 1.5)  # the pooled connections are now "idle"
        back = engine.handle(message("How do I renew the TLS certificate?", thread="t3"))
        assert back and back.status == "answered"  # no turn lost to a dead connection
        assert [row["status"] for row in store.turns()] == ["answered", "answered"]
    finally:
        store.close()


def test_a_database_that_does_not_exist_is_named_in_the_error(pg_cluster: PgCluster) -> None:
    url = pg_cluster.url("no_such_database")
    with pytest.raises(StorageUnavailableError) as caught:
        PostgresStore(url)
    message_text = str(caught.value)
    assert "cannot open database" in message_text and "no_such_database" in message_text
    assert 'database "no_such_database" does not exist' in message_text


def test_every_sqlite_migration_after_m010_has_a_postgresql_twin() -> None:
    """p001 is the SQLite schema as of m010; each later SQLite migration needs its twin in
    storage/postgres/schema.py (else PostgreSQL lacks a column and `db copy` refuses)."""
    sqlite_names = [m.name for m in sqlite_migrations.pending(Database(memory=True))]
    later = sqlite_names[sqlite_names.index("m010_sources") + 1:]
    assert len(MIGRATIONS) == 1 + len(later), (
        f"SQLite migrations after m010: {later}; PostgreSQL: {[n for n, _ in MIGRATIONS]}")


def test_the_index_warmer_stops_when_its_store_closes(pg_demo_url: str) -> None:
    store = PostgresStore(pg_demo_url)
    warmer = IndexWarmer(store, [Bm25Retriever(store)])
    warmer.start()
    time.sleep(0.2)
    store.close()
    warmer.join(WARM_POLL_SECONDS * 3)
    assert not warmer.is_alive()


def test_replicas_indexing_one_document_at_once_leave_its_rows_once(pg_url: str) -> None:
    stores = [PostgresStore(pg_url), PostgresStore(pg_url)]
    versions = [parse_document("zebra.md", "zebra", ZEBRA.replace("spring", f"spring {n}"))
                for n in range(6)]
    errors: list[BaseException] = []

    def index(store: PostgresStore) -> None:
        try:
            for parsed in versions:
                store.replace_document(parsed, "zebra.md")
        except BaseException as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=index, args=(store,)) for store in stores]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    try:
        assert errors == []
        searchable = [row[1] for row in stores[0].fts_rows(0, 1000)]
        current = [chunk.chunk_id for chunk in stores[0].current_chunks()]
        assert sorted(searchable) == current  # each current chunk searchable once
    finally:
        for store in stores:
            store.close()


def _row(text: str, event_id: str) -> list[object]:
    """An inbox row's columns, as the other replica inserts it."""
    chat = message(text, event_id=event_id)
    return ["test", event_id, None, chat.key.conversation_id, chat.model_dump_json(),
            "2026-11-30T00:00:00", None]


def _item(text: str, event_id: str) -> list[object]:
    """An event as the ack path's group commit hands it over (InboxRows.enqueue): the
    message, its dedupe key, its rate check."""
    return [message(text, event_id=event_id), None, None]


def test_two_replicas_storing_the_same_events_in_another_order_both_ack(pg_url: str) -> None:
    """A platform's retries reach two replicas in another order, each in one batch: each
    waits for the other's keys, PostgreSQL cancels one transaction as a deadlock, and our
    batch (cancelled, or let through) ends with both events stored once."""
    import psycopg

    store = PostgresStore(pg_url)
    other = psycopg.connect(pg_url)  # the other replica, mid-transaction
    insert = ("INSERT INTO inbox (platform, event_id, dedupe_key, conversation_id, message, "
              "status, attempts, received_at, refusal) "
              "VALUES (%s, %s, %s, %s, %s, 'pending', 0, %s, %s) ON CONFLICT DO NOTHING")
    results: list[int | None] = []
    errors: list[BaseException] = []

    def ours() -> None:
        try:
            results.extend(store._insert_inbox_rows([_item("one", "E1"), _item("two", "E2")]))
        except BaseException as error:  # reported below
            errors.append(error)

    try:
        other.execute(insert, _row("two", "E2"))
        batch = threading.Thread(target=ours)
        batch.start()
        time.sleep(0.5)  # our batch holds E1 and waits for E2
        try:
            other.execute(insert, _row("one", "E1"))  # waits for our E1: a deadlock
            other.commit()
        except psycopg.errors.DeadlockDetected:
            other.rollback()  # PostgreSQL cancelled the other side
        batch.join(30)
        assert errors == [] and len(results) == 2
        assert sorted(event.event_id for event in store.unfinished()) == ["E1", "E2"]
    finally:
        other.close()
        store.close()
