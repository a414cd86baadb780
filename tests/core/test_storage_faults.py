"""Turns when the database cannot take writes: busy (another connection holds the lock),
read-only, full. The user is told in their language, nothing is half-saved, no tool acts
for a turn that cannot be recorded, one log line per message, and the engine goes on."""

from __future__ import annotations

import logging
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from docassist.core import i18n
from docassist.core.errors import StorageFullError
from docassist.core.extractive import ExtractiveAnswerer
from docassist.core.messages import ChatMessage, Command
from docassist.core.results import TurnResult
from docassist.core.tools import ToolContext, ToolRegistry
from docassist.core.turn import TurnEngine
from docassist.serving.delivery import Outlet
from docassist.serving.inbox import InboxWorker
from docassist.storage import Bm25Retriever, Store
from tests.db_locks import SHORT_BUSY_TIMEOUT_MS, LockHolder
from tests.helpers import key, message, recording, rules_selector, swapped

HOLD_SECONDS = 0.3
"""Well inside the default bound (3 attempts × 2 s busy timeout)."""


def not_saved_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [record.getMessage() for record in caplog.records
            if record.levelno >= logging.ERROR and "not saved" in record.getMessage()]


@pytest.fixture
def holder(db_path: Path, store: Store) -> Iterator[LockHolder]:
    held = LockHolder(db_path)
    yield held
    held.close()


@pytest.fixture
def read_only_engine(db_path: Path, registry: ToolRegistry) -> Iterator[TurnEngine]:
    """An engine over the demo database opened read-only (as SQLite opens a write-protected
    file)."""
    read_only = Store(f"file:{db_path}?mode=ro")
    yield TurnEngine(store=read_only, catalog=read_only, retriever=Bm25Retriever(read_only),
                     selector=rules_selector(), answerer=ExtractiveAnswerer(), registry=registry)
    read_only.close()


def test_a_lock_released_after_a_short_while_is_waited_for(
        engine: TurnEngine, store: Store, holder: LockHolder) -> None:
    results: list[TurnResult | None] = []
    turn = threading.Thread(target=lambda: results.append(
        engine.handle(message("How do I renew the TLS certificate?"))))
    turn.start()
    time.sleep(HOLD_SECONDS)
    assert turn.is_alive()  # it cannot finish while the lock is held: it is waiting
    holder.release()
    turn.join(30)
    [result] = results
    assert result and result.status == "answered"
    assert [row["status"] for row in store.turns()] == ["answered"]


def test_a_lock_held_past_the_bound_gets_a_clear_reply_and_nothing_runs(
        engine: TurnEngine, store: Store, registry: ToolRegistry, holder: LockHolder,
        caplog: pytest.LogCaptureFixture) -> None:
    store.db.execute(f"PRAGMA busy_timeout = {SHORT_BUSY_TIMEOUT_MS}")
    with recording(registry, *registry.names()) as recorders:
        english = engine.handle(message("How do I renew the TLS certificate?"))
        polish = engine.handle(message("Jak odnowić certyfikat TLS?", thread="t2"))
    assert english and english.status == "storage_unavailable" and english.turn_id == 0
    assert english.answer == i18n.text("storage_busy", "en")
    assert polish and polish.answer == i18n.text("storage_busy", "pl")
    assert all(recorder.calls == [] for recorder in recorders.values())
    assert len(not_saved_lines(caplog)) == 2  # one line per message, no retry loop
    holder.release()
    assert store.turns() == [] and store.tool_calls() == []
    assert store.load(key()).version == 0  # nothing half-saved
    again = engine.handle(message("How do I renew the TLS certificate?"))
    assert again and again.status == "answered"  # the next message is answered as usual


def test_a_read_only_database_gets_a_clear_reply_and_nothing_runs(
        read_only_engine: TurnEngine, registry: ToolRegistry,
        caplog: pytest.LogCaptureFixture) -> None:
    store = read_only_engine.store
    assert isinstance(store, Store)
    with recording(registry, *registry.names()) as recorders:
        results = [
            read_only_engine.handle(message("How do I renew the TLS certificate?")),
            read_only_engine.handle(message("Jak odnowić certyfikat TLS?")),
            read_only_engine.handle(message("/meta DOC-TLS", command=Command.METADATA,
                                            argument="DOC-TLS")),
            read_only_engine.handle(message("/clear", command=Command.CLEAR)),
        ]
    assert [r.status if r else None for r in results] == ["storage_unavailable"] * 4
    assert [r.answer if r else None for r in results] == [
        i18n.text("storage_read_only", language) for language in ("en", "pl", "en", "en")]
    assert all(recorder.calls == [] for recorder in recorders.values())
    # No trace row can exist (the file takes no writes): the log line is the record.
    assert store.turns() == [] and store.tool_calls() == []
    lines = not_saved_lines(caplog)
    assert len(lines) == 4 and all("read-only" in line for line in lines)
    assert store.document("DOC-TLS") is not None  # reading the catalog still works


def test_a_full_disk_gets_a_clear_reply_and_leaves_no_half_turn(
        engine: TurnEngine, store: Store, registry: ToolRegistry,
        caplog: pytest.LogCaptureFixture) -> None:
    page_count = store.db.execute("PRAGMA page_count").fetchone()[0]
    store.db.execute(f"PRAGMA max_page_count = {page_count + 40}")  # the disk ends soon
    refused: TurnResult | None = None
    runs: list[object] = []
    real = registry.get("answer_from_documents")
    assert real is not None
    def recorded(arguments: Any, context: ToolContext) -> Any:
        runs.append(arguments)  # records, then works as the real tool
        return real.function(arguments, context)

    with swapped(registry, "answer_from_documents", recorded):
        for index in range(200):  # turns add trace rows until the room runs out
            result = engine.handle(message("Jak odnowić certyfikat TLS?",
                                           thread=f"full-{index}"))
            assert result is not None
            if result.status == "storage_unavailable":
                refused = result
                break
            assert result.status == "answered"
    assert refused is not None, "the database never filled up"
    # Refused before it acted: the room is checked with the write probe, so the tool that
    # answered the earlier turns did not run for this one.
    assert len(runs) == index
    assert refused.answer == i18n.text("storage_full", "pl")
    assert refused.sources == [] and refused.tool.status is None
    assert len(store.turns()) == index and len(store.tool_calls()) == index
    assert store.load(key(f"full-{index}")).version == 0
    [line] = not_saved_lines(caplog)
    assert "full" in line
    store.db.execute("PRAGMA max_page_count = 1073741823")  # space freed
    again = engine.handle(message("Jak odnowić certyfikat TLS?", thread=f"full-{index}"))
    assert again and again.status == "answered" and again.turn_id == 1


PAGE_BUDGETS = range(6)
"""Pages left on the "disk" when the events start: where it runs out differs with each."""


@pytest.mark.parametrize("spare_pages", PAGE_BUDGETS)
def test_a_filling_disk_loses_no_answer_of_the_inbox(
        spare_pages: int, demo_template: Path, tmp_path: Path, registry: ToolRegistry) -> None:
    path = tmp_path / "filling.db"
    shutil.copy(demo_template, path)
    store = Store(path)
    engine = TurnEngine(store=store, catalog=store, retriever=Bm25Retriever(store),
                        selector=rules_selector(), answerer=ExtractiveAnswerer(),
                        registry=registry)
    page_count = store.db.execute("PRAGMA page_count").fetchone()[0]
    store.db.execute(f"PRAGMA max_page_count = {page_count + spare_pages}")
    delivered: dict[str, list[str]] = {}

    def deliver(sent: ChatMessage, result: TurnResult) -> None:
        delivered.setdefault(str(sent.event_id), []).append(result.status)

    worker = InboxWorker(engine, store, Outlet(deliver))
    submitted: list[str] = []
    try:
        for index in range(100):  # until the inbox itself cannot take an event
            try:
                worker.submit(message("How do I renew the TLS certificate?",
                                      thread=f"fill-{index}", event_id=f"E{index}"))
            except StorageFullError:
                break  # not stored: Slack gets a 500 and redelivers it later
            submitted.append(f"E{index}")
            assert worker.wait_idle()
        # Every committed turn was delivered, even when marking it in the inbox failed.
        for row in store.turns():
            assert delivered[row["event_id"]] == ["answered"]
        assert all(delivered[event] in (["answered"], ["storage_unavailable"])
                   for event in submitted)
        store.db.execute("PRAGMA max_page_count = 1073741823")  # space freed; a restart:
        worker.resume()
        assert worker.wait_idle()
    finally:
        worker.close()
    assert sorted(row["event_id"] for row in store.turns()) == sorted(submitted)
    assert all(delivered[event].count("answered") == 1 for event in submitted)
    store.close()
