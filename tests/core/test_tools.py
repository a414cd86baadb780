"""The guarded executor: validation, state checks, one attempt per turn, output limits."""

from __future__ import annotations

import dataclasses
import json
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

import pytest

from docassist.core.errors import ToolValidationError
from docassist.core.extractive import ExtractiveAnswerer
from docassist.core.limits import MAX_RESULT_CHARS
from docassist.core.selection import tool_catalog_version
from docassist.core.state import ConversationState, RagResult, Source
from docassist.core.tools import (
    AnswerArguments,
    ToolContext,
    ToolExecutor,
    ToolRegistry,
    default_registry,
)
from docassist.core.turn import TurnEngine, tool_call_record
from docassist.storage import Bm25Retriever, Store
from tests.helpers import key, recording, swapped, turn_record


def context(store: Store, state: ConversationState, message: str = "") -> ToolContext:
    return ToolContext(state=state, catalog=store, retriever=Bm25Retriever(store),
                       answerer=ExtractiveAnswerer(), current_message=message, language="en")


def state_with_sources() -> ConversationState:
    source = Source(chunk_id="DOC-X-0123456789-0001", document_id="DOC-X", title="X",
                    version="1", section="S", score=1.0, snippet="s")
    state = ConversationState(last_sources=[source], last_source_turn_id=1,
                              last_source_result_id="r1")
    state.last_result = RagResult(rag_id="r", status="answered", answer="a", sources=[source],
                                  retrieved_chunk_ids=[source.chunk_id], retriever="bm25",
                                  top_k=3, similarity_threshold=0.2)
    return state


def test_invalid_answer_arguments_never_reach_the_function(
    store: Store, registry: ToolRegistry
) -> None:
    """Seed stage test: top_k=True, top_k=6 and an extra `command` are invalid_arguments."""
    executor = ToolExecutor(registry)
    with recording(registry, "answer_from_documents") as recorders:
        codes = []
        for arguments in ({"question": "Stan?", "top_k": True},
                          {"question": "Stan?", "top_k": 6},
                          {"question": "Stan?", "command": "whoami"}):
            state = ConversationState()
            state.begin_turn()
            outcome = executor.execute({"action": "answer_from_documents",
                                        "arguments": arguments}, context(store, state))
            assert outcome.status == "invalid_arguments"
            codes.append(outcome.error_code)
        assert codes == ["invalid_top_k", "invalid_top_k", "unexpected_argument"]
        assert recorders["answer_from_documents"].calls == []


def test_a_rejected_attempt_uses_the_turns_only_attempt(
    store: Store, registry: ToolRegistry
) -> None:
    executor = ToolExecutor(registry)
    with recording(registry, "answer_from_documents") as recorders:
        state = ConversationState()
        state.begin_turn()
        bad = executor.execute({"action": "answer_from_documents",
                                "arguments": {"question": "Stan?", "top_k": True}},
                               context(store, state))
        again = executor.execute({"action": "answer_from_documents",
                                  "arguments": {"question": "Stan?"}}, context(store, state))
        assert (bad.status, again.status) == ("invalid_arguments", "tool_rejected")
        assert again.error_code == "attempt_limit"
        assert recorders["answer_from_documents"].calls == []
    # A new turn gets a new attempt.
    state.begin_turn()
    ok = executor.execute({"action": "answer_from_documents",
                           "arguments": {"question": "How do I renew the TLS certificate?"}},
                          context(store, state))
    assert ok.status == "tool_completed"


def _raise(_arguments: Any, _context: ToolContext) -> Any:
    raise RuntimeError("disk on fire")


def _huge(_arguments: Any, _context: ToolContext) -> Any:
    return {"text": "x" * (MAX_RESULT_CHARS + 1)}


def _not_a_dict(_arguments: Any, _context: ToolContext) -> Any:
    return ["a", "list"]


@dataclass
class Case:
    name: str
    calls: list[dict[str, Any]]
    expected: list[tuple[str, str | None]]  # (status, error_code) per attempt
    message: str = ""
    sources: bool = False
    replace: tuple[str, Any] | None = None


MATRIX = [
    Case("unknown tool", [{"action": "delete_everything", "arguments": {}}],
         [("unknown_tool", "unknown_tool")]),
    Case("bool top_k", [{"action": "answer_from_documents",
                         "arguments": {"question": "Stan?", "top_k": True}}],
         [("invalid_arguments", "invalid_top_k")]),
    Case("extra field", [{"action": "answer_from_documents",
                          "arguments": {"question": "Stan?", "command": "whoami"}}],
         [("invalid_arguments", "unexpected_argument")]),
    Case("path instead of id", [{"action": "get_document_metadata",
                                 "arguments": {"document_id": "/etc/passwd"}}],
         [("invalid_arguments", "invalid_document_id")], message="metadata of /etc/passwd"),
    Case("unknown id", [{"action": "get_document_metadata",
                         "arguments": {"document_id": "DOC-PAYROLL"}}],
         [("invalid_arguments", "unknown_document_id")], message="metadata of DOC-PAYROLL"),
    Case("missing sources", [{"action": "show_last_sources", "arguments": {}}],
         [("clarification_needed", "no_last_sources")]),
    Case("exception inside the tool", [{"action": "answer_from_documents",
                                        "arguments": {"question": "Jak?"}}],
         [("tool_error", "tool_execution_failed")], replace=("answer_from_documents", _raise)),
    Case("oversized result", [{"action": "answer_from_documents",
                               "arguments": {"question": "Jak?"}}],
         [("tool_error", "result_too_large")], replace=("answer_from_documents", _huge)),
    Case("non-dict result", [{"action": "answer_from_documents",
                              "arguments": {"question": "Jak?"}}],
         [("tool_error", "invalid_output")], replace=("answer_from_documents", _not_a_dict)),
    Case("valid answer_from_documents", [{"action": "answer_from_documents",
                                          "arguments": {"question": "How do I renew TLS?"}}],
         [("tool_completed", None)]),
    Case("valid show_last_sources", [{"action": "show_last_sources", "arguments": {}}],
         [("tool_completed", None)], sources=True),
    Case("valid get_document_metadata", [{"action": "get_document_metadata",
                                          "arguments": {"document_id": "DOC-TLS"}}],
         [("tool_completed", None)], message="metadata DOC-TLS"),
    Case("two attempts in one turn",
         [{"action": "show_last_sources", "arguments": {"x": 1}},
          {"action": "show_last_sources", "arguments": {}}],
         [("invalid_arguments", "unexpected_argument"), ("tool_rejected", "attempt_limit")],
         sources=True),
]




def test_executor_matrix_and_its_tool_trace(store: Store) -> None:
    assert len(MATRIX) >= 13
    registry = default_registry()
    executor = ToolExecutor(registry)
    conversation = key("matrix")
    version = 0
    for turn_id, case in enumerate(MATRIX, start=1):
        state = state_with_sources() if case.sources else ConversationState()
        state.begin_turn()
        with swapped(registry, *case.replace) if case.replace else nullcontext():
            outcomes = [executor.execute(call, context(store, state, case.message))
                        for call in case.calls]
        got = [(outcome.status, outcome.error_code) for outcome in outcomes]
        assert got == case.expected, case.name
        result_id = f"result-{turn_id:02d}"
        rows = [tool_call_record(outcome, attempt=attempt, result_id=result_id,
                                 key=conversation, generation=0, turn_id=turn_id,
                                 catalog_version="v", save_raw=False)
                for attempt, outcome in enumerate(outcomes, start=1)]
        version = store.commit_turn(conversation, state, version,
                                    turn_record(result_id, turn_id, outcomes), rows)

    stored = store.tool_calls()
    assert len(stored) == len(MATRIX) + 1  # every attempt is a row, early returns included
    expected_rows = [(status, code) for case in MATRIX for status, code in case.expected]
    assert [(row["status"], row["error_code"]) for row in stored] == expected_rows
    two = [row for row in stored if row["result_id"] == f"result-{len(MATRIX):02d}"]
    assert [row["attempt"] for row in two] == [1, 2]
    assert len({row["result_id"] for row in stored}) == len(MATRIX)
    unknown = stored[0]
    assert unknown["tool_name"] == "delete_everything"
    # Text arguments are hashed in the trace; ids and numbers stay readable.
    valid_answer = stored[9]
    assert json.loads(valid_answer["arguments"])["question"] == {
        "sha256": json.loads(valid_answer["arguments"])["question"]["sha256"]}
    assert "How do I renew" not in valid_answer["arguments"]
    assert json.loads(stored[11]["arguments"]) == {"document_id": "DOC-TLS"}


@pytest.mark.parametrize(
    ("call", "code"),
    [
        ("not a dict", "invalid_envelope"),
        ({"action": "show_last_sources"}, "invalid_envelope"),
        ({"action": "show_last_sources", "arguments": {}, "extra": 1}, "invalid_envelope"),
        ({"action": "answer_from_documents", "arguments": "question"}, "arguments_not_object"),
        ({"action": "answer_from_documents", "arguments": {}}, "missing_argument"),
        ({"action": "answer_from_documents", "arguments": {"question": ""}}, "invalid_question"),
        ({"action": "answer_from_documents", "arguments": {"question": "a\x00b"}},
         "invalid_question"),
        ({"action": "answer_from_documents", "arguments": {"question": 7}}, "invalid_question"),
        ({"action": "answer_from_documents",
          "arguments": {"question": "q", "similarity_threshold": float("nan")}},
         "invalid_threshold"),
        ({"action": "answer_from_documents",
          "arguments": {"question": "q", "similarity_threshold": 1.5}}, "invalid_threshold"),
        ({"action": "answer_from_documents",
          "arguments": {"question": "q", "similarity_threshold": True}}, "invalid_threshold"),
        ({"action": "answer_from_documents", "arguments": {"question": "q", "top_k": 0}},
         "invalid_top_k"),
        ({"action": "answer_from_documents", "arguments": {"question": "q", "top_k": 2.0}},
         "invalid_top_k"),
        ({"action": "get_document_metadata", "arguments": {"document_id": "DOC-TLS"}},
         "document_id_not_in_message"),
        ({"action": "get_document_metadata", "arguments": {"document_id": "doc-tls"}},
         "invalid_document_id"),
    ],
)
def test_every_invalid_call_is_refused_before_the_function(
    store: Store, call: Any, code: str
) -> None:
    registry = default_registry()
    executor = ToolExecutor(registry)
    with recording(registry, *registry.names()) as recorders:
        state = ConversationState()
        state.begin_turn()
        outcome = executor.execute(call, context(store, state, "tell me about the TLS doc"))
        assert outcome.error_code == code
        assert outcome.status == "invalid_arguments"
        assert all(recorder.calls == [] for recorder in recorders.values())


def test_threshold_null_and_integers_are_accepted() -> None:
    parsed = AnswerArguments.model_validate({"question": "q", "similarity_threshold": None})
    assert parsed.similarity_threshold is None
    assert AnswerArguments.model_validate(
        {"question": "q", "similarity_threshold": 0}).similarity_threshold == 0


def test_metadata_of_a_known_id_named_in_the_message(store: Store) -> None:
    executor = ToolExecutor(default_registry())
    state = ConversationState()
    state.begin_turn()
    outcome = executor.execute({"action": "get_document_metadata",
                                "arguments": {"document_id": "DOC-INSTR"}},
                               context(store, state, "Kto jest właścicielem DOC-INSTR?"))
    assert outcome.status == "tool_completed" and outcome.data is not None
    assert outcome.data["version"] == "1.4"
    assert outcome.data["title"] == "Instrukcja zmiany konfiguracji DocAssist"


def test_tool_specs_come_from_the_argument_models() -> None:
    specs = {spec["name"]: spec for spec in default_registry().specs()}
    answer = specs["answer_from_documents"]["parameters"]
    assert answer["properties"] == AnswerArguments.model_json_schema()["properties"]
    assert answer["additionalProperties"] is False
    assert answer["required"] == ["question"]
    assert answer["properties"]["top_k"]["maximum"] == 5
    assert specs["show_last_sources"]["parameters"]["properties"] == {}
    assert specs["get_document_metadata"]["parameters"]["properties"]["document_id"]["pattern"]
    with pytest.raises(ToolValidationError):
        default_registry().get("get_document_metadata").validate(  # type: ignore[union-attr]
            {"document_id": "../../etc/passwd"}, None)  # type: ignore[arg-type]


def test_a_tool_enters_through_register_and_its_spec_follows() -> None:
    registry = default_registry()
    original = registry.get("show_last_sources")
    assert original is not None
    renamed = dataclasses.replace(original, name="list_sources", description="Lists them.")
    assert registry.register(renamed) is None  # a new tool
    assert registry.names()[-1] == "list_sources"
    assert registry.specs()[-1]["description"] == "Lists them."
    again = dataclasses.replace(renamed, description="Lists the sources.")
    assert registry.register(again) is renamed  # in place of the tool of that name
    assert [spec["description"] for spec in registry.specs()].count("Lists the sources.") == 1


def test_the_engines_tool_catalog_version_follows_a_registered_tool(
        engine: TurnEngine, registry: ToolRegistry) -> None:
    """The version is computed once per registry change, so a change must still show."""
    before = engine.tool_catalog_version
    assert before == tool_catalog_version(registry.specs())
    original = registry.get("show_last_sources")
    assert original is not None
    registry.register(dataclasses.replace(original, description="Lists them."))
    assert engine.tool_catalog_version == tool_catalog_version(registry.specs()) != before
