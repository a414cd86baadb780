"""Training the learned selector (`core/learned.py`) on the labelled bank, deterministically.

Softmax regression over `message_features` (plain numpy: full-batch Adam from zero weights,
L2 on both parts, a fixed number of steps), so the same bank gives the same weights. Model
choices are made on 5-fold cross-validation of the bank only (folds stratified by kind, one
seed); the figures reported are those folds run through the selector's own code path
(exact rules, classifier, the kind -> decision mapping, normalization, the injection guard)
and scored like `eval decisions`.

`scripts/train_selector.py` runs it and writes the weights; a test trains again and checks
the shipped weights are what it gives.
"""

from __future__ import annotations

import hashlib
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import numpy as np
import numpy.typing as npt

from docassist.core.documents import Chunk, DocumentInfo, parse_document
from docassist.core.examples import examples_digest
from docassist.core.followup import SubjectVocabulary
from docassist.core.i18n import detect_language
from docassist.core.learned import KIND_GROUPS, SelectorWeights, exact_reading, reading_for
from docassist.core.learned import proposal_for as learned_proposal
from docassist.core.message_features import HASH_DIMENSIONS, STATE_FEATURES, Embed, features_of
from docassist.core.messages import validate_message
from docassist.core.planning import guard, resolve, selection_request
from docassist.core.ports import Embedder, LabelledExample, SelectionRequest
from docassist.core.selection import Selection, normalize, parse_strict
from docassist.core.tools import default_registry
from docassist.evaluation.cases import CaseResult, DecisionCase, Got
from docassist.evaluation.decisions import (
    DecisionReport,
    decision_report,
    is_match,
    load_cases,
    state_for,
)

KINDS: Final = tuple(sorted(KIND_GROUPS))
SEED: Final = 0
FOLDS: Final = 5
STEPS: Final = 300
LEARNING_RATE: Final = 0.05
L2_DENSE: Final = 1e-4
"""L2 on the embedding and state weights. Cross-validated on the bank: 1e-3 and 1e-5 were
worse (decision accuracy -1 point each), 0 worse still."""
L2_SPARSE: Final = 1e-4
OPENBLAS_KERNEL: Final = "Haswell"
"""OpenBLAS's kernel (OPENBLAS_CORETYPE) the shipped weights are trained with. OpenBLAS picks
a kernel by CPU, and another kernel sums floats in another order; Adam scales each step by the
gradient's own size, so a feature whose gradient is only rounding noise moves by a whole step
one way or the other (a few of the 491,520 sparse weights by ~0.01). Pinned, the same bank
gives the same weights on any x86-64 CPU with AVX2."""
KIND_WEIGHTS: Final[dict[str, float]] = {"rejected_action": 1.5}
"""Loss weight of a kind (others 1): a request to act read as a question is a tool proposed
where none fits, the error issue 41 bounds; the bank's requests and questions about the same
action differ by a word or two."""
TEMPERATURES: Final = tuple(round(0.5 + 0.05 * step, 2) for step in range(51))
MIN_CONFIDENCES: Final = tuple(round(0.30 + 0.025 * step, 3) for step in range(17))
CONTRACT_DOCUMENT_IDS: Final = (
    "DOC-INSTR", "DOC-TLS", "DOC-DB", "DOC-WORKER", "DOC-INCIDENT", "DOC-ACCESS", "DOC-VPN",
    "DOC-LEAVE", "DOC-EXPENSES", "DOC-ONBOARDING", "DOC-SECURITY", "DOC-RELEASE")
"""The catalogue the bank's labelling contract names (samples/bank/CONTRACT.md)."""


class BankCatalog:
    """The catalog the bank was labelled against: the demo documents (their services teach
    the resolver) and an entry for every other id the contract names."""

    def __init__(self, docs: Path) -> None:
        infos = [parse_document(path.name, path.stem, path.read_text(encoding="utf-8")).info
                 for path in sorted(docs.iterdir()) if path.suffix in (".md", ".txt")]
        known = {info.document_id for info in infos}
        infos += [DocumentInfo(document_id=document_id, title=document_id, version="1",
                               source_path=f"{document_id}.md", content_sha256="0" * 64)
                  for document_id in CONTRACT_DOCUMENT_IDS if document_id not in known]
        self._documents = {info.document_id: info for info in infos}

    def documents(self) -> list[DocumentInfo]:
        return list(self._documents.values())

    def document(self, document_id: str) -> DocumentInfo | None:
        return self._documents.get(document_id)

    def chunk(self, chunk_id: str) -> Chunk | None:
        return None


def bank_requests(cases: list[DecisionCase], catalog: BankCatalog) -> list[SelectionRequest]:
    """Each case as the selector is asked it in a turn (resolution, state summary)."""
    vocabulary = SubjectVocabulary.from_catalog(catalog.documents())
    specs = default_registry().specs()
    requests = []
    for case in cases:
        message = validate_message(case.message)
        language = detect_language(message, "en")
        state = state_for(case)
        resolution = resolve(message, state, vocabulary, language)
        requests.append(selection_request(message, resolution, state, catalog=catalog,
                                          tool_specs=specs, language=language))
    return requests


@dataclass(frozen=True)
class Matrix:
    """Feature rows: dense (embedding, state) and the hashed part in compressed rows."""

    dense: npt.NDArray[np.float32]
    indptr: npt.NDArray[np.int64]
    indices: npt.NDArray[np.int64]
    values: npt.NDArray[np.float32]

    @classmethod
    def of(cls, requests: list[SelectionRequest], embed: Embed) -> Matrix:
        rows = [features_of(request, embed) for request in requests]
        lengths = [len(row.indices) for row in rows]
        return cls(dense=np.stack([row.dense for row in rows]),
                   indptr=np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64),
                   indices=np.concatenate([row.indices for row in rows]),
                   values=np.concatenate([row.values for row in rows]))

    def take(self, rows: npt.NDArray[np.int64]) -> Matrix:
        spans = [np.arange(self.indptr[row], self.indptr[row + 1]) for row in rows]
        lengths = [len(span) for span in spans]
        picked = np.concatenate(spans)
        return Matrix(dense=self.dense[rows],
                      indptr=np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64),
                      indices=self.indices[picked], values=self.values[picked])

    def row_of(self) -> npt.NDArray[np.int64]:
        return np.repeat(np.arange(len(self.dense)), np.diff(self.indptr))

    def logits(self, dense: npt.NDArray[np.float32], sparse: npt.NDArray[np.float32],
               bias: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """Per class, a sum over each row's buckets (1-D gathers: faster than 2-D ones)."""
        starts = self.indptr[:-1]
        hashed = np.stack([np.add.reduceat(column[self.indices] * self.values, starts)
                           for column in sparse.T], axis=1)
        result: npt.NDArray[np.float32] = self.dense @ dense + hashed + bias
        return result


def softmax(logits: npt.NDArray[np.floating]) -> npt.NDArray[np.float64]:
    shifted = np.asarray(logits, dtype=np.float64)
    exp = np.exp(shifted - shifted.max(axis=1, keepdims=True))
    result: npt.NDArray[np.float64] = exp / exp.sum(axis=1, keepdims=True)
    return result


Parameters = tuple[npt.NDArray[np.float32], npt.NDArray[np.float32], npt.NDArray[np.float32]]


def fit(matrix: Matrix, labels: npt.NDArray[np.int64], classes: int) -> Parameters:
    """Softmax regression, full-batch Adam from zeros: the same rows give the same weights.
    Each row's loss is weighted by its kind (KIND_WEIGHTS)."""
    targets = np.eye(classes, dtype=np.float32)[labels]
    rows = matrix.row_of()
    weight = np.array([KIND_WEIGHTS.get(kind, 1.0) for kind in KINDS], np.float32)[labels]
    count = float(weight.sum())
    params: list[npt.NDArray[np.float32]] = [
        np.zeros((matrix.dense.shape[1], classes), np.float32),
        np.zeros((HASH_DIMENSIONS, classes), np.float32), np.zeros(classes, np.float32)]
    first = [np.zeros_like(p) for p in params]
    second = [np.zeros_like(p) for p in params]
    for step in range(1, STEPS + 1):
        error = ((softmax(matrix.logits(*params)) - targets) * weight[:, None] / count
                 ).astype(np.float32)
        sparse_grad = np.stack([np.bincount(matrix.indices, weights=column[rows] * matrix.values,
                                            minlength=HASH_DIMENSIONS) for column in error.T],
                               axis=1).astype(np.float32)
        grads = [matrix.dense.T @ error + L2_DENSE * params[0],
                 sparse_grad + L2_SPARSE * params[1], error.sum(axis=0)]
        for index, grad in enumerate(grads):
            first[index] = 0.9 * first[index] + 0.1 * grad
            second[index] = 0.999 * second[index] + 0.001 * grad * grad
            corrected = first[index] / (1 - 0.9**step)
            scale = np.sqrt(second[index] / (1 - 0.999**step)) + 1e-8
            params[index] = (params[index] - LEARNING_RATE * corrected / scale).astype(np.float32)
    return params[0], params[1], params[2]


def folds_of(labels: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """Fold of each case: every kind spread evenly over FOLDS, shuffled with SEED."""
    rng = np.random.default_rng(SEED)
    fold = np.zeros(len(labels), dtype=np.int64)
    for label in np.unique(labels):
        members = np.flatnonzero(labels == label)
        rng.shuffle(members)
        fold[members] = np.arange(len(members)) % FOLDS
    return fold


def writer_folds(cases: list[DecisionCase]) -> npt.NDArray[np.int64]:
    """Fold of each case by the helper who wrote it (ids `b1-…`, `b2-…`, …): how the selector
    does on messages of an author it never read, as a fresh held-out set is."""
    writers = sorted({case.id.split("-", 1)[0] for case in cases})
    return np.array([writers.index(case.id.split("-", 1)[0]) for case in cases], dtype=np.int64)


def out_of_fold_logits(matrix: Matrix, labels: npt.NDArray[np.int64],
                       fold: npt.NDArray[np.int64]) -> npt.NDArray[np.float32]:
    logits = np.zeros((len(labels), len(KINDS)), dtype=np.float32)
    for held in range(int(fold.max()) + 1):
        train, test = np.flatnonzero(fold != held), np.flatnonzero(fold == held)
        logits[test] = matrix.take(test).logits(*fit(matrix.take(train), labels[train],
                                                     len(KINDS)))
    return logits


def temperature_for(logits: npt.NDArray[np.float32], labels: npt.NDArray[np.int64]) -> float:
    """The temperature that gives the held-out folds the lowest log-loss."""
    def loss(temperature: float) -> float:
        probabilities = softmax(logits / temperature)[np.arange(len(labels)), labels]
        return float(-np.log(np.maximum(probabilities, 1e-12)).mean())
    return min(TEMPERATURES, key=loss)


def case_results(cases: list[DecisionCase], requests: list[SelectionRequest],
                 probabilities: npt.NDArray[np.float64], min_confidence: float
                 ) -> list[CaseResult]:
    """Each case decided by the selector's own code from these probabilities."""
    results = []
    for case, request, row in zip(cases, requests, probabilities, strict=True):
        reading = exact_reading(request.message) or reading_for(request, KINDS, row,
                                                                min_confidence)
        raw = learned_proposal(reading, request)
        proposal, error = parse_strict(raw)
        selection = Selection(raw_response=raw, proposal=proposal, parse_error=error, prompt="",
                              prompt_sha256="", backend="rules", model="cv",
                              duration_ms=0.0, kind=reading.kind)
        decision = guard(normalize(selection), request.message)
        got = Got(status=decision.status, action=decision.action, arguments=decision.arguments)
        results.append(CaseResult(id=case.id, expected=case.expected, got=got,
                                  ok=is_match(case.expected, got), language=case.language,
                                  kind=case.kind))
    return results


def min_confidence_for(cases: list[DecisionCase], requests: list[SelectionRequest],
                       probabilities: npt.NDArray[np.float64]) -> float:
    """The confidence below which asking back scores best on the held-out folds (the lowest
    such value on a tie: ask back no more often than it pays)."""
    def accuracy(threshold: float) -> float:
        return sum(r.ok for r in case_results(cases, requests, probabilities, threshold))
    return max(MIN_CONFIDENCES, key=lambda threshold: (accuracy(threshold), -threshold))


@dataclass(frozen=True)
class Trained:
    weights: bytes
    """The `.npz` to ship (np.savez: no timestamps inside, the same bytes each run)."""
    report: DecisionReport
    """Cross-validation of the bank, scored like `eval decisions`."""
    writer_report: DecisionReport
    """Leave one writer out: trained on the other helpers' messages, scored on each one's."""
    kind_accuracy: float
    temperature: float
    min_confidence: float


@dataclass(frozen=True)
class Bank:
    """The bank as the selector sees it: cases, their requests, kinds and features."""

    cases: list[DecisionCase]
    requests: list[SelectionRequest]
    labels: npt.NDArray[np.int64]
    matrix: Matrix

    @classmethod
    def read(cls, bank: Path, docs: Path, embed: Embed) -> Bank:
        cases = load_cases(bank.read_text(encoding="utf-8").splitlines())
        requests = bank_requests(cases, BankCatalog(docs))
        labels = np.array([KINDS.index(str(case.kind)) for case in cases], dtype=np.int64)
        return cls(cases, requests, labels, Matrix.of(requests, embed))


def one_by_one(embedder: Embedder) -> Embed:
    """The embedder as training calls it: a text a call. Batched rows differ from single
    ones in the seventh digit, and Adam's sign-driven steps turn that into differences of up
    to 0.01 in a few hashed weights, so the shipped weights are reproducible only this way
    (a turn batches its texts; its decisions are the same)."""

    seen: dict[str, npt.NDArray[np.float32]] = {}

    def embedded(texts: list[str]) -> npt.NDArray[np.float32]:
        # A text's row depends on nothing but the text, so each is embedded once: the bank's
        # threads repeat their questions and answers (18,371 texts asked, 11,334 distinct).
        for text in texts:
            if text not in seen:
                seen[text] = embedder.embed_queries([text])[0]
        return np.vstack([seen[text] for text in texts])

    return embedded


def train(bank_path: Path, docs: Path, embed: Embed) -> Trained:
    bank = Bank.read(bank_path, docs, embed)
    cases, requests, labels, matrix = bank.cases, bank.requests, bank.labels, bank.matrix
    held_out = out_of_fold_logits(matrix, labels, folds_of(labels))
    temperature = temperature_for(held_out, labels)
    probabilities = softmax(held_out / temperature)
    min_confidence = min_confidence_for(cases, requests, probabilities)
    report = decision_report(case_results(cases, requests, probabilities, min_confidence),
                             backend="rules", model="cross-validation", catalog_version="")
    by_writer = softmax(out_of_fold_logits(matrix, labels, writer_folds(cases)) / temperature)
    writer_report = decision_report(case_results(cases, requests, by_writer, min_confidence),
                                    backend="rules", model="leave-one-writer-out",
                                    catalog_version="")
    dense, sparse, bias = fit(matrix, labels, len(KINDS))
    buffer = io.BytesIO()
    np.savez(buffer, kinds=np.array(KINDS), dense=dense, sparse=sparse, bias=bias,
             temperature=np.float64(temperature), min_confidence=np.float64(min_confidence),
             state_features=np.array(STATE_FEATURES),
             bank_sha256=np.array(hashlib.sha256(bank_path.read_bytes()).hexdigest()))
    kind_accuracy = float((held_out.argmax(axis=1) == labels).mean())
    return Trained(weights=buffer.getvalue(), report=report, writer_report=writer_report,
                   kind_accuracy=round(kind_accuracy, 4), temperature=temperature,
                   min_confidence=min_confidence)


def save_weights(trained: Trained, path: Path) -> SelectorWeights:
    """Write the weights and their SHA-256 beside them; load them back as a check."""
    path.write_bytes(trained.weights)
    path.with_suffix(".sha256").write_text(
        f"{hashlib.sha256(trained.weights).hexdigest()}  {path.name}\n")
    return SelectorWeights.load(path)


def write_examples(cases: list[DecisionCase], path: Path, embedder: Embedder) -> None:
    """The bank as a model selector's worked examples (core/examples.py), with their vectors
    (float16: a cosine needs no more) and the digest that ties the vectors to the text."""
    examples = [LabelledExample(message=str(case.message), has_history=bool(case.history),
                                has_last_sources=case.state.has_last_sources,
                                kind=str(case.kind), decision=case.expected.status,
                                action=case.expected.action) for case in cases]
    text = "".join(example.model_dump_json() + "\n" for example in examples)
    path.write_text(text, encoding="utf-8")
    vectors = embedder.embed_passages([example.message for example in examples])
    vector_path = path.with_suffix(f".{embedder.name}.npy")
    np.save(vector_path, vectors.astype(np.float16), allow_pickle=False)
    vector_path.with_suffix(".sha256").write_text(examples_digest(text) + "\n")
