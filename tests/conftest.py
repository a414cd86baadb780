from __future__ import annotations

import itertools
import os
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from docassist.bot.slack.app import SlackAdapter, SlackConfig
from docassist.bot.slack.runner import make_slack_server
from docassist.bot.slack.server import serve_in_thread
from docassist.bot.teams.app import TeamsAdapter, TeamsConfig
from docassist.bot.teams.server import (
    TeamsCredentials,
    TeamsServer,
    connections_for,
    make_app,
)
from docassist.core.extractive import ExtractiveAnswerer
from docassist.core.ports import Answerer, Retriever, SelectorModel
from docassist.core.sources import Source, SourceKind
from docassist.core.tools import ToolRegistry, default_registry
from docassist.core.turn import EngineOptions, TurnEngine
from docassist.models.embedders import get_embedder
from docassist.sources.sync import sync_all
from docassist.storage import Bm25Retriever, Store, index_paths
from docassist.storage.dense import DenseRetriever, HybridRetriever, embed_missing
from docassist.storage.judge import Judge
from docassist.storage.postgres import PostgresStore
from docassist.storage.postgres.copy import copy_sqlite_to_postgres
from docassist.storage.reader import default_reader
from docassist.storage.rerank import RankedRetriever
from docassist.storage.roles import Storage
from docassist_testkit.fakes.slack_api import FakeSlackApi
from docassist_testkit.fakes.teams_connector import FakeConnector
from docassist_testkit.pg import PgCluster, ServerMissing, start_cluster
from tests.helpers import rules_selector
from tests.slack.rig import READ_TIMEOUT, SECRET, SlackRig
from tests.stale_zebra import ZEBRA_V1
from tests.storage.conformance import STORE_FACTORIES
from tests.storage.conformance import AnyStore as ConformingStore
from tests.teams.rig import ADMIN, TeamsRig

REPO = Path(__file__).resolve().parents[1]
DEMO_DOCS = REPO / "samples" / "docs"
USER_DATA_VARIABLE = "XDG_DATA_HOME"


def pytest_configure(config: pytest.Config) -> None:
    """The default database lives in the user's data folder (config.py): every process the
    suite starts, the CLI's included, gets a throwaway one, never the real user's."""
    os.environ[USER_DATA_VARIABLE] = tempfile.mkdtemp(prefix="docassist-data-")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked `long` run first. Two workers take tests in collection order, and a
    three-minute test taken last would run alone on one worker while the other waits."""
    items.sort(key=lambda item: item.get_closest_marker("long") is None)


def pytest_unconfigure(config: pytest.Config) -> None:
    shutil.rmtree(os.environ.pop(USER_DATA_VARIABLE, ""), ignore_errors=True)

_TEMPLATE: dict[str, Path] = {}


@pytest.fixture(scope="session")
def demo_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo corpus indexed once per session into a template database file."""
    path = tmp_path_factory.mktemp("template") / "demo.db"
    store = Store(path)
    report = index_paths(store, [DEMO_DOCS])
    assert len(report.indexed) >= 5, report.notes
    embed_missing(store, get_embedder("use"))
    store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()
    return path


@pytest.fixture
def db_path(tmp_path: Path, demo_template: Path) -> Path:
    """A fresh copy of the indexed demo database for one test."""
    path = tmp_path / "docassist.db"
    shutil.copy(demo_template, path)
    return path


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[PgCluster]:
    """One throwaway PostgreSQL cluster for the session (started on first use)."""
    pytest.importorskip("psycopg")
    try:
        cluster = start_cluster()
    except ServerMissing as missing:
        if os.environ.get("CI"):  # CI installs it: a skip there would hide the tests
            pytest.fail(str(missing))
        pytest.skip(str(missing))
    try:
        yield cluster
    finally:
        cluster.stop("immediate")
        shutil.rmtree(cluster.folder, ignore_errors=True)


@pytest.fixture
def pg_url(pg_cluster: PgCluster) -> Iterator[str]:
    """A fresh, empty database for one test, dropped after it."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    pg_cluster.admin(f'CREATE DATABASE "{name}"')
    yield pg_cluster.url(name)
    pg_cluster.admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="session")
def pg_demo_template(pg_cluster: PgCluster, demo_template: Path) -> str:
    """A database holding the indexed demo corpus (copied from the SQLite template with
    `db copy`'s code), used as the template of each test's database."""
    name = "demo_template"
    pg_cluster.admin(f'CREATE DATABASE "{name}"')
    source, target = Store(demo_template), PostgresStore(pg_cluster.url(name))
    try:
        copy_sqlite_to_postgres(source, target)
    finally:
        source.close()
        target.close()
    return name


@pytest.fixture
def pg_demo_url(pg_cluster: PgCluster, pg_demo_template: str) -> Iterator[str]:
    """A fresh database for one test holding the indexed demo corpus (a copy of the
    template database: CREATE DATABASE … TEMPLATE, milliseconds)."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    pg_cluster.admin(f'CREATE DATABASE "{name}" TEMPLATE "{pg_demo_template}"')
    yield pg_cluster.url(name)
    pg_cluster.admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


STORES = ["sqlite", "postgresql"]
"""Parametrize a test with `@pytest.mark.parametrize("store", STORES, indirect=True)` (or
use `any_db`) to run it on both stores."""


@pytest.fixture
def store(request: pytest.FixtureRequest, db_path: Path) -> Iterator[Storage]:
    """The indexed demo corpus in a store: SQLite unless the test asks for "postgresql"."""
    opened: Storage = (PostgresStore(request.getfixturevalue("pg_demo_url"))
                        if getattr(request, "param", "sqlite") == "postgresql"
                        else Store(db_path))
    yield opened
    opened.close()


@pytest.fixture(params=STORES)
def any_db(request: pytest.FixtureRequest, db_path: Path) -> str:
    """A DOCASSIST_DB value holding the indexed demo corpus, once per store."""
    if request.param == "postgresql":
        return str(request.getfixturevalue("pg_demo_url"))
    return str(db_path)


@pytest.fixture(scope="module", params=STORES)
def module_db(request: pytest.FixtureRequest,
              tmp_path_factory: pytest.TempPathFactory, demo_template: Path) -> Iterator[str]:
    """A module's own database holding the indexed demo corpus, once per store: for a
    module-scoped fixture that prepares state once (costly, e.g. turns through the CLI),
    which each test then gets a copy of with `clone_db`."""
    if request.param == "postgresql":
        cluster = request.getfixturevalue("pg_cluster")
        name = f"m_{uuid.uuid4().hex[:12]}"
        cluster.admin(f'CREATE DATABASE "{name}" TEMPLATE '
                      f'"{request.getfixturevalue("pg_demo_template")}"')
        yield cluster.url(name)
        cluster.admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        return
    path = tmp_path_factory.mktemp("module-db") / "docassist.db"
    shutil.copy(demo_template, path)
    yield str(path)


@pytest.fixture
def clone_db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[str], str]]:
    """`clone_db(db)`: a copy of a prepared database for this test alone, on db's store: the
    file for SQLite, CREATE DATABASE … TEMPLATE for PostgreSQL (dropped after the test)."""
    dropped: list[tuple[Any, str]] = []

    def clone(db: str) -> str:
        if not db.startswith(("postgresql://", "postgres://")):
            path = tmp_path / f"clone-{len(dropped)}.db"
            shutil.copy(db, path)  # every process that wrote it has ended: no lock to honour
            if Path(f"{db}-wal").exists():  # a writer that did not checkpoint
                shutil.copy(f"{db}-wal", f"{path}-wal")
            dropped.append((None, str(path)))
            return str(path)
        cluster = request.getfixturevalue("pg_cluster")
        name = f"t_{uuid.uuid4().hex[:12]}"
        cluster.admin(f'CREATE DATABASE "{name}" TEMPLATE "{db.rsplit("/", 1)[1]}"')
        dropped.append((cluster, name))
        return str(cluster.url(name))

    yield clone
    for cluster, name in dropped:
        if cluster is not None:
            cluster.admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def hybrid(store: Storage) -> HybridRetriever:
    """The default retriever, as users get it."""
    return HybridRetriever(Bm25Retriever(store), DenseRetriever(store, get_embedder("use")))


@pytest.fixture
def registry() -> ToolRegistry:
    return default_registry()


EngineFactory = Callable[..., TurnEngine]


def ranked_engine_over(make_engine: EngineFactory, store: Store, *folders: Path) -> TurnEngine:
    """The default engine (the learned ranker, the extractive answerer) over `store`, after
    indexing and embedding `folders` into it."""
    if folders:
        index_paths(store, list(folders))
    embedder = get_embedder("use")
    embed_missing(store, embedder)
    return make_engine(
        retriever=RankedRetriever(Bm25Retriever(store), DenseRetriever(store, embedder),
                                  Judge(get_embedder("e5")), default_reader()),
        answerer=ExtractiveAnswerer(embedder, catalog=store, reader=default_reader()))


@pytest.fixture
def ranked_engine(make_engine: EngineFactory, store: Store) -> TurnEngine:
    """The default engine over the demo corpus."""
    return ranked_engine_over(make_engine, store)


@pytest.fixture
def make_engine(store: Storage, registry: ToolRegistry, hybrid: HybridRetriever) -> EngineFactory:
    def build(selector: SelectorModel | None = None, retriever: Retriever | None = None,
              answerer: Answerer | None = None, **options: object) -> TurnEngine:
        return TurnEngine(
            store=store,
            catalog=store,
            retriever=retriever or hybrid,
            selector=selector or rules_selector(),
            answerer=answerer or ExtractiveAnswerer(),
            registry=registry,
            options=EngineOptions(**options),  # type: ignore[arg-type]
        )

    return build


@pytest.fixture
def engine(make_engine: EngineFactory) -> TurnEngine:
    return make_engine()


@pytest.fixture
def zebra(tmp_path: Path, store: Store) -> Path:
    """The handbook page of tests/stale_zebra.py, synced once as a folder source."""
    folder = tmp_path / "handbook"
    folder.mkdir()
    (folder / "zebra.md").write_text(ZEBRA_V1)
    store.add_source(Source(name="handbook", kind=SourceKind.FOLDER,
                            settings={"path": str(folder)}))
    [outcome] = sync_all(store)
    assert outcome.added == ["DOC-ZEBRA"]
    return folder / "zebra.md"


@pytest.fixture
def rig_factory(store: Store) -> Iterator[Any]:
    servers = []
    apis: list[FakeSlackApi] = []

    def build(engine: TurnEngine, **config: Any) -> SlackRig:
        api = FakeSlackApi().__enter__()
        apis.append(api)
        adapter = SlackAdapter(engine, store, SlackConfig(
            bot_token="xoxb-test", signing_secret=SECRET, api_url=api.url,
            admin_users=frozenset({"UADMIN"}), human_channel="C-HUMANS", **config))
        server = make_slack_server(adapter, "127.0.0.1", 0, read_timeout=READ_TIMEOUT)
        serve_in_thread(server)
        servers.append((server, adapter))
        port = server.server_address[1]
        return SlackRig(api, adapter, f"http://127.0.0.1:{port}/slack/events", store, server)

    yield build
    for server, adapter in servers:
        server.shutdown()
        server.server_close()
        adapter.close()
    for api in apis:
        api.__exit__()


@pytest.fixture
def rig(rig_factory: Any, engine: TurnEngine) -> SlackRig:
    built: SlackRig = rig_factory(engine)
    return built


@pytest.fixture
def teams_factory(store: Store) -> Iterator[Any]:
    started: list[tuple[TeamsServer, TeamsAdapter, FakeConnector]] = []

    def build(engine: TurnEngine, credentials: TeamsCredentials | None = None,
              **config: Any) -> TeamsRig:
        connector = FakeConnector().__enter__()
        connections = connections_for(credentials)
        adapter = TeamsAdapter(engine, store, TeamsConfig(
            app_id=credentials.app_id if credentials else "",
            admin_users=frozenset({ADMIN}), **config), connections)
        server = TeamsServer(make_app(adapter, connections, read_timeout=1.0))
        port = server.start()
        started.append((server, adapter, connector))
        return TeamsRig(connector, adapter, f"http://127.0.0.1:{port}/api/messages", store,
                        itertools.count(1))

    yield build
    for server, adapter, connector in started:
        server.stop()
        adapter.worker.close()
        connector.__exit__()


@pytest.fixture
def teams(teams_factory: Any, engine: TurnEngine) -> TeamsRig:
    rig: TeamsRig = teams_factory(engine)
    return rig


@pytest.fixture(params=sorted(STORE_FACTORIES))
def any_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ConformingStore]:
    """Each store implementation in turn, empty (the conformance suites)."""
    store = STORE_FACTORIES[request.param](request, tmp_path)
    yield store
    store.close()
