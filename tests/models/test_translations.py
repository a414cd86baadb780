"""A model selector may add the question in the documents' languages; each phrasing is searched
and the rankings fused. Driven over loopback HTTP: the model server stands in for the model."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from docassist.core.documents import parse_document
from docassist.core.extractive import ExtractiveAnswerer
from docassist.core.retrieval import TranslatedSearch
from docassist.core.tools import default_registry
from docassist.core.turn import EngineOptions, TurnEngine
from docassist.models.adapters import ModelSelector
from docassist.models.base import RetryPolicy
from docassist.models.openai import OpenAIModel
from docassist.storage import Bm25Retriever, Store
from docassist_testkit.fakes.model_server import ModelServer, Reply, openai_chat, proposal
from tests.helpers import message, recording

CHAT = "/v1/chat/completions"
QUESTION = "Jak usunąć kamień z czajnika?"
ENGLISH = "How do I remove limescale from the kettle?"
PAGES = {"kettle": "## Descaling the kettle\nBoil vinegar in the kettle to remove limescale.\n",
         "teapot": "## Warming the teapot\nRinse the teapot with hot water before brewing.\n"}


@pytest.fixture
def english_store(tmp_path: Path) -> Iterator[Store]:
    store = Store(tmp_path / "en.db")
    for name, text in PAGES.items():
        store.replace_document(parse_document(f"{name}.md", name, text), f"/docs/{name}.md")
    yield store
    store.close()


@pytest.fixture
def selector() -> Iterator[tuple[ModelSelector, ModelServer]]:
    with ModelServer() as server, httpx.Client(timeout=2.0) as client:
        model = OpenAIModel("gpt-test", client, base_url=f"{server.url}/v1", api_key="sk-x",
                            policy=RetryPolicy(attempts=1, backoff_seconds=0.01))
        yield ModelSelector(model), server


def _engine(store: Store, selector: ModelSelector) -> TurnEngine:
    return TurnEngine(store=store, catalog=store, retriever=Bm25Retriever(store),
                      selector=selector, answerer=ExtractiveAnswerer(),
                      registry=default_registry(translations=True), options=EngineOptions())


def test_translations_find_pages_in_another_language_and_are_traced_as_hashes(
    english_store: Store, selector: tuple[ModelSelector, ModelServer]
) -> None:
    model, server = selector
    engine = _engine(english_store, model)
    server.script(CHAT, openai_chat(proposal("tool_call", "answer_from_documents",
                                             {"question": QUESTION})))
    server.script(CHAT, openai_chat(proposal("tool_call", "answer_from_documents",
                                             {"question": QUESTION, "translations": [ENGLISH]})))
    server.always(CHAT, Reply(status=599))
    alone = engine.handle(message(QUESTION, thread="t1"))
    assert alone is not None and alone.status == "no_answer"  # Polish words: no English page
    both = engine.handle(message(QUESTION, thread="t2"))
    assert both is not None and both.status == "answered"
    assert both.sources[0].document_id == "DOC-KETTLE"
    _, user = server.bodies(CHAT)[0]["messages"]
    [spec] = [spec for spec in json.loads(user["content"].removeprefix("DATA:"))["tool_specs"]
              if spec["name"] == "answer_from_documents"]
    translations = spec["parameters"]["properties"]["translations"]
    assert translations["maxItems"] == 3 and "other languages" in translations["description"]
    _, row = english_store.tool_calls()
    arguments = json.loads(row["arguments"])
    assert arguments["translations"] == [{"sha256": arguments["translations"][0]["sha256"]}]
    assert ENGLISH not in row["arguments"] and QUESTION not in row["arguments"]
    assert english_store.turns()[-1]["retriever"] == "bm25+translations"


@pytest.mark.parametrize("translations", [["a", "b", "c", "d"], [""], "How?", [7]])
def test_bad_translations_are_invalid_arguments_and_nothing_runs(
    english_store: Store, selector: tuple[ModelSelector, ModelServer], translations: object
) -> None:
    model, server = selector
    engine = _engine(english_store, model)
    server.script(CHAT, openai_chat(proposal("tool_call", "answer_from_documents",
                                             {"question": QUESTION,
                                              "translations": translations})))
    with recording(engine.registry, "answer_from_documents") as recorders:
        result = engine.handle(message(QUESTION))
    assert result is not None and result.status == "tool_error"
    assert "niepoprawne argumenty (invalid_translations)" in result.answer  # asked in Polish
    assert recorders["answer_from_documents"].calls == []
    [row] = english_store.tool_calls()
    assert (row["status"], row["error_code"]) == ("invalid_arguments", "invalid_translations")
    [turn] = english_store.turns()
    assert (turn["status"], turn["tool_status"]) == ("tool_error", "invalid_arguments")


def test_every_phrasing_votes_and_the_best_score_is_kept(english_store: Store) -> None:
    bm25 = Bm25Retriever(english_store)
    search = TranslatedSearch(bm25, ["teapot hot water", "kettle limescale vinegar"])
    hits = search.search("kettle teapot", 2)
    assert {hit.document.document_id for hit in hits} == {"DOC-KETTLE", "DOC-TEAPOT"}
    assert all(hit.score == 1.0 for hit in hits)  # each fully matched by one phrasing
    assert search.name == "bm25+translations"
    assert search.default_threshold == bm25.default_threshold


def test_only_a_model_selector_is_offered_translations() -> None:
    """The rules selector never writes them; its tool catalog (and catalog version) is the
    one it had."""
    plain = {spec["name"]: spec for spec in default_registry().specs()}
    offered = {spec["name"]: spec for spec in default_registry(translations=True).specs()}
    assert "translations" not in plain["answer_from_documents"]["parameters"]["properties"]
    assert "translations" in offered["answer_from_documents"]["parameters"]["properties"]
    assert plain["show_last_sources"] == offered["show_last_sources"]
