"""The reader: a cross-encoder over the best pages' passages, a Polish question glossed."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

from docassist.storage.ranker_model import (
    ANSWER_FEATURES,
    RankerModel,
    Read,
    reading,
)
from docassist.storage.reader import (
    MODEL_FOLDER,
    Reader,
    ReaderUnavailable,
    as_read,
    as_read_passage,
    default_reader,
    glossed,
    in_english,
)

TRAINING_PAGE = Path(__file__).resolve().parents[2] / "docs" / "reader-training.md"
ON_CALL = ("On-call\nEach engineer on the rota is paid an allowance of £50 per shift, and £100 "
           "on public holidays.")
ON_CALL_NO_AMOUNT = ("On-call\nEngineers join the on-call rota after their first three months "
                     "and hand over to the next engineer every Monday.")


def test_a_passage_that_states_the_fact_reads_above_one_that_is_only_on_the_topic() -> None:
    stated, topic, elsewhere = default_reader().scores(
        "How much is the on-call allowance per shift?",
        [ON_CALL, ON_CALL_NO_AMOUNT, "Office\nThe office opens at nine."])
    assert stated > 0.0 > topic > elsewhere


EXPENSES = ("Expenses\nSubmit your receipts in the expenses tool within 30 days of the purchase. "
            "Claims over £500 need a second approver.")
DEPLOYING = ("Deploying\nDeploys to production happen from the main branch through the pipeline. "
             "Do not deploy on Friday afternoons.")


@pytest.mark.parametrize(("passage", "answered", "near_miss"), [
    (EXPENSES, "How long do I have to submit receipts?",
     "Who is the second approver for big claims?"),
    (DEPLOYING, "Can I deploy on a Friday afternoon?",
     "Who can approve an emergency deploy on Friday?"),
])
def test_a_near_miss_on_the_passage_s_topic_reads_as_not_answered(
        passage: str, answered: str, near_miss: str) -> None:
    """What the fine-tuning is for: the passage names an approver or Friday, but never who
    the approver is or who may allow an exception (the base model read both near misses as
    answered, 1.98 and 0.06)."""
    reader = default_reader()
    assert reader.scores(answered, [passage])[0] > 0.0 > reader.scores(near_miss, [passage])[0]


def test_the_shipped_model_is_the_one_its_training_page_names() -> None:
    digest = hashlib.sha256((MODEL_FOLDER / "model.onnx").read_bytes()).hexdigest()
    assert f"sha256 `{digest}`" in TRAINING_PAGE.read_text(encoding="utf-8")


def test_a_polish_question_is_read_glossed_into_english() -> None:
    assert glossed("Ile wynosi dodatek za dyżur?") and not glossed("How much is the allowance?")
    assert as_read("Jak zgłosić incydent?") == "how report incident ?"
    assert as_read("How do I report an incident?") == "How do I report an incident?"
    stated, elsewhere = default_reader().scores(
        "Jak zgłosić incydent?", ["Incidents\nTo report an incident, page the on-call engineer "
                                  "and open a ticket.", "Office\nThe office opens at nine."])
    assert stated > elsewhere


POLISH_INCIDENTS = ("Zgłaszanie incydentu\nZgłoszenie rozpocznij od wiadomości na kanale "
                    "#incydenty, a następnie wypełnij formularz w portalu.")


def test_a_polish_passage_is_read_glossed_into_english() -> None:
    assert as_read_passage(ON_CALL) == ON_CALL
    incidents = as_read_passage(POLISH_INCIDENTS)
    assert incidents is not None and incidents.startswith("reporting incident")
    read, office = default_reader().scores(
        "How do I report an incident?", [incidents, "Office\nThe office opens at nine."])
    assert read > 0.0 > office


def test_a_passage_the_words_call_polish_without_polish_letters_is_not_read() -> None:
    """Code and link lists hold "go", "do" and "na"; glossed, "Go modules" became "him
    module"."""
    code = "Go\nUse go mod do na z w go.dev go get"
    assert not in_english(code)
    assert as_read_passage(code) is None


def test_a_page_read_glossed_counts_where_a_glossed_question_does() -> None:
    """An English question over a Polish page is read glossed as a Polish question over an
    English one is: its score goes to the glossed column, the page's own."""
    documents = ["PL", "EN"]
    rank = np.asarray([2.0, 1.0])
    groups = reading(documents, rank, [True, True])
    read = Read.of(documents, rank, groups, [3.0, -2.0], glossed=[True, False])
    assert read.column(glossed=True).tolist() == [3.0, 0.0]
    assert read.column(glossed=False).tolist() == [0.0, -2.0]


def test_scores_are_kept_up_to_a_bound(tmp_path: Path) -> None:
    reader = Reader(size=2)
    first = reader.scores("wifi password?", ["a", "b", "c"])
    assert len(reader.kept) == 2
    assert reader.scores("wifi password?", ["c", "b", "a"]) == first[::-1]


def test_a_missing_model_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ReaderUnavailable, match="no reader model in"):
        Reader(folder=tmp_path).scores("anything?", ["a passage"])


def test_each_judged_page_is_read_at_its_leading_candidate_where_it_can_be_read() -> None:
    documents = ["A", "B", "A", "C", "D", "A", "B", "C"]
    rank = np.asarray([5.0, 4.0, 3.0, 2.0, 1.0, 0.5, 0.0, -1.0])
    readable = [True, True, True, False, True, True, True, False]
    groups = reading(documents, rank, readable)
    assert groups == [[0, 2, 5], [1, 6], []]  # the best three pages; C has nothing to read
    read = Read.of(documents, rank, groups, [1.0, 7.0, -2.0, -3.0, -1.0], glossed=[True] * 5)
    assert read.scores[[0, 1]].tolist() == [7.0, -1.0]
    assert np.isnan(read.scores[[2, 3, 4, 5, 6, 7]]).all()  # C, read by nobody, stays NaN
    assert read.column(glossed=True)[[0, 1]].tolist() == [7.0, -1.0]
    assert read.column(glossed=False)[[0, 1]].tolist() == [0.0, 0.0]
    assert np.isnan(read.column(glossed=False)[3])


def test_a_page_the_reader_could_not_read_counts_its_reader_features_as_zero() -> None:
    """As in training (scripts/train_ranker.py fit_listwise): no second model for such pages."""
    model = RankerModel.load()
    row = np.asarray(model.answering.means, dtype=np.float64).copy()
    unread, zeroed = row.copy(), row.copy()
    for name in ("reader_score", "reader_glossed"):
        unread[ANSWER_FEATURES.index(name)] = np.nan
        zeroed[ANSWER_FEATURES.index(name)] = 0.0
    assert model.answering.probabilities(unread[None, :]) == pytest.approx(
        model.answering.probabilities(zeroed[None, :]))


def test_pages_share_the_probability_of_answering_with_each_other_and_none() -> None:
    """Listwise: a page that looks like an answer is less likely to be *the* answer beside a
    rival that looks as good, and the pages and "none" add up to one."""
    model = RankerModel.load()
    strong = np.asarray(model.answering.means, dtype=np.float64).copy()
    column = ANSWER_FEATURES.index("reader_score")
    strong[column] += 4 * model.answering.scales[column] * np.sign(
        model.answering.weights[column])
    alone = model.answering.probabilities(strong[None, :])[0]
    pair = model.answering.probabilities(np.vstack([strong, strong]))
    assert pair[0] == pytest.approx(pair[1])
    assert pair[0] < alone
    assert pair.sum() < 1.0
    assert model.answering.probabilities(np.zeros((0, len(ANSWER_FEATURES)))).size == 0
