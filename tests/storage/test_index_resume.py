"""`docassist index` killed midway (a real process, SIGKILL) is continued by the next run:
stored documents are skipped, committed vectors are not embedded again, and the catalog
ends complete. The embedder is a model server on loopback (an external system's fake),
which records every text it was asked to embed."""

from __future__ import annotations

import hashlib
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

from docassist_testkit.fakes.loopback import wait_until
from docassist_testkit.fakes.model_server import ModelServer, Reply
from tests.cli_run import one_json, run
from tests.conftest import REPO

FILES = 40
SECTIONS = 10  # 400 chunks: 13 batches of 32


def corpus(folder: Path) -> None:
    folder.mkdir()
    for number in range(FILES):
        body = "".join(f"## Step {step}\nCheck valve {number}-{step}, then log the reading.\n"
                       for step in range(SECTIONS))
        (folder / f"proc-{number:03d}.md").write_text(f"# Procedure {number}\n{body}")


def vector(text: str) -> list[float]:
    digest = hashlib.sha256(text.encode()).digest()
    return [byte / 255 - 0.5 for byte in digest[:8]]


def embedder(delay: float) -> Any:
    def answer(body: Any) -> Reply:
        return Reply(json={"model": "m", "embeddings": [vector(t) for t in body["input"]]},
                     delay=delay)
    return answer


def stored(db: Path, sql: str) -> list[tuple[Any, ...]]:
    try:
        connection = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=0.2)
        try:
            return connection.execute(sql).fetchall()
        finally:
            connection.close()
    except sqlite3.Error:
        return []


def embedded_texts(db: Path) -> set[str]:
    return {text for (text,) in stored(db, "SELECT c.text FROM chunks c JOIN embeddings e "
                                           "ON e.chunk_id = c.chunk_id")}


def test_a_killed_index_run_continues_where_it_stopped(tmp_path: Path) -> None:
    docs, db = tmp_path / "docs", tmp_path / "d.db"
    corpus(docs)
    with ModelServer() as server:
        server.respond("/api/embed", embedder(delay=0.25))
        settings = {"DOCASSIST_EMBEDDER": "ollama:embed", "DOCASSIST_OLLAMA_URL": server.url}
        first = subprocess.Popen(
            [sys.executable, "-m", "docassist", "index", str(docs), "--json"],
            env={**os.environ, "DOCASSIST_DB": str(db), **settings}, cwd=REPO,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            assert wait_until(lambda: len(embedded_texts(db)) >= 64, seconds=60)
        finally:
            first.send_signal(signal.SIGKILL)
            first.wait(10)
        committed = embedded_texts(db)
        total = FILES * SECTIONS
        assert stored(db, "SELECT count(*) FROM chunks") == [(total,)]
        assert 64 <= len(committed) < total
        asked_before = len(server.bodies("/api/embed"))

        server.respond("/api/embed", embedder(delay=0.0))
        second = run("index", str(docs), "--json", db=db, **settings)
        assert second.returncode == 0, second.stderr
        report = one_json(second.stdout)
        assert report["resumed"] is True and "interrupted" in second.stderr
        assert report["indexed"] == [] and len(report["unchanged"]) == FILES
        assert report["embedded_chunks"] == total - len(committed)
        asked_again = [text for body in server.bodies("/api/embed")[asked_before:]
                       for text in body["input"]]
    assert not committed & set(asked_again)  # nothing committed was embedded twice
    assert len(asked_again) == len(set(asked_again)) == total - len(committed)
    assert len(embedded_texts(db)) == total  # the catalog is complete, every chunk embedded
    assert stored(db, "SELECT count(*) FROM documents") == [(FILES,)]
    assert stored(db, "SELECT value FROM meta WHERE key = 'index_run'") == []

