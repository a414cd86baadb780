"""The learned selector: the model-free default (`DOCASSIST_MODEL=rules`).

A softmax classifier over `message_features` reads which of the bank's 15 kinds a message is
(`samples/bank/CONTRACT.md`), and code maps the kind to a decision exactly as the contract's
table does. It was trained by `scripts/train_selector.py` on the bank only; its weights ship
beside this module with their SHA-256, and a selector refuses weights that do not match it.

Exact things stay rules, applied before the classifier: an instruction the injection
pattern catches for sure is refused, a message that is only a document id asks for that
document's metadata; whether an id is known and whether the thread has sources to show is
decided by code from the state, never guessed.

The probabilities are calibrated (a temperature fitted on cross-validation folds). When the
most likely decision is below `min_confidence` and searching is one of the two most likely,
the selector asks back instead of guessing (`low_confidence`).
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from docassist.core import i18n, intents
from docassist.core.errors import ConfigurationError
from docassist.core.followup import names_its_topic
from docassist.core.limits import MAX_QUESTION_CHARS
from docassist.core.message_features import (
    HASH_DIMENSIONS,
    STATE_FEATURES,
    Features,
    features_of,
)
from docassist.core.ports import Embedder, ExampleSource, Reading, SelectionRequest
from docassist.core.state import HistoryMessage

WEIGHTS_PATH: Final = Path(__file__).with_name("selector_weights.npz")
LOW_CONFIDENCE: Final = "low_confidence"
READINGS_KEPT: Final = 64
"""Readings remembered per selector, so `reading()` after `propose()` costs nothing."""

KIND_GROUPS: Final[dict[str, str]] = {
    "procedure": "search", "procedure_new_topic": "search", "action_question": "search",
    "followup": "search",
    "ambiguous_followup": "ask", "vague": "ask",
    "sources": "sources", "sources_without_answer": "sources",
    "metadata": "metadata", "metadata_missing_id": "metadata",
    "rejected_action": "refuse", "injection": "refuse",
    "no_tool": "no_tool", "smalltalk": "no_tool", "off_topic": "no_tool",
}
"""Kind -> what code does next. Sources and metadata kinds differ only by the state (sources
to show, a known id), which code checks; the classifier needs to read only the request."""
NO_TOOL_TEXT: Final[dict[str, str]] = {
    "smalltalk": "smalltalk", "off_topic": "off_topic", "no_tool": "no_suitable_tool"}


@dataclass(frozen=True)
class SelectorWeights:
    """A trained classifier: weights per kind over the dense and the hashed features."""

    kinds: tuple[str, ...]
    dense: npt.NDArray[np.float32]
    sparse: npt.NDArray[np.float32]
    bias: npt.NDArray[np.float32]
    temperature: float
    min_confidence: float
    digest: str

    @classmethod
    def load(cls, path: Path = WEIGHTS_PATH) -> SelectorWeights:
        """The weights in `path`, checked against the SHA-256 written beside them."""
        data = path.read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        expected = path.with_suffix(".sha256").read_text().split()[0]
        if digest != expected:
            raise ConfigurationError(f"{path.name} does not match its SHA-256 ({expected[:12]}…)")
        with np.load(path, allow_pickle=False) as stored:
            weights = cls(kinds=tuple(str(kind) for kind in stored["kinds"]),
                          dense=stored["dense"], sparse=stored["sparse"], bias=stored["bias"],
                          temperature=float(stored["temperature"]),
                          min_confidence=float(stored["min_confidence"]), digest=digest)
            state = tuple(str(name) for name in stored["state_features"])
        if state != STATE_FEATURES or weights.sparse.shape[0] != HASH_DIMENSIONS or set(
                weights.kinds) != set(KIND_GROUPS):
            raise ConfigurationError(f"{path.name} was trained on other features or kinds: "
                                     "run scripts/train_selector.py")
        return weights

    def probabilities(self, features: Features) -> npt.NDArray[np.float64]:
        """Calibrated probability of each kind, in `kinds` order."""
        logits = (features.dense @ self.dense + features.values @ self.sparse[features.indices]
                  + self.bias).astype(np.float64) / self.temperature
        exp = np.exp(logits - logits.max())
        probabilities: npt.NDArray[np.float64] = exp / exp.sum()
        return probabilities


REFERENCE_KINDS: Final = frozenset({"followup", "ambiguous_followup", "vague"})


def exact_reading(message: str) -> Reading | None:
    """What the exact rules decide before the classifier is asked; None: ask it."""
    if intents.is_injection(message):
        return Reading("injection", 1.0)
    if intents.is_only_document_id(message) or intents.names_metadata(message):
        return Reading("metadata", 1.0)
    return None


def reading_for(request: SelectionRequest, kinds: tuple[str, ...],
                probabilities: npt.NDArray[np.float64], min_confidence: float) -> Reading:
    """The classifier's reading, the follow-up resolver having the last word on a reference:
    when it found the one subject the history names, the message is a follow-up of it; when
    there is no history at all, a reference it found is to nothing. Between, the classifier
    tells a follow-up from a vague or an ambiguous one. (The first rule costs 0.9 points on
    the bank, whose threads name subjects the resolver's lexicon does not know; on the demo
    documents it knows them all, and the demo threads resolve as before.)"""
    reading = decide_kind(kinds, probabilities, min_confidence)
    follow_up = request.state_summary.follow_up
    if reading.kind in REFERENCE_KINDS and follow_up == "resolved":
        return Reading("followup", reading.confidence)
    if (KIND_GROUPS.get(reading.kind) == "no_tool" and request.state_summary.names_a_title
            and not intents.thanks(request.message)):
        # "testing": a topic a page is titled with, not small talk.
        return Reading("procedure", reading.confidence)
    if reading.kind == "vague" and names_its_topic(request.message):
        # "apdex - what is it?": what "it" is, the message says before its question.
        return Reading("procedure", reading.confidence)
    if (follow_up == "unresolved" and not request.history
            and not names_its_topic(request.message)
            and KIND_GROUPS.get(reading.kind) == "search"):
        # A reference in the first message of a thread ("how do I check its status?"): there
        # is nothing it can refer to, so there is nothing to search (the contract's `vague`).
        return Reading("vague", reading.confidence)
    return reading


def decide_kind(kinds: tuple[str, ...], probabilities: npt.NDArray[np.float64],
                min_confidence: float) -> Reading:
    """The most likely decision (kinds summed by group), then its most likely kind; asks back
    when unsure whether to search."""
    groups: dict[str, float] = {}
    for kind, probability in zip(kinds, probabilities, strict=True):
        groups[KIND_GROUPS[kind]] = groups.get(KIND_GROUPS[kind], 0.0) + float(probability)
    ranked = sorted(groups, key=lambda group: -groups[group])
    best = ranked[0]
    if groups[best] < min_confidence and "search" in ranked[:2]:
        return Reading(LOW_CONFIDENCE, round(groups[best], 4))
    kind = max((k for k in kinds if KIND_GROUPS[k] == best),
               key=lambda k: float(probabilities[kinds.index(k)]))
    return Reading(kind, round(groups[best], 4))


def with_context(question: str, history: list[HistoryMessage]) -> str:
    """A follow-up searched with the thread's last question beside it: earlier answers give
    context, never sources (the question is searched again). Measured on the bank's folds:
    follow-ups right 67% -> 81% (the words that name the subject are the user's own)."""
    previous = [item.content for item in history if item.role == "user"]
    if not previous:
        return question
    room = MAX_QUESTION_CHARS - len(question) - len(" ()")
    return f"{question} ({previous[-1][:room]})" if room > 0 else question


_WITH_CONTEXT: Final = re.compile(r"^(.+\?) \((.+)\)$", re.DOTALL)


def question_parts(query: str) -> list[str]:
    """A `with_context` query's follow-up and the earlier question beside it, each a question
    of its own (a word starting the earlier one starts a sentence: "(What do I do…)"); any
    other query alone."""
    found = _WITH_CONTEXT.match(query)
    return [found.group(1), found.group(2)] if found else [query]


def without_context(query: str) -> str:
    """The follow-up's own words of a `with_context` query: they, not the earlier question,
    say which section of the page answers ("Jak sprawdzić jej stan?" after a question on
    the whole procedure: the status-check section, not the procedure again)."""
    found = _WITH_CONTEXT.match(query)
    return found.group(1) if found else query


def _proposal(decision: str, action: str | None = None,
              arguments: dict[str, Any] | None = None, message: str | None = None) -> str:
    return json.dumps({"decision": decision, "action": action, "arguments": arguments or {},
                       "message": message}, ensure_ascii=False)


def proposal_for(reading: Reading, request: SelectionRequest) -> str:
    """The decision JSON for what was read, the state deciding what the contract leaves to it."""
    language, summary = request.language, request.state_summary
    group = KIND_GROUPS.get(reading.kind, "ask")
    if group == "search":
        question = request.standalone_question
        if reading.kind == "followup":
            # Also when resolved: the resolver names the subject its own way ("the database
            # backup"); the thread's last question adds the user's words for it ("restore").
            question = with_context(question, request.history)
        return _proposal("tool_call", "answer_from_documents", {"question": question})
    if group == "sources":
        if summary.has_last_sources:
            return _proposal("tool_call", "show_last_sources")
        return _proposal("clarification_needed", message=i18n.text("clarify_no_sources", language))
    if group == "metadata":
        if summary.known_document_ids_in_message:
            return _proposal("tool_call", "get_document_metadata",
                             {"document_id": summary.known_document_ids_in_message[0]})
        return _proposal("clarification_needed",
                         message=i18n.text("clarify_document_id", language, known="…"))
    if group == "refuse":
        key = "rejected_injection" if reading.kind == "injection" else "rejected"
        return _proposal("rejected", message=i18n.text(key, language))
    if group == "no_tool":
        return _proposal("no_suitable_tool",
                         message=i18n.text(NO_TOOL_TEXT[reading.kind], language))
    return _proposal("clarification_needed",
                     message=i18n.text("clarify_subject", language, examples="…"))


def _fingerprint(request: SelectionRequest) -> str:
    return request.model_dump_json(include={"message", "standalone_question", "history",
                                            "state_summary"})


class LearnedSelector:
    """Exact rules, then the classifier; the same JSON a model returns, so its output goes
    through the same strict parser and normalizer."""

    backend = "rules"
    examples: ExampleSource | None = None

    def __init__(self, embedder: Callable[[], Embedder],
                 weights: SelectorWeights | None = None) -> None:
        """`embedder` gives the embedder the weights were trained with (USE), called at the
        first message: loading it takes about a second, and a process may never select."""
        self.weights = weights or SelectorWeights.load()
        self.model = f"learned-{self.weights.digest[:8]}"
        self._embedder_factory = embedder
        self._embedder: Embedder | None = None
        self._readings: OrderedDict[str, Reading] = OrderedDict()
        self._lock = threading.Lock()

    def _embed(self, texts: list[str]) -> npt.NDArray[np.float32]:
        if self._embedder is None:
            self._embedder = self._embedder_factory()
        rows: npt.NDArray[np.float32] = self._embedder.embed_queries(texts)
        return rows

    def read(self, request: SelectionRequest) -> Reading:
        exact = exact_reading(request.message)
        if exact is not None:
            return exact
        probabilities = self.weights.probabilities(features_of(request, self._embed))
        return reading_for(request, self.weights.kinds, probabilities,
                           self.weights.min_confidence)

    def propose(self, request: SelectionRequest) -> str:
        reading = self.read(request)
        with self._lock:
            self._readings[_fingerprint(request)] = reading
            while len(self._readings) > READINGS_KEPT:
                self._readings.popitem(last=False)
        return proposal_for(reading, request)

    def reading(self, request: SelectionRequest) -> Reading | None:
        with self._lock:
            found = self._readings.get(_fingerprint(request))
        return found if found is not None else self.read(request)
