"""Shadow mode: the candidate is asked the same question, recorded, never executed."""

from __future__ import annotations

import pytest

from docassist.core.messages import Command
from docassist.core.tools import ToolRegistry
from docassist.evaluation.decisions import shadow_report
from docassist.storage.roles import Storage
from docassist_testkit.fakes.model_server import proposal
from tests.conftest import STORES, EngineFactory
from tests.helpers import MODEL_DOWN, ScriptedSelector, message, recording, rules_selector


@pytest.mark.parametrize("store", STORES, indirect=True)
def test_candidate_proposals_are_recorded_and_never_run(
    make_engine: EngineFactory, store: Storage, registry: ToolRegistry
) -> None:
    engine = make_engine()
    engine.shadow = ScriptedSelector(
        proposal("tool_call", "get_document_metadata", {"document_id": "DOC-TLS"}),
        proposal("rejected", message="No."), MODEL_DOWN)
    with recording(registry, "get_document_metadata") as recorders:
        first = engine.handle(message("How do I renew the TLS certificate?"))
        second = engine.handle(message("Restart docassist-api now", thread="t2"))
        third = engine.handle(message("How do I report an incident?", thread="t3"))
    assert recorders["get_document_metadata"].calls == []  # the candidate's tool never ran
    assert first and first.status == "answered" and second and second.status == "rejected"
    assert third and third.status in ("answered", "no_answer")  # a broken candidate is harmless
    engine.wait_for_shadows()  # asked after each commit, on the shadow thread
    rows = store.shadow_decisions()
    assert [(r["active_status"], r["candidate_status"], r["agree"]) for r in rows] == [
        ("action_proposed", "action_proposed", 0), ("rejected", "rejected", 1),
        ("action_proposed", "parse_error", 0)]
    assert rows[2]["candidate_error"] == "ModelError: connection refused"
    report = shadow_report(rows)
    assert report.total == 3 and report.agreement == round(1 / 3, 4)
    assert report.disagreements[
        "action_proposed/answer_from_documents -> action_proposed/get_document_metadata"] == 1
    assert report.candidate_errors == 1


def test_no_shadow_row_without_a_selection(make_engine: EngineFactory, store: Storage) -> None:
    engine = make_engine()
    engine.shadow = rules_selector()
    engine.handle(message(""))  # invalid: the selector is never asked
    engine.handle(message("/sources", command=Command.SHOW_SOURCES))  # a command's own plan
    engine.wait_for_shadows()
    assert store.shadow_decisions() == []
