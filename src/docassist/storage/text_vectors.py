"""Texts embedded once and kept: a bounded map from text to its vector, shared by threads."""

from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np
import numpy.typing as npt

from docassist.core.ports import Embedder


class TextVectors:
    """Passages (or headings) embedded once and kept, the oldest dropped beyond `size`."""

    def __init__(self, embedder: Embedder, size: int) -> None:
        self.embedder = embedder
        self.size = size
        self._vectors: OrderedDict[str, npt.NDArray[np.float32]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        """Texts kept."""
        with self._lock:
            return len(self._vectors)

    def cosines(self, query: npt.NDArray[np.float32], texts: list[str]) -> list[float]:
        with self._lock:
            known = {text: self._vectors[text] for text in set(texts) if text in self._vectors}
        missing = [text for text in dict.fromkeys(texts) if text not in known]
        if missing:
            fresh = dict(zip(missing, self.embedder.embed_passages(missing), strict=True))
            known.update(fresh)
            with self._lock:
                self._vectors.update(fresh)
                while len(self._vectors) > self.size:
                    self._vectors.popitem(last=False)
        return [float(np.dot(known[text], query)) for text in texts]
