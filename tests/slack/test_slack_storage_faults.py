"""Slack over real HTTP when the database cannot take writes: what Slack gets back (a 500 for
an event that was not stored, so Slack redelivers it), what the user sees, what is logged."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from docassist.bot.slack.app import SlackAdapter, SlackConfig
from docassist.bot.slack.runner import make_slack_server
from docassist.bot.slack.server import serve_in_thread
from docassist.core import i18n
from docassist.core.extractive import ExtractiveAnswerer
from docassist.core.tools import ToolRegistry
from docassist.core.turn import TurnEngine
from docassist.storage import Bm25Retriever, Store
from docassist_testkit.fakes.loopback import PROCESS_START_SECONDS, free_port, wait_until
from docassist_testkit.fakes.slack_api import FakeSlackApi
from tests.conftest import REPO
from tests.db_locks import SHORT_BUSY_TIMEOUT_MS, LockHolder
from tests.helpers import recording, rules_selector, slack_seen
from tests.slack.rig import SECRET, SlackRig, mention
from tests.slack_process import SECRET as PROCESS_SECRET
from tests.slack_process import signed_event

UNLIMITED_PAGES = 1073741823


@pytest.fixture
def read_only_rig(db_path: Path, registry: ToolRegistry) -> Iterator[SlackRig]:
    """The Slack app over the demo database opened read-only, as SQLite opens a
    write-protected file."""
    read_only = Store(f"file:{db_path}?mode=ro")
    engine = TurnEngine(store=read_only, catalog=read_only, retriever=Bm25Retriever(read_only),
                        selector=rules_selector(), answerer=ExtractiveAnswerer(),
                        registry=registry)
    with FakeSlackApi() as api:
        adapter = SlackAdapter(engine, read_only, SlackConfig(
            bot_token="xoxb-test", signing_secret=SECRET, api_url=api.url))
        server = make_slack_server(adapter, "127.0.0.1", 0)
        serve_in_thread(server)
        yield SlackRig(api, adapter, f"http://127.0.0.1:{server.server_address[1]}/slack/events",
                       read_only)
        server.shutdown()
        server.server_close()
        adapter.worker.close()
    read_only.close()


def error_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [record.getMessage() for record in caplog.records if record.levelno >= logging.ERROR]


def test_an_event_a_read_only_database_cannot_store_gets_a_500_and_one_note(
        read_only_rig: SlackRig, registry: ToolRegistry,
        caplog: pytest.LogCaptureFixture) -> None:
    rig = read_only_rig
    event = mention("Jak odnowić certyfikat TLS?", "100.1")
    with recording(registry, *registry.names()) as recorders:
        first = rig.event(event, "Ev1")
        redelivered = rig.event(event, "Ev1", retry=1)
        rig.command("/docassist-meta", "DOC-TLS")
    # Not stored, so not acked: Slack will redeliver; a 200 here would lose the event.
    assert (first.status_code, redelivered.status_code) == (500, 500)
    # Told once, on the first delivery (posted off the commit thread: maybe after the 500).
    [note] = rig.api.wait_posted("chat.postMessage")
    assert note["thread_ts"] == "100.1"
    assert note["text"] == i18n.text("storage_read_only", "pl")
    assert all(recorder.calls == [] for recorder in recorders.values())
    assert rig.store.inbox_rows() == [] and rig.store.turns() == []
    # No row can be written: the log is the record, one line per delivery and per command.
    lines = error_lines(caplog)
    assert [line.split(" ")[:2] for line in lines] == [["event", "Ev1"], ["event", "Ev1"],
                                                      ["turn", "not"]]
    assert all("read-only" in line for line in lines)
    # What only reads still works: the catalog. A metadata turn cannot be traced: told so.
    rig.command("/docassist-docs", "")
    meta, docs = rig.api.posted("chat.postEphemeral")
    assert meta["text"] == i18n.text("storage_read_only", "en")
    assert "`DOC-TLS`" in docs["text"]


def test_an_event_held_up_past_the_busy_bound_gets_a_500_and_its_redelivery_an_answer(
        rig: SlackRig, store: Store, db_path: Path) -> None:
    store.db.execute(f"PRAGMA busy_timeout = {SHORT_BUSY_TIMEOUT_MS}")
    event = mention("How do I renew the TLS certificate?", "400.1")
    holder = LockHolder(db_path)  # another process keeps the write lock
    try:
        assert rig.event(event, "EvBusy").status_code == 500
    finally:
        holder.close()
    [note] = rig.api.wait_posted("chat.postMessage")
    assert note["thread_ts"] == "400.1" and note["text"] == i18n.text("storage_busy", "en")
    assert rig.store.inbox_rows() == []
    assert rig.event(event, "EvBusy", retry=1).status_code == 200  # Slack's redelivery
    assert [row["event_id"] for row in store.turns()] == ["EvBusy"]
    answer = rig.api.posted()[-1]
    assert answer["thread_ts"] == "400.1" and "DOC-TLS-" in slack_seen(answer)
    assert len(rig.api.posted()) == 2


def test_a_full_disk_loses_no_event_and_leaves_no_one_unanswered(
        rig: SlackRig, store: Store) -> None:
    page_count = store.db.execute("PRAGMA page_count").fetchone()[0]
    store.db.execute(f"PRAGMA max_page_count = {page_count}")  # the disk ends here
    question = "How do I renew the TLS certificate?"
    statuses: dict[str, int] = {}
    answered: set[str] = set()
    for index in range(500):  # answers and pending inbox rows fill the database
        ts, event_id = f"{300 + index}.1", f"Ev{index}"
        statuses[event_id] = rig.event(mention(question, ts), event_id).status_code

        def told(ts: str = ts) -> list[dict[str, Any]]:  # never silent (a refusal's note
            return [post for post in rig.api.posted() if post["thread_ts"] == ts]  # may follow)

        assert wait_until(told)
        [post] = told()
        if "DOC-TLS-" in slack_seen(post):
            answered.add(event_id)
        else:
            assert post["text"] == i18n.text("storage_full", "en")
        if statuses[event_id] == 500:  # refused turns stay in the inbox until it fills too
            break
    acked = {event for event, status in statuses.items() if status == 200}
    refused = set(statuses) - acked
    assert len(refused) == 1, statuses
    # A 200 only for events the inbox holds: an acked event is never lost.
    assert {row["event_id"] for row in store.inbox_rows()} == acked
    assert {row["event_id"] for row in store.inbox_rows()
            if row["status"] == "pending"} == acked - answered
    assert {row["event_id"] for row in store.turns()} == answered
    store.db.execute(f"PRAGMA max_page_count = {UNLIMITED_PAGES}")  # space freed
    [event_id] = refused  # Slack redelivers what got a 500 ...
    rig.event(mention(question, f"{300 + len(statuses) - 1}.1"), event_id, retry=1)
    assert rig.adapter.worker.resume() == len(acked - answered)  # ... a start, the inbox
    assert rig.adapter.worker.wait_idle()
    assert sorted(row["event_id"] for row in store.turns()) == sorted(statuses)  # once each
    answers = [post for post in rig.api.posted() if "DOC-TLS-" in slack_seen(post)]
    assert sorted(post["thread_ts"] for post in answers) == sorted(
        f"{300 + index}.1" for index in range(len(statuses)))


def test_the_bot_process_keeps_serving_on_a_read_only_database(db_path: Path) -> None:
    """`docassist slack --http` on a file it cannot write, trace retention on: it starts (no
    crash at the retention run, so no restart loop), refuses what it cannot store with one
    log line and one note, and goes on serving."""
    port = free_port()
    with FakeSlackApi() as api:
        env = {**os.environ, "DOCASSIST_DB": f"file:{db_path}?mode=ro",
               "SLACK_BOT_TOKEN": "xoxb-process", "SLACK_SIGNING_SECRET": PROCESS_SECRET,
               "DOCASSIST_SLACK_API_URL": api.url, "DOCASSIST_TRACE_RETENTION_DAYS": "30"}
        process = subprocess.Popen(
            [sys.executable, "-m", "docassist", "slack", "--http", "--port", str(port)],
            env=env, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + PROCESS_START_SECONDS
            while not _healthy(port):
                assert process.poll() is None, "the bot exited on a read-only database"
                assert time.monotonic() < deadline, "the bot did not start"
                time.sleep(0.1)
            assert signed_event(port).status_code == 500  # not stored: Slack redelivers
            assert _healthy(port) and process.poll() is None
        finally:
            process.terminate()
            _, stderr = process.communicate(timeout=30)
    [note] = api.posted()
    assert note["thread_ts"] == "555.1" and note["text"] == i18n.text("storage_read_only", "en")
    lines = [line for line in stderr.decode().splitlines() if "read-only" in line]
    assert [line.split(":")[0] for line in lines] == [
        "trace retention skipped until the next run", "event EvCrash not stored, Slack "
        "redelivers it (retry 0)"]


def _healthy(port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False
