"""Whole turns through the engine with a real SQLite store."""

from __future__ import annotations

import json
import threading

import pytest

from docassist.core import i18n
from docassist.core.documents import CITATION
from docassist.core.limits import MAX_MESSAGE_CHARS
from docassist.core.messages import Command
from docassist.core.replies import LISTED_DOCUMENTS
from docassist.core.tools import ToolRegistry
from docassist.core.turn import TurnEngine
from docassist.storage import Store
from docassist_testkit.fakes.model_server import proposal
from tests.conftest import EngineFactory
from tests.helpers import MODEL_DOWN, ScriptedSelector, key, message, recording, swapped


def test_four_turn_dialogue_and_sources_of_the_right_turn(engine: TurnEngine,
                                                          store: Store) -> None:
    first = engine.handle(message("Co zrobić po zmianie konfiguracji docassist-api?"))
    second = engine.handle(message("Jak sprawdzić jej stan?"))
    third = engine.handle(message("stan to failed"))
    fourth = engine.handle(message("pokaż źródła"))
    assert first and second and third and fourth
    assert [r.status for r in (first, second, third, fourth)] == [
        "answered", "answered", "answered", "sources_shown"]
    # The resolver's rewrite, searched with the thread's last question beside it (issue 41).
    assert second.conversation.standalone_question == (
        "Jak sprawdzić stan usługi docassist-api? (Co zrobić po zmianie konfiguracji "
        "docassist-api?)")
    assert third.conversation.resolution_status == "resolved"
    assert "docassist-api" in (third.conversation.standalone_question or "")
    assert third.language == "pl"  # "stan to failed" alone says little; the thread is Polish
    # Turns 1-3 ran a new RAG; turn 4 showed the sources of turn 3, not a fresh search.
    rows = store.tool_calls()
    assert [row["tool_name"] for row in rows] == ["answer_from_documents"] * 3 + [
        "show_last_sources"]
    assert fourth.source_turn_id == third.turn_id == 3
    assert [s.chunk_id for s in fourth.sources] == [s.chunk_id for s in third.sources]
    assert any("failed" in s.section for s in third.sources)
    state = store.load(key()).state
    assert state.last_source_turn_id == 3 and state.last_source_result_id == third.result_id
    assert len(state.history) == 6  # bounded to three exchanges
    turns = store.turns(first.conversation_id)
    assert [t["turn_id"] for t in turns] == [1, 2, 3, 4]
    assert json.loads(turns[3]["source_ids"]) == [s.chunk_id for s in third.sources]

    cleared = engine.handle(message("/clear", command=Command.CLEAR))
    assert cleared and cleared.status == "cleared"
    again = engine.handle(message("Jak sprawdzić jej stan?"))
    assert again and again.status == "clarification_needed"
    assert (again.generation, again.turn_id) == (1, 1)  # new generation, turn ids restart
    sources = engine.handle(message("pokaż źródła"))
    assert sources and sources.status == "clarification_needed"
    assert sources.clarification and sources.clarification.missing_field == "last_sources"
    assert len(store.turns(first.conversation_id)) == 7  # traces remain after a clear


def test_citations_in_answers_belong_to_the_retrieved_chunks(engine: TurnEngine) -> None:
    result = engine.handle(message("How do I renew the TLS certificate?"))
    assert result and result.status == "answered"
    cited = {part.split("]")[0] for part in result.answer.split("[")[1:]}
    assert cited and cited <= {s.chunk_id for s in result.sources}
    assert all(s.document_id == "DOC-TLS" for s in result.sources[:1])
    assert result.sources[0].url == "https://intranet.example.com/docs/DOC-TLS"


def test_clarification_completed_by_the_missing_subject(engine: TurnEngine) -> None:
    asked = engine.handle(message("How do I check its status?"))
    assert asked and asked.status == "clarification_needed"
    assert asked.clarification and asked.clarification.missing_field == "subject"
    done = engine.handle(message("the docassist-worker service"))
    assert done and done.status == "answered"
    assert done.decision.decided_by == "pending"
    assert done.conversation.standalone_question == (
        "How do I check the status of the docassist-worker service?")


def test_clarification_completed_by_a_document_id(engine: TurnEngine, store: Store) -> None:
    asked = engine.handle(message("Pokaż metadane dokumentu."))
    assert asked and asked.status == "clarification_needed"
    assert "DOC-INSTR" in asked.answer  # the question lists the known ids
    done = engine.handle(message("DOC-TLS"))
    assert done and done.status == "metadata_shown"
    assert done.metadata and done.metadata["document_id"] == "DOC-TLS"
    assert store.load(key()).state.pending_clarification is None


def test_ambiguous_reference_offers_the_options(engine: TurnEngine) -> None:
    engine.handle(message("Po zmianie konfiguracji docassist-api odtworzyłem bazę danych."))
    asked = engine.handle(message("Jak sprawdzić jej stan?"))
    assert asked and asked.status == "clarification_needed"
    assert "usługa docassist-api" in asked.answer and "baza danych" in asked.answer
    done = engine.handle(message("baza danych"))
    assert done and done.status == "answered"
    assert "bazy danych" in (done.conversation.standalone_question or "")


def test_two_clarifications_without_progress_hand_off(engine: TurnEngine, store: Store) -> None:
    statuses = [r.status for r in (engine.handle(message(t))
                                   for t in ("Jak sprawdzić jej stan?", "nie wiem", "hmm")) if r]
    assert statuses == ["clarification_needed", "clarification_needed", "handoff"]
    assert store.load(key()).state.pending_clarification is None
    assert store.tool_calls() == []


def test_unknown_ids_after_which_document_count_as_no_progress(engine: TurnEngine) -> None:
    statuses = [r.status for r in (engine.handle(message(t)) for t in (
        "Pokaż metadane dokumentu.", "DOC-NOPE", "DOC-NADAL-NIE")) if r]
    assert statuses == ["clarification_needed", "clarification_needed", "handoff"]


def test_a_new_question_drops_the_pending_clarification(engine: TurnEngine,
                                                        store: Store) -> None:
    engine.handle(message("Jak sprawdzić jej stan?"))
    new = engine.handle(message("How do I renew the TLS certificate?"))
    assert new and new.status == "answered" and new.decision.decided_by == "selector"
    assert store.load(key()).state.pending_clarification is None


def test_new_search_does_not_need_previous_sources(engine: TurnEngine) -> None:
    result = engine.handle(message("How do I report an incident?"))
    assert result and result.status in ("answered", "no_answer")
    assert result.tool.status == "tool_completed"


def test_no_answer_says_so_and_names_the_closest_documents(engine: TurnEngine,
                                                           store: Store) -> None:
    # A work question the documents do not cover (general trivia is chit-chat, not searched).
    result = engine.handle(message("What is the dress code for client visits?"))
    assert result and result.status == "no_answer"
    assert result.answer.startswith("I didn't find this in the documents.")
    assert result.sources == []
    state = store.load(key()).state
    assert state.last_result is not None and state.last_result.status == "no_answer"
    assert state.last_sources == []  # replaced, also when empty
    sources = engine.handle(message("show sources"))
    assert sources and sources.status == "clarification_needed"
    assert sources.answer.startswith("The previous search (turn 1) found no passages")


def test_duplicate_event_is_answered_once(engine: TurnEngine, store: Store) -> None:
    first = engine.handle(message("How do I renew TLS?", event_id="Ev1"))
    second = engine.handle(message("How do I renew TLS?", event_id="Ev1"))
    assert first is not None and second is None
    assert len(store.turns()) == 1


def test_state_survives_a_new_store_on_the_same_file(make_engine: EngineFactory, store: Store,
                                                     db_path: object) -> None:
    make_engine().handle(message("Co zrobić po zmianie konfiguracji docassist-api?"))
    reopened = Store(store.path)
    try:
        state = reopened.load(key()).state
        assert state.next_turn_id == 2 and state.last_source_turn_id == 1
        assert state.history[0].content == "Co zrobić po zmianie konfiguracji docassist-api?"
    finally:
        reopened.close()


def test_turns_of_one_conversation_are_serialized(engine: TurnEngine, store: Store) -> None:
    questions = [f"How do I renew the TLS certificate, take {i}?" for i in range(8)]
    threads = [threading.Thread(target=engine.handle, args=(message(q, thread="same"),))
               for q in questions]
    others = [threading.Thread(target=engine.handle, args=(message(q, thread=f"o{i}"),))
              for i, q in enumerate(questions)]
    for thread in threads + others:
        thread.start()
    for thread in threads + others:
        thread.join()
    same = store.turns(key("same").conversation_id)
    assert sorted(t["turn_id"] for t in same) == list(range(1, 9))
    assert store.load(key("same")).version == 8
    assert len(store.turns()) == 16


def test_version_check_across_two_stores_loses_no_turn(make_engine: EngineFactory,
                                                       store: Store) -> None:
    from docassist.core.extractive import ExtractiveAnswerer
    from docassist.core.tools import default_registry
    from docassist.storage import Bm25Retriever
    from tests.helpers import rules_selector

    second_store = Store(store.path)
    try:
        other = TurnEngine(store=second_store, catalog=second_store,
                           retriever=Bm25Retriever(second_store), selector=rules_selector(),
                           answerer=ExtractiveAnswerer(), registry=default_registry())
        engines = [make_engine(), other]
        threads = [threading.Thread(target=engines[i % 2].handle,
                                    args=(message(f"How do I renew TLS {i}?", thread="x"),))
                   for i in range(10)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sorted(t["turn_id"] for t in store.turns()) == list(range(1, 11))
        assert store.load(key("x")).state.next_turn_id == 11
    finally:
        second_store.close()


# --- error paths: the message the user sees, the trace row, and that no tool ran ----------


@pytest.mark.parametrize(
    ("text", "status", "fragment"),
    [
        ("", "empty_message", "empty"),
        ("   ", "empty_message", "empty"),
        ("x" * (MAX_MESSAGE_CHARS + 1), "message_too_long", f"limit {MAX_MESSAGE_CHARS}"),
        ("Jak\x07 zrestartować?", "invalid_message", "bez znaków sterujących"),
        (None, "invalid_message", "must be text"),
        ({"text": "hi"}, "invalid_message", "must be text"),
    ],
)
def test_invalid_messages_get_a_clear_reply_and_no_history(
    engine: TurnEngine, store: Store, registry: ToolRegistry, text: object, status: str,
    fragment: str
) -> None:
    with recording(registry, *registry.names()) as recorders:
        result = engine.handle(message(text))
    assert result and result.status == status
    assert fragment in result.answer
    assert all(r.calls == [] for r in recorders.values())
    assert store.tool_calls() == []
    [row] = store.turns()
    assert (row["status"], row["decision_status"], row["tool_status"]) == (status, None, None)
    assert store.load(key()).state.history == []


@pytest.mark.parametrize(
    ("raw", "status", "tool_status", "code", "fragment"),
    [
        ('```json\n{"decision": "rejected"}\n```', "parse_error", None, "parse_error",
         "nothing was done"),
        (proposal("tool_call", "show_last_sources", {}, "and a message"), "parse_error", None,
         None, "nothing was done"),
        (proposal("tool_call", "format_disk", {}), "tool_error", "unknown_tool", "unknown_tool",
         "unknown action"),
        (proposal("tool_call", "answer_from_documents", {"question": "q", "top_k": True}),
         "tool_error", "invalid_arguments", "invalid_top_k", "invalid arguments"),
        (proposal("tool_call", "get_document_metadata", {"document_id": "/etc/passwd"}),
         "clarification_needed", "invalid_arguments", "invalid_document_id", "Known documents"),
        (proposal("tool_call", "get_document_metadata", {"document_id": "DOC-TLS"}),
         "clarification_needed", "invalid_arguments", "document_id_not_in_message",
         "Known documents"),
        (proposal("tool_call", "show_last_sources", {}), "clarification_needed",
         "clarification_needed", "no_last_sources", "no sources"),
        (proposal("rejected", message="No."), "rejected", None, None, "don't perform"),
        (proposal("no_suitable_tool", message="No."), "no_suitable_tool", None, None,
         "no tool"),
    ],
)
def test_bad_or_refused_proposals_run_no_tool(
    make_engine: EngineFactory, store: Store, registry: ToolRegistry, raw: str, status: str,
    tool_status: str | None, code: str | None, fragment: str
) -> None:
    engine = make_engine(ScriptedSelector(raw))
    with recording(registry, *registry.names()) as recorders:
        result = engine.handle(message("Please handle the docassist-api thing for me"))
    assert result and result.status == status
    assert fragment in result.answer
    assert all(r.calls == [] for r in recorders.values())
    [row] = store.turns()
    assert (row["status"], row["tool_status"], row["error_code"]) == (status, tool_status, code)
    assert len(store.tool_calls()) == (0 if tool_status is None else 1)
    assert row["backend"] == "scripted"


def test_tool_exception_is_a_clear_error_and_a_trace_row(
    make_engine: EngineFactory, store: Store, registry: ToolRegistry
) -> None:
    def broken(_arguments: object, _context: object) -> dict[str, object]:
        raise RuntimeError("index unavailable")

    with swapped(registry, "answer_from_documents", broken):
        result = make_engine().handle(message("How do I renew TLS?"))
    assert result and result.status == "tool_error"
    assert "went wrong" in result.answer and "tool_execution_failed" in result.answer
    [row] = store.tool_calls()
    assert (row["status"], row["error_code"]) == ("tool_error", "tool_execution_failed")
    assert store.load(key()).state.last_result is None  # a failed search is not a RAG


def test_model_down_hands_off_without_running_a_tool(
    make_engine: EngineFactory, store: Store, registry: ToolRegistry
) -> None:
    engine = make_engine(ScriptedSelector(MODEL_DOWN), human_channel="#ops-humans")
    with recording(registry, *registry.names()) as recorders:
        result = engine.handle(message("How do I renew TLS?"))
    assert result and result.status == "handoff"
    assert "#ops-humans" in result.answer
    assert all(r.calls == [] for r in recorders.values())
    [row] = store.turns()
    assert (row["status"], row["decision_status"], row["decision_reason"]) == (
        "handoff", "handoff", "model_unavailable")


def test_a_button_press_without_words_runs_its_command(engine: TurnEngine) -> None:
    engine.handle(message("How do I renew the TLS certificate?"))
    shown = engine.handle(message("", command=Command.SHOW_SOURCES))
    assert shown and shown.status == "sources_shown" and shown.source_turn_id == 1
    engine.handle(message("Jak odnowić certyfikat TLS?", thread="pl"))
    polish = engine.handle(message("/sources", thread="pl", command=Command.SHOW_SOURCES))
    assert polish and polish.language == "pl"  # the thread's language, not the command's
    cleared = engine.handle(message(None, command=Command.CLEAR))
    assert cleared and cleared.status == "cleared"


def test_shown_sources_put_the_quoted_sections_first_and_the_rest_apart(
        engine: TurnEngine) -> None:
    answered = engine.handle(message("How do I report an incident?"))
    assert answered and answered.status == "answered"
    quoted = list(dict.fromkeys(CITATION.findall(answered.answer)))
    shown = engine.handle(message("/sources", command=Command.SHOW_SOURCES))
    assert shown and shown.status == "sources_shown"
    lines = shown.answer.splitlines()
    apart = lines.index(i18n.text("sources_also_given", "en"))  # some were not quoted
    listed = [line.split("]")[0].removeprefix("• [") for line in lines]
    assert set(listed[1:apart]) == set(quoted)
    rest = set(listed[apart + 1:])
    assert rest and not rest & set(quoted)
    assert set(listed[1:apart]) | rest == {source.chunk_id for source in shown.sources}


def test_selector_sees_the_state_summary_and_standalone_question(
    make_engine: EngineFactory
) -> None:
    selector = ScriptedSelector(proposal("tool_call", "answer_from_documents",
                                         {"question": "Co po zmianie konfiguracji?"}),
                                proposal("tool_call", "get_document_metadata",
                                         {"document_id": "DOC-INSTR"}))
    engine = make_engine(selector)
    engine.handle(message("Co zrobić po zmianie konfiguracji docassist-api?"))
    result = engine.handle(message("Jak sprawdzić jej stan? Metadane DOC-INSTR i DOC-NOPE"))
    request = selector.requests[1]
    assert request.state_summary.has_last_sources is True
    assert request.state_summary.known_document_ids_in_message == ["DOC-INSTR"]
    assert request.state_summary.unknown_document_ids_in_message == ["DOC-NOPE"]
    assert result and result.status == "metadata_shown"


def test_traces_hold_hashes_not_text_unless_save_raw(make_engine: EngineFactory,
                                                     store: Store) -> None:
    make_engine().handle(message("How do I renew the TLS certificate?"))
    make_engine(save_raw=True).handle(message("How do I renew the TLS certificate?",
                                              thread="raw"))
    private, raw = store.turns()
    assert "renew" not in json.dumps(private)
    assert private["raw"] is None and len(private["question_sha256"]) == 64
    assert json.loads(raw["raw"])["question"] == "How do I renew the TLS certificate?"
    assert private["catalog_version"] and private["catalog_version"] == raw["catalog_version"]


def test_a_turn_that_dies_midway_leaves_its_event_to_run_again(
    make_engine: EngineFactory, store: Store
) -> None:
    crashing = make_engine(ScriptedSelector(RuntimeError("process killed")))
    with pytest.raises(RuntimeError):
        crashing.handle(message("How do I renew TLS?", event_id="Ev-crash"))
    assert store.turns() == [] and not store.event_seen("test", "Ev-crash")
    resumed = make_engine().handle(message("How do I renew TLS?", event_id="Ev-crash"))
    assert resumed and resumed.status == "answered"
    assert make_engine().handle(message("How do I renew TLS?", event_id="Ev-crash")) is None
    assert len(store.turns()) == 1


def test_a_known_id_the_message_did_not_name_is_asked_for_not_called_unknown(
        make_engine: EngineFactory, store: Store, registry: ToolRegistry) -> None:
    """Issue 39: the reply said "I don't know the document DOC-TLS. Known documents: …,
    DOC-TLS" when a model proposed a real id the user had not written."""
    engine = make_engine(ScriptedSelector(proposal(
        "tool_call", "get_document_metadata", {"document_id": "DOC-TLS"})))
    with recording(registry, *registry.names()) as recorders:
        result = engine.handle(message("Who owns that document?"))
    assert result is not None and result.status == "clarification_needed"
    assert result.answer.startswith("Which document? Give its id. Known documents")
    assert "don't know" not in result.answer
    assert all(recorder.calls == [] for recorder in recorders.values())
    [row] = store.turns()
    assert (row["status"], row["tool_status"], row["error_code"]) == (
        "clarification_needed", "invalid_arguments", "document_id_not_in_message")


def test_which_document_names_the_closest_titles_not_the_whole_catalog(
        make_engine: EngineFactory, store: Store, registry: ToolRegistry) -> None:
    """A newcomer asked about a document by its title over a real handbook and got every one
    of its 74 ids, with buttons for the first ten alphabetically (DOC-TLS not among them)."""
    engine = make_engine()
    with recording(registry, *registry.names()) as recorders:
        result = engine.handle(message("Who owns the TLS certificate renewal document?"))
    assert result is not None and result.status == "clarification_needed"
    catalog = store.documents()
    assert len(catalog) > LISTED_DOCUMENTS
    tls = next(document for document in catalog if document.document_id == "DOC-TLS")
    assert result.answer.startswith("Which document? Give its id. Known documents, closest to "
                                    f"your words first: DOC-TLS: {tls.title}; ")
    assert result.answer.endswith(f" and {len(catalog) - LISTED_DOCUMENTS} more.")
    assert result.answer.count("DOC-") == LISTED_DOCUMENTS
    assert result.clarification is not None
    assert result.clarification.choices[0].reply == "DOC-TLS"
    assert len(result.clarification.choices) == LISTED_DOCUMENTS
    assert all(recorder.calls == [] for recorder in recorders.values())
    [row] = store.turns()
    assert (row["status"], row["tool_status"]) == ("clarification_needed", None)  # no tool ran
