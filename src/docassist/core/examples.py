"""Worked examples for a model selector: the labelled bank messages nearest to the current one.

The bank the learned selector is trained on (`samples/bank/decisions_bank.jsonl`) also
teaches a model: its `EXAMPLES_SHOWN` messages nearest to the current one, by the shipped
embedder (USE, cosine), go into the selector prompt with their kind and decision
(`labelled_examples`). `scripts/train_selector.py` writes the examples and their vectors
beside this module; the vectors are used only when made from exactly these examples.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Final

import numpy as np
import numpy.typing as npt

from docassist.core.ports import Embedder, LabelledExample, SelectionRequest

EXAMPLES_PATH: Final = Path(__file__).with_name("selector_examples.jsonl")
WARM_UP_TEXT: Final = "warm-up"
EXAMPLES_SHOWN: Final = 6
"""Examples per prompt: enough to show the neighbouring kinds (a question about an action
beside a request to perform it), few enough to keep a small model's prompt short."""


def examples_digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class BankExamples:
    """The nearest labelled examples to a message; loaded at the first message."""

    def __init__(self, embedder: Callable[[], Embedder], path: Path = EXAMPLES_PATH,
                 shown: int = EXAMPLES_SHOWN) -> None:
        self._path = path
        self._text = path.read_text(encoding="utf-8")
        self.version = examples_digest(self._text)[:12]
        self._embedder_factory = embedder
        self._shown = shown
        self._loaded: tuple[Embedder, list[LabelledExample], npt.NDArray[np.float32]] | None = None
        self._lock = threading.Lock()

    def _load(self) -> tuple[Embedder, list[LabelledExample], npt.NDArray[np.float32]]:
        with self._lock:
            if self._loaded is None:
                embedder = self._embedder_factory()
                examples = [LabelledExample.model_validate_json(line)
                            for line in self._text.splitlines() if line.strip()]
                self._loaded = embedder, examples, self._vectors(embedder, examples)
            return self._loaded

    def _vectors(self, embedder: Embedder, examples: list[LabelledExample]
                 ) -> npt.NDArray[np.float32]:
        """The shipped vectors when they were made from these examples with this embedder;
        else embedded now (a few seconds for the whole bank)."""
        vectors = self._path.with_suffix(f".{embedder.name}.npy")
        digest = vectors.with_suffix(".sha256")
        if vectors.exists() and digest.exists() and digest.read_text().split()[0] == (
                examples_digest(self._text)):
            stored: npt.NDArray[np.float32] = np.load(vectors, allow_pickle=False).astype(
                np.float32)
            if stored.shape[0] == len(examples):
                return stored
        return embedder.embed_passages([example.message for example in examples])

    def load(self) -> None:
        embedder, _, _ = self._load()
        embedder.embed_queries([WARM_UP_TEXT])  # the model loads its weights at first use


    def nearest(self, request: SelectionRequest) -> list[LabelledExample]:
        embedder, examples, vectors = self._load()
        similarity = vectors @ embedder.embed_queries([request.message])[0]
        order = np.argsort(-similarity, kind="stable")[: self._shown]
        return [examples[index] for index in order]
