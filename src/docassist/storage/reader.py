"""A reader for the best pages: a cross-encoder reads the question and a passage together and
scores whether the passage answers it.

The judge (judge.py) compares two vectors made apart, so it tells "on the topic" well and
"states the fact" badly; a cross-encoder attends from each question word to the passage's
words, which is what "the page is about leave but never says how many days" needs.

The model is ms-marco-MiniLM-L-12-v2 (trained on search queries and the passages that answer
them; Apache-2.0), fine-tuned by scripts/train_reader.py on near misses: passages of two
training collections, each with a question it answers and one on its topic that it does not
(docs/reader-training.md). It ships in the package (MODEL_FOLDER: INT8 ONNX and its
tokenizer); nothing is downloaded. onnxruntime runs it.

The model reads English only; a Polish question is read glossed word by word into English
(glossary.py), as it was when it was fine-tuned, and so is a Polish passage: a Polish
handbook's pages are read, not skipped.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any, Final

import numpy as np

from docassist.core.glossary import default_glossary
from docassist.core.i18n.detection import feature_language, has_polish_letters
from docassist.core.ports import SearchHit
from docassist.storage.judge import judge_text

MODEL_FOLDER: Final = Path(__file__).with_name("reader_model")
READ_TOKENS: Final = 256
"""Of a question and passage together, the tokens read: at 256 a pair takes ~10 ms on two
cores, and a chunk's answer is in its first 256 tokens far more often than not."""
READ_PASSAGES: Final = 4
"""Of each judged page, the passages read: its leading candidate and the next best ones.
Four read better than two on the spent sets (docs/evaluation-method.md)."""
READER_CACHE_ENTRIES: Final = 20_000
"""(question, passage) scores kept: a question asked again costs nothing."""
READER_THREADS: Final = 2


class ReaderUnavailable(RuntimeError):
    """The reader's model files are not installed."""


class Reader:
    """Scores of a question against passages: higher means the passage answers it."""

    def __init__(self, folder: Path | None = None, size: int = READER_CACHE_ENTRIES) -> None:
        self.folder = folder
        self.size = size
        self.kept: OrderedDict[tuple[str, str], float] = OrderedDict()
        self._session: Any = None
        self._tokenizer: Any = None
        self._lock = threading.Lock()

    def scores(self, question: str, passages: Sequence[str]) -> list[float]:
        """One score per passage (a logit: above 0, the model reads it as answering)."""
        asked = as_read(question)
        with self._lock:  # serving threads share one reader: one run at a time, on two cores
            found = {p: self.kept[(asked, p)] for p in passages if (asked, p) in self.kept}
            todo = [p for p in dict.fromkeys(passages) if p not in found]
            if todo:
                found |= dict(zip(todo, self._run(asked, todo), strict=True))
                for passage in todo:
                    self.kept[(asked, passage)] = found[passage]
                while len(self.kept) > self.size:
                    self.kept.popitem(last=False)
        return [found[passage] for passage in passages]

    def in_english(self, text: str) -> str:
        return as_read_passage(text) or text

    def read(self, question: str, hits: Sequence[SearchHit]) -> list[float | None]:
        """PassageReader: each hit's passage as the ranker reads it (title and text, a Polish
        one glossed, so what ranking read is not read again); None for one it cannot read."""
        texts = [as_read_passage(judge_text(hit.document.title, hit.chunk.text))
                 for hit in hits]
        readable = [text for text in texts if text is not None]
        found = dict(zip(readable, self.scores(question, readable), strict=True))
        return [None if text is None else found[text] for text in texts]

    def _run(self, question: str, passages: list[str]) -> list[float]:
        """One pair a run: the model quantizes its activations per run, so a pair scored in a
        batch would score a little differently beside other passages."""
        session, tokenizer = self._load()
        wanted = {i.name for i in session.get_inputs()}
        scores = []
        for passage in passages:
            encoded = tokenizer.encode(question, passage)
            feeds = {"input_ids": encoded.ids, "attention_mask": encoded.attention_mask,
                     "token_type_ids": encoded.type_ids}
            logits = session.run(None, {name: np.asarray([row], dtype=np.int64)
                                        for name, row in feeds.items() if name in wanted})[0]
            scores.append(round(float(np.asarray(logits).ravel()[0]), 4))
        return scores

    def _load(self) -> tuple[Any, Any]:
        if self._session is None:
            import onnxruntime
            from tokenizers import Tokenizer

            folder = self.folder or MODEL_FOLDER
            if not (folder / "model.onnx").is_file():
                raise ReaderUnavailable(f"no reader model in {folder}: the package is "
                                        "incomplete; reinstall it (pip install -e .)")
            options = onnxruntime.SessionOptions()
            options.intra_op_num_threads = READER_THREADS
            options.inter_op_num_threads = 1
            tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
            tokenizer.enable_truncation(READ_TOKENS)
            tokenizer.no_padding()
            self._session = onnxruntime.InferenceSession(
                str(folder / "model.onnx"), options, providers=["CPUExecutionProvider"])
            self._tokenizer = tokenizer
        return self._session, self._tokenizer


@cache
def default_reader() -> Reader:
    """One reader per process: its model loads once, and what it read is kept across turns."""
    return Reader()


def in_english(passage: str) -> bool:
    """Whether the model reads the passage as written (else glossed: as_read_passage)."""
    return feature_language(passage, "en") == "en"


def as_read_passage(passage: str) -> str | None:
    """The passage as the English-only model reads it: a Polish one glossed; None for one
    neither plainly English nor plainly Polish (a list of links, code), which a gloss would
    garble ("Go modules" → "him module")."""
    if in_english(passage):
        return passage
    return default_glossary().gloss(passage) if has_polish_letters(passage) else None


def glossed(question: str) -> bool:
    """Whether the model reads the question glossed (a Polish one)."""
    return feature_language(question, "en") == "pl"


def as_read(question: str) -> str:
    """The question as the English-only model reads it."""
    return default_glossary().gloss(question) if glossed(question) else question
