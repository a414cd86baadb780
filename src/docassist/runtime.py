"""Wiring: settings → store, retrievers, backend, tools → a TurnEngine."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Final

from docassist.config import Settings
from docassist.core.errors import ConfigurationError, DocAssistError, StoreClosedError
from docassist.core.extractive import ExtractiveAnswerer
from docassist.core.gaps import QuestionRecorder
from docassist.core.ports import NULL_OBSERVER, MembershipLookup, Observer, Retriever
from docassist.core.scoping import ScopeResolver
from docassist.core.sources import SyncOutcome
from docassist.core.tools import default_registry
from docassist.core.turn import EngineOptions, TurnEngine
from docassist.evaluation.canary import canary_sets, configuration_changed, run_canary
from docassist.models import ModelConfig, get_answerer, get_model_embedder, get_selector
from docassist.models.embedders import get_embedder
from docassist.models.registry import RULES
from docassist.serving import heap
from docassist.sources.sync import sync_all
from docassist.storage import Bm25Retriever, IndexReport, index_paths
from docassist.storage.backends import open_store
from docassist.storage.dense import DenseRetriever, HybridRetriever, embed_missing
from docassist.storage.judge import Judge
from docassist.storage.reader import default_reader
from docassist.storage.rerank import RankedRetriever
from docassist.storage.roles import FirstStart, IndexVersion, MetaValues, SearchRows, Storage

WARM_POLL_SECONDS: Final = 1.0
"""How often a serving process looks for a changed index, to rebuild its search indexes
before the next question needs them."""

Progress = Callable[[int], None]
log = logging.getLogger(__name__)


@dataclass
class Runtime:
    settings: Settings
    store: Storage
    engine: TurnEngine
    retrievers: dict[str, Retriever]
    warmer: IndexWarmer | None = field(default=None, repr=False)
    optional: dict[str, Callable[[], str | None]] = field(default_factory=dict, repr=False)
    """Optional dependencies by name (`directory:teams`) → what is wrong with them now, or
    None: `/readyz` shows them as degraded without taking the process out of service."""

    @property
    def default_retriever(self) -> str:
        return self.engine.retriever.name


def build_retrievers(
    store: SearchRows, settings: Settings, config: ModelConfig | None = None
) -> tuple[dict[str, Retriever], str]:
    """Every available retriever by name, and the name of the configured default. The
    operator's answer threshold replaces the default's calibrated one; the others, which
    `eval retrieval` compares, keep theirs."""
    bm25 = Bm25Retriever(store)
    retrievers: dict[str, Retriever] = {"bm25": bm25}
    default = settings.retriever
    if settings.embedder == "none":
        if settings.retriever != "bm25":
            raise ConfigurationError(
                f"retriever {settings.retriever!r} needs an embedder; set DOCASSIST_RETRIEVER=bm25 "
                "or choose DOCASSIST_EMBEDDER")
    else:
        dense = DenseRetriever(store, get_model_embedder(settings.embedder,
                                                         config or settings.model_config_for()))
        retrievers["dense"] = dense
        retrievers["hybrid"] = HybridRetriever(bm25, dense)
        retrievers["ranked"] = RankedRetriever(bm25, dense, Judge(get_embedder("e5")),
                                                 default_reader())
    if settings.answer_threshold is not None:
        retrievers[default].default_threshold = settings.answer_threshold
    return retrievers, default


def open_runtime(settings: Settings, record_path: Path | None = None,
                 membership: MembershipLookup | None = None,
                 observer: Observer = NULL_OBSERVER) -> Runtime:
    """Everything one process needs; with `record_path`, model calls are recorded there.
    `membership` resolves `group:` scope mappings (none without it); `observer` (metrics)
    hears of every turn, model call, search and sync."""
    config = replace(settings.model_config_for(record_path), observer=observer)
    selector = get_selector(settings.model, config, settings.embedder)
    answerer = get_answerer(settings.answer_model or settings.model, config, settings.embedder)
    store = open_store(settings.db, save_raw=settings.save_raw)
    if isinstance(answerer, ExtractiveAnswerer):  # names linked pages, reads the page's sections
        answerer.catalog = store
        answerer.reader = default_reader()
    retrievers, default = build_retrievers(store, settings, config)
    shadow = (get_selector(settings.shadow_model, config, settings.embedder)
              if settings.shadow_model else None)
    engine = TurnEngine(
        store=store,
        catalog=store,
        retriever=retrievers[default],
        selector=selector,
        answerer=answerer,
        shadow=shadow,
        scopes=ScopeResolver(store, membership),
        observer=observer,
        questions=QuestionRecorder(store, dense.embedder if isinstance(
            dense := retrievers.get("dense"), DenseRetriever) else None,
            save_raw=settings.save_raw),
        # A model selector may add the question in the documents' languages (docs/retrieval.md).
        registry=default_registry(translations=settings.model != RULES),
        options=EngineOptions(
            default_language=settings.language,
            human_channel=settings.human_channel,
            save_raw=settings.save_raw,
        ),
        model_backlog=config.gate,
    )
    return Runtime(settings=settings, store=store, engine=engine, retrievers=retrievers)


def use_membership(runtime: Runtime, membership: MembershipLookup) -> None:
    """Resolve `group:` scope mappings with this lookup (a serving process knows its
    platform's directory once its adapter exists)."""
    runtime.engine.scopes = ScopeResolver(runtime.store, membership)


WARM_UP_QUERY = "warm-up"


def warm_up(runtime: Runtime) -> None:
    """Load what the first question would load (the embedder's model, the dense matrix,
    the catalog) before a server accepts events, and keep it warm: from then on a thread
    rebuilds the search indexes as soon as another process changes the index. Measured:
    loading USE lazily inside the first turn held the GIL for ~2 s and pushed the Slack ack
    p99 of a 500-event burst to ~1.2 s; rebuilding at 100k chunks takes seconds. What was
    loaded is then kept out of the garbage collector's way (heap.py)."""
    runtime.engine.retriever.search(WARM_UP_QUERY, 1)
    examples = runtime.engine.selector.examples
    if examples is not None:  # a model selector's worked examples and their embedder
        examples.load()
    keep_warm(runtime)
    heap.settle()


def keep_warm(runtime: Runtime) -> None:
    """Build the search indexes now on a thread, and again whenever the index changes (the
    terminal chat starts it before the first prompt, so the first question rarely waits)."""
    if runtime.warmer is None:
        default = runtime.engine.retriever
        in_use: list[Retriever] = ([default.bm25, default.dense]
                                   if isinstance(default, HybridRetriever) else [default])
        runtime.warmer = IndexWarmer(runtime.store, in_use)
        runtime.warmer.start()


def warm_indexes(retrievers: list[Retriever]) -> None:
    """Rebuild every in-memory index that is older than the store's index."""
    for retriever in retrievers:
        if isinstance(retriever, DenseRetriever):
            retriever.warm()
        elif isinstance(retriever, Bm25Retriever):
            retriever.index()


class IndexWarmer(threading.Thread):
    """Looks at the index version every WARM_POLL_SECONDS and rebuilds the search indexes
    when it moved, so the next question finds them built. A question that comes during a
    rebuild waits for it (searches always see the current index)."""

    def __init__(self, store: IndexVersion, retrievers: list[Retriever]) -> None:
        super().__init__(name="index-warmer", daemon=True)
        self.store = store
        self.retrievers = retrievers
        self.stopped = threading.Event()

    def run(self) -> None:
        seen = -1
        while True:
            try:
                version = self.store.index_version()
                if version != seen:
                    warm_indexes(self.retrievers)
                    if seen != -1:  # rebuilt: the old index is garbage now
                        heap.settle_again()
                    seen = version
            except StoreClosedError:  # the process is ending
                return
            except DocAssistError as error:  # a busy or unreachable store: the next look retries
                log.debug("index warm-up skipped: %s", error)
            if self.stopped.wait(WARM_POLL_SECONDS):
                return


def index_and_embed(
    runtime: Runtime,
    paths: list[Path],
    on_start: Progress | None = None,
    on_file: Callable[[Path], None] | None = None,
    on_embed: Progress | None = None,
    *,
    collection: str | None = None,
) -> IndexReport:
    """Index files (into `collection`; None keeps each document's), then embed new chunks
    so the first question does not wait for it.

    Resumable: a meta mark (INDEX_RUN_KEY) is set while it runs; documents are stored one by
    one and vectors batch by batch, each committed, so a run killed midway is continued by
    the next one (unchanged files are skipped, stored vectors kept) and nothing committed
    is embedded twice."""
    store = runtime.store
    store.set_meta_value(INDEX_RUN_KEY, json.dumps([str(path) for path in paths]))
    report = index_paths(store, paths, on_file=on_file, on_start=on_start,
                         retention_days=runtime.settings.superseded_retention_days,
                         collection=collection)
    dense = runtime.retrievers.get("dense")
    if isinstance(dense, DenseRetriever):
        began = time.perf_counter()
        report.embedded = embed_missing(store, dense.embedder, on_start, on_embed)
        report.embed_seconds = time.perf_counter() - began
    store.set_meta_value(INDEX_RUN_KEY, None)
    return report


INDEX_RUN_KEY = "index_run"
"""Meta key holding the paths of an `index` run while it runs (the same mark as the first
start's, FIRST_INDEX_KEY): a run killed midway leaves it set."""


def interrupted_index(store: MetaValues) -> list[str] | None:
    """The paths of an index run that did not finish, if one did not."""
    value = store.meta_value(INDEX_RUN_KEY)
    return None if value is None else [str(path) for path in json.loads(value)]


def embed_new_chunks(runtime: Runtime) -> None:
    """Embed chunks a sync added, so the first question after it does not wait for it."""
    dense = runtime.retrievers.get("dense")
    if isinstance(dense, DenseRetriever):
        embed_missing(runtime.store, dense.embedder)


def sync_and_embed(runtime: Runtime, name: str | None = None,
                   on_item: Callable[[str], None] | None = None, *,
                   scheduled: bool = False) -> list[SyncOutcome]:
    """Sync the named source (or all), then embed what changed. `scheduled`: only sources
    no replica synced within DOCASSIST_SYNC_EVERY; those skipped are neither returned nor
    counted in the metrics, and the canary follows only a sync this process ran."""
    settings = runtime.settings
    outcomes = sync_all(runtime.store, name, every_seconds=settings.sync_every or None,
                        on_item=on_item, after=lambda _store: embed_new_chunks(runtime),
                        stale_days=settings.stale_note_days if settings.stale_notes else None,
                        lease_seconds=settings.sync_lease, due_only=scheduled)
    for outcome in outcomes:
        runtime.engine.observer.sync_finished(outcome)
    if settings.canary_after_sync and any(o.added or o.updated or o.deleted for o in outcomes):
        canary_after_sync(runtime)
    return outcomes


def canary_after_sync(runtime: Runtime) -> None:
    """The canary on the synced index (DOCASSIST_CANARY_AFTER_SYNC)."""
    _logged_canary(runtime, "after sync")


def canary_configuration(runtime: Runtime) -> str:
    """What a canary run is compared by besides the index: the models and the tools."""
    settings = runtime.settings
    return (f"selection={settings.model} answers={settings.answer_model or settings.model} "
            f"embeddings={settings.embedder} tools={runtime.engine.tool_catalog_version}")


def canary_after_model_change(runtime: Runtime) -> bool:
    """DOCASSIST_CANARY_AFTER_MODEL_CHANGE, at the start of a serving process: the canary
    runs when the models or tools differ from the latest canary run's (the first run is the
    baseline). Whether it was due (a canary that cannot run is logged, not raised)."""
    if not configuration_changed(runtime.store, canary_configuration(runtime)):
        return False
    _logged_canary(runtime, "after a model change")
    return True


def _logged_canary(runtime: Runtime, reason: str) -> None:
    """Regressions are logged (and show in the report); a canary that cannot run must not
    fail the sync or the start that asked for it."""
    try:
        run_id, report = run_canary(runtime.store, runtime.engine,
                                    canary_sets(runtime.settings.canary_sets), Path.cwd(),
                                    runtime.settings.language, canary_configuration(runtime))
    except (ValueError, DocAssistError) as error:
        log.warning("canary %s not run: %s", reason, error)
        return
    for case in report.regressions:
        log.warning("canary regression %s: %s %s (run %s)", reason, case.set, case.id, run_id)
    log.info("canary %s: %d/%d pass, %d regression(s) (run %s)", reason,
             sum(case.passed for case in report.cases), report.total,
             len(report.regressions), run_id)


FIRST_INDEX_KEY = "first_index"
"""Meta key set while the first-start indexing runs and cleared when it (embeddings
included) has finished: a process killed midway leaves it set, and the next start
finishes the job instead of taking the partial catalog for a complete one."""


def needs_first_index(store: FirstStart) -> bool:
    """The first-start indexing did not finish, or nothing is configured: the catalog is
    empty and no source is set up (a configured source fills the catalog by `sync`)."""
    if store.meta_value(FIRST_INDEX_KEY) is not None:
        return True
    return not store.documents() and not store.sources()


def ensure_demo_index(
    runtime: Runtime,
    on_start: Progress | None = None,
    on_file: Callable[[Path], None] | None = None,
    on_embed: Progress | None = None,
) -> IndexReport | None:
    """Index the configured corpus on the first start, or finish a first start that was
    interrupted (indexing is incremental: what was stored is skipped as unchanged)."""
    store = runtime.store
    if not needs_first_index(store):
        return None
    docs = runtime.settings.docs
    if not docs.is_dir():
        raise ConfigurationError(f"the catalog is empty and the corpus {docs} does not exist; "
                                 "run `docassist index PATH` or set DOCASSIST_DOCS")
    store.set_meta_value(FIRST_INDEX_KEY, str(docs))
    report = index_and_embed(runtime, [docs], on_start, on_file, on_embed)
    store.set_meta_value(FIRST_INDEX_KEY, None)
    return report
