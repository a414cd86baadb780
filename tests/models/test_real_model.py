"""A real small model (SmolLM2-135M on llama.cpp's server) through our `openai` backend.

Plumbing, not accuracy: the constrained selection parses and normalizes, the selector
prompt carries the bank's nearest labelled examples, an answer streams.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from docassist.core.examples import EXAMPLES_SHOWN, BankExamples
from docassist.core.selection import (
    PROPOSAL_KEYS,
    SelectionRequest,
    StateSummary,
    normalize,
    propose_action,
    selector_catalog_version,
    tool_catalog_version,
)
from docassist.core.tools import default_registry
from docassist.models.adapters import ModelAnswerer, ModelSelector
from docassist.models.embedders import get_embedder
from docassist.models.openai import OpenAIModel
from docassist.models.replay import ReplayModel
from docassist.storage import Store
from docassist_testkit.fakes.llama_server import llama_server

pytestmark = pytest.mark.real_model


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OpenAIModel]:
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with llama_server(log) as base, httpx.Client(timeout=120) as client:
        # Small limits keep the test quick on two cores; this checks plumbing, not quality.
        yield OpenAIModel("smollm2", client, base_url=f"{base}/v1", answer_max_tokens=24,
                          selection_max_tokens=160)


@pytest.mark.parametrize("text", ["How do I renew the TLS certificate?", "pokaż źródła"])
def test_constrained_selection_parses_and_normalizes(model: OpenAIModel, text: str) -> None:
    request = SelectionRequest(
        message=text, standalone_question=text, history=[],
        state_summary=StateSummary(has_last_sources=False),
        tool_specs=default_registry().specs(), language="en")
    selection = propose_action(request, ModelSelector(model))
    assert selection.parse_error is None, selection.raw_response
    assert isinstance(selection.proposal, dict) and set(selection.proposal) == PROPOSAL_KEYS
    assert selection.proposal["decision"] in (
        "tool_call", "clarification_needed", "no_suitable_tool", "rejected")
    assert normalize(selection).status in (
        "action_proposed", "clarification_needed", "no_suitable_tool", "rejected",
        "parse_error")  # a schema-valid but inconsistent proposal is still caught


def test_the_prompt_carries_the_nearest_bank_examples(model: OpenAIModel,
                                                      tmp_path: Path) -> None:
    """What the model is sent, as our own recorder writes it: the labelled bank messages
    nearest to this one, with their kinds and decisions; and the catalog version (on every
    trace row) names the example bank it was shown."""
    examples = BankExamples(lambda: get_embedder("use"))
    recorded = ReplayModel(tmp_path / "session.jsonl", inner=model)
    selector = ModelSelector(recorded, examples)
    text = "where did you get that from?"
    request = SelectionRequest(
        message=text, standalone_question=text, history=[],
        state_summary=StateSummary(has_last_sources=True),
        tool_specs=default_registry().specs(), language="en")
    selection = propose_action(request, selector)
    assert selection.parse_error is None, selection.raw_response
    [entry] = [json.loads(line) for line in (tmp_path / "session.jsonl").read_text().splitlines()]
    sent = entry["request"]["payload"]["messages"][-1]["content"]
    shown = json.loads(sent.split("DATA:\n", 1)[1])["labelled_examples"]
    nearest = examples.nearest(request)
    assert len(shown) == EXAMPLES_SHOWN
    assert shown == [example.model_dump() for example in nearest]
    assert sum(e["kind"] in ("sources", "sources_without_answer") for e in shown) >= 4
    specs = default_registry().specs()
    assert selector_catalog_version(specs, selector) == tool_catalog_version(
        specs, examples.version) != tool_catalog_version(specs)


def test_an_answer_streams(model: OpenAIModel, store: Store) -> None:
    from docassist.storage import Bm25Retriever

    hits = Bm25Retriever(store).search("How do I renew the TLS certificate?", 2)
    deltas = list(ModelAnswerer(model).compose_stream(
        "How do I renew the TLS certificate?", hits, "en"))
    assert len(deltas) > 1
    assert "".join(deltas).strip()
