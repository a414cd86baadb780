"""The selector's training: the shipped weights are what the script trains from the bank."""

from __future__ import annotations

import hashlib

import numpy as np

from docassist.core.learned import WEIGHTS_PATH, SelectorWeights
from docassist.evaluation.decisions import load_cases
from docassist.evaluation.selector_training import (
    KINDS,
    Bank,
    BankCatalog,
    fit,
    folds_of,
    temperature_for,
    writer_folds,
)
from docassist.models.embedders import get_embedder
from tests.conftest import REPO

BANK = REPO / "samples" / "bank" / "decisions_bank.jsonl"
DOCS = REPO / "samples" / "docs"
TOLERANCE = 1e-4
"""Float32 sums in another order (another BLAS) differ in the last digits, not more."""


def test_the_shipped_weights_are_what_the_script_trains_from_the_bank() -> None:
    embedder = get_embedder("use")
    bank = Bank.read(BANK, DOCS, lambda text: embedder.embed_queries([text])[0])
    dense, sparse, bias = fit(bank.matrix, bank.labels, len(KINDS))
    shipped = SelectorWeights.load()
    assert shipped.kinds == KINDS
    for trained, kept in ((dense, shipped.dense), (sparse, shipped.sparse),
                          (bias, shipped.bias)):
        np.testing.assert_allclose(trained, kept, atol=TOLERANCE)
    read = bank.matrix.logits(dense, sparse, bias).argmax(axis=1)
    assert (read == bank.matrix.logits(shipped.dense, shipped.sparse,
                                       shipped.bias).argmax(axis=1)).all()
    with np.load(WEIGHTS_PATH, allow_pickle=False) as stored:
        assert str(stored["bank_sha256"]) == hashlib.sha256(BANK.read_bytes()).hexdigest()


def test_folds_spread_every_kind_and_writers_stay_apart() -> None:
    cases = load_cases(BANK.read_text(encoding="utf-8").splitlines())
    labels = np.array([KINDS.index(str(case.kind)) for case in cases])
    folds = folds_of(labels)
    assert (folds == folds_of(labels)).all()  # one seed: the same folds every run
    for label in np.unique(labels):
        sizes = np.bincount(folds[labels == label], minlength=5)
        assert sizes.max() - sizes.min() <= 1
    writers = writer_folds(cases)
    assert sorted(set(writers)) == [0, 1, 2, 3]
    assert {case.id.split("-")[0] for case, w in zip(cases, writers, strict=True) if w == 0} == {
        "b1"}


def test_the_temperature_softens_overconfident_logits() -> None:
    labels = np.array([0, 1] * 50)
    right = np.where(np.arange(100)[:, None] % 2 == np.arange(2)[None, :], 8.0, 0.0)
    logits = right.astype(np.float32)
    logits[:20] = logits[:20, ::-1]  # a fifth confidently wrong
    assert temperature_for(logits, labels) > 2
    assert temperature_for(right.astype(np.float32), labels) == 0.5  # all right: sharpest


def test_the_bank_catalog_knows_the_demo_documents_and_the_contract_ids() -> None:
    catalog = BankCatalog(DOCS)
    assert catalog.document("DOC-TLS") is not None and catalog.document("DOC-VPN") is not None
    assert catalog.document("DOC-PAYROLL") is None and catalog.chunk("x") is None
    assert any(document.services for document in catalog.documents())
