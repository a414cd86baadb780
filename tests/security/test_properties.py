"""Property-based tests: no input crashes the guards, nothing invalid passes them."""

from __future__ import annotations

import json
import math
import unicodedata
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from docassist.core.documents import is_document_id
from docassist.core.errors import ToolError
from docassist.core.limits import MAX_MESSAGE_CHARS, MAX_TOP_K
from docassist.core.messages import InvalidMessage, validate_message
from docassist.core.selection import PROPOSAL_KEYS, Selection, normalize, parse_strict
from docassist.core.tools import AnswerArguments, MetadataArguments, default_registry

# CI keeps these fast; locally `--hypothesis-profile=thorough` digs deeper.
settings.register_profile("ci", max_examples=150, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=2000, deadline=None)
settings.load_profile("ci")

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12)


@given(st.one_of(st.text(), st.binary(), st.integers(), st.none(), json_values))
def test_message_validation_never_crashes_and_never_lets_bad_text_through(value: Any) -> None:
    try:
        text = validate_message(value)
    except InvalidMessage as problem:
        assert problem.problem in ("empty_message", "message_too_long", "invalid_message")
        return
    assert isinstance(value, str) and text == value.strip() and text
    assert len(text) <= MAX_MESSAGE_CHARS
    assert not any(unicodedata.category(c) in ("Cc", "Cs") and c not in "\n\t\r" for c in text)


@given(st.text(max_size=300))
def test_strict_parser_accepts_only_one_clean_json_value(raw: str) -> None:
    value, error = parse_strict(raw)
    if error is None:
        assert json.loads(raw) == value or value != value  # parsed exactly, nothing repaired


@given(st.dictionaries(st.sampled_from([*PROPOSAL_KEYS, "extra"]), json_values, max_size=5))
def test_normalizer_never_crashes_and_action_needs_a_consistent_proposal(
    proposal: dict[str, Any]
) -> None:
    selection = Selection(raw_response="", proposal=proposal, parse_error=None, prompt="",
                          prompt_sha256="", backend="t", model="t", duration_ms=0)
    decision = normalize(selection)
    if decision.status == "action_proposed":
        assert set(proposal) == PROPOSAL_KEYS and proposal["decision"] == "tool_call"
        assert isinstance(proposal["action"], str) and proposal["message"] is None
    elif decision.status != "parse_error":
        assert decision.action is None and decision.arguments == {} and decision.message


@given(st.dictionaries(st.sampled_from(["question", "top_k", "similarity_threshold", "cmd"]),
                       json_values, max_size=4))
def test_answer_arguments_admit_only_valid_values(arguments: dict[str, Any]) -> None:
    tool = default_registry().get("answer_from_documents")
    assert tool is not None
    try:
        parsed: AnswerArguments = tool.validate(arguments, None)  # type: ignore[arg-type]
    except ToolError:
        return
    assert set(arguments) <= {"question", "top_k", "similarity_threshold"}
    assert type(parsed.top_k) is int and 1 <= parsed.top_k <= MAX_TOP_K
    threshold = parsed.similarity_threshold
    assert threshold is None or (math.isfinite(threshold) and -1 <= threshold <= 1)
    assert parsed.question.strip() == parsed.question and parsed.question


@given(st.one_of(st.text(max_size=80), json_values))
def test_document_ids_are_never_paths(value: Any) -> None:
    try:
        parsed = MetadataArguments.model_validate({"document_id": value})
    except ValueError:
        return
    assert is_document_id(parsed.document_id)
    assert not any(c in parsed.document_id for c in "/\\. ")
