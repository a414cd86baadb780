"""`DOCASSIST_CANARY_AFTER_MODEL_CHANGE`: a serving process whose models or tools differ from
the latest canary run's runs the canary in the background (the first time: the baseline);
one started with the same configuration does not."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

from docassist.config import Settings
from docassist.runtime import canary_after_model_change, open_runtime
from docassist.serving.background import start_background


def canary_configurations(db: Path) -> list[str | None]:
    with sqlite3.connect(db) as connection:
        return [json.loads(row[0]).get("configuration") for row in connection.execute(
            "SELECT report FROM eval_runs WHERE kind = 'canary' ORDER BY created_at")]


def settings(db: Path, cases: Path, **changes: Any) -> Settings:
    return Settings(db=str(db), canary_sets=str(cases), canary_after_model_change=True,
                    **changes)


def write_cases(tmp_path: Path) -> Path:
    cases = tmp_path / "answers.jsonl"
    cases.write_text(json.dumps({"id": "tls", "question": "How do I renew the TLS certificate?",
                                 "expected_documents": ["DOC-TLS"]}) + "\n")
    return cases


def test_the_canary_runs_again_only_when_the_models_changed(db_path: Path,
                                                            tmp_path: Path) -> None:
    cases = write_cases(tmp_path)
    runtime = open_runtime(settings(db_path, cases))
    try:
        assert canary_after_model_change(runtime) is True  # the baseline
        assert canary_after_model_change(runtime) is False  # nothing changed
    finally:
        runtime.store.close()
    [baseline] = canary_configurations(db_path)
    assert baseline is not None and "embeddings=use" in baseline

    other = open_runtime(settings(db_path, cases, embedder="none", retriever="bm25"))
    try:
        assert canary_after_model_change(other) is True
    finally:
        other.store.close()
    assert len(canary_configurations(db_path)) == 2
    assert "embeddings=none" in str(canary_configurations(db_path)[1])


def test_a_serving_process_starts_the_canary_in_the_background(db_path: Path,
                                                               tmp_path: Path) -> None:
    runtime = open_runtime(settings(db_path, write_cases(tmp_path)))
    try:
        start_background(runtime, {})
        deadline = time.monotonic() + 60
        while not canary_configurations(db_path) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert len(canary_configurations(db_path)) == 1
    finally:
        time.sleep(0.5)  # let the canary thread's last write finish before closing
        runtime.store.close()


def test_a_canary_that_cannot_run_leaves_no_run_and_does_not_raise(db_path: Path,
                                                                   tmp_path: Path) -> None:
    runtime = open_runtime(settings(db_path, tmp_path / "missing.jsonl"))
    try:
        assert canary_after_model_change(runtime) is True  # it tried; the error is logged
    finally:
        runtime.store.close()
    assert canary_configurations(db_path) == []
