"""The shipped ranker is what scripts/train_ranker.py trains from the committed questions and
collections (issue 40: "a script that reproduces it and the weights in the repository")."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from docassist.storage.rerank import WEIGHTS_FILE

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "train_ranker.py"
QUESTIONS = REPO / "samples" / "train" / "ranker_questions.jsonl"
TRAINING_SECONDS = 900
"""Unpacking and indexing five collections (about 4,300 chunks) and fitting, on 2 cores."""


def test_the_shipped_ranker_is_what_the_script_trains(tmp_path: Path) -> None:
    out = tmp_path / "weights.json"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "train", "--work", str(tmp_path / "work"),
         "--out", str(out)], cwd=REPO, capture_output=True, text=True,
        timeout=TRAINING_SECONDS, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    trained = json.loads(out.read_text(encoding="utf-8"))
    shipped = json.loads(WEIGHTS_FILE.read_text(encoding="utf-8"))
    questions = hashlib.sha256(QUESTIONS.read_bytes()).hexdigest()
    assert trained["trained"]["questions_sha256"] == questions
    assert shipped["trained"]["questions_sha256"] == questions
    assert trained["trained"]["collections"] == shipped["trained"]["collections"]
    for model in ("ranking", "answering"):
        for part in ("means", "scales", "weights"):
            # Embeddings may differ in their last bits between CPUs; the fit does not.
            np.testing.assert_allclose(trained[model][part], shipped[model][part],
                                       rtol=1e-4, atol=1e-6)
        assert abs(trained[model]["bias"] - shipped[model]["bias"]) < 1e-4
