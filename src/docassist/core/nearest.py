"""Intent by the nearest labelled examples in the embedding space the retriever already uses.

An alternative to phrase lists for what a message asks for (a procedure, the sources of the
last answer, a document's metadata, an action, a prompt injection, something no tool does).
The bank (`intent_examples.jsonl`) holds the messages of `samples/decisions_dev.jsonl` and of
the `tune` split of `samples/public/decisions_heldout.jsonl`, never the `test` split
(`bench/intent_bank.py` rebuilds it). It only overrides a rules decision to search when the
nearest examples agree clearly (similarity and margin); when unsure, the message is searched,
since a question the documents do not cover ends in `no_answer` anyway.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

import numpy as np

from docassist.core.ports import Embedder

Intent = Literal["procedure", "sources", "metadata", "action", "injection", "no_tool"]
INTENTS: Final[tuple[Intent, ...]] = ("procedure", "sources", "metadata", "action", "injection",
                                      "no_tool")
BANK_PATH: Final = Path(__file__).with_name("intent_examples.jsonl")
NEIGHBOURS: Final = 3
MIN_SIMILARITY: Final = 0.55
"""Mean cosine of the winning neighbours below which the guess is not trusted."""
MIN_MARGIN: Final = 0.15
"""How far (in mean cosine) the winner must lead the runner-up."""


@dataclass(frozen=True)
class IntentGuess:
    intent: Intent
    similarity: float
    margin: float

    @property
    def confident(self) -> bool:
        return self.similarity >= MIN_SIMILARITY and self.margin >= MIN_MARGIN


def bank_digest(texts: list[str]) -> str:
    return hashlib.sha256("\n".join(texts).encode()).hexdigest()


def load_bank(path: Path = BANK_PATH) -> list[tuple[str, Intent]]:
    examples: list[tuple[str, Intent]] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            if row["intent"] in INTENTS:
                examples.append((row["text"], row["intent"]))
    return examples


class NearestExamples:
    """k nearest labelled messages, votes weighted by cosine similarity."""

    def __init__(self, embedder: Embedder, examples: list[tuple[str, Intent]] | None = None
                 ) -> None:
        self._embedder = embedder
        self._examples = examples if examples is not None else load_bank()
        self._vectors: np.ndarray | None = None
        self._lock = threading.Lock()

    def _bank(self) -> np.ndarray:
        with self._lock:  # embedded once, at the first message that needs it
            if self._vectors is None:
                self._vectors = self._cached()
            if self._vectors is None:
                self._vectors = self._embedder.embed_passages([t for t, _ in self._examples])
            return self._vectors

    def _cached(self) -> np.ndarray | None:
        """Vectors shipped beside the bank for this embedder (embedding it takes ~2 s);
        used only when they were made from exactly these texts."""
        name = self._embedder.name
        path = BANK_PATH.with_name(f"intent_examples.{name}.npy")
        if not path.exists():
            return None
        stored = np.load(path, allow_pickle=False)
        digest = bank_digest([text for text, _ in self._examples])
        if path.with_suffix(".sha256").read_text().strip() != digest:
            return None
        return stored.astype(np.float32) if len(stored) == len(self._examples) else None

    def guess(self, text: str) -> IntentGuess:
        similarities = self._bank() @ self._embedder.embed_queries([text])[0]
        nearest = np.argsort(-similarities)[:NEIGHBOURS]
        votes: dict[Intent, float] = defaultdict(float)
        for index in nearest:
            votes[self._examples[index][1]] += float(similarities[index])
        ranked = sorted(votes.items(), key=lambda item: -item[1])
        runner_up = ranked[1][1] if len(ranked) > 1 else 0.0
        intent, weight = ranked[0]
        return IntentGuess(intent, round(weight / NEIGHBOURS, 4),
                           round((weight - runner_up) / NEIGHBOURS, 4))
