"""The rules selector: the embedded default, deterministic, Polish and English."""

from __future__ import annotations

import json

import pytest

from docassist.core.rules import RulesSelector
from docassist.core.selection import SelectionRequest, StateSummary, normalize, propose_action
from docassist.core.tools import default_registry


def decide(text: str, *, has_last_sources: bool = False, known: list[str] | None = None
           ) -> tuple[str, str | None, dict[str, object]]:
    request = SelectionRequest(
        message=text, standalone_question=text, history=[],
        state_summary=StateSummary(has_last_sources=has_last_sources,
                                   known_document_ids_in_message=known or []),
        tool_specs=default_registry().specs(), language="en")
    decision = normalize(propose_action(request, RulesSelector()))
    return decision.status, decision.action, decision.arguments


@pytest.mark.parametrize(
    ("asking_how", "asking_to_do"),
    [
        ("How do I restart docassist-api?", "Restart docassist-api now."),
        ("Jak zrestartować docassist-api?", "Zrestartuj docassist-api."),
        ("Czy mogę zrestartować docassist-api w godzinach pracy?",
         "Czy możesz zrestartować docassist-api?"),
        ("Can I restart docassist-worker during business hours?",
         "Can you restart docassist-worker?"),
        ("Should I delete the stuck jobs?", "Delete the stuck jobs."),
        ("Jak wysłać logi do administratora?", "Wyślij logi do administratora."),
        ("How do I run the config check?", "run `docassist-api --check-config`"),
        ("Jak zmienić timeout w konfiguracji?", "Zmień timeout w konfiguracji na 30 sekund."),
        ("How do I request prod access?", "Please grant me prod access."),
    ],
)
def test_one_verb_separates_a_procedure_question_from_a_request(
    asking_how: str, asking_to_do: str
) -> None:
    status, action, arguments = decide(asking_how)
    assert (status, action) == ("action_proposed", "answer_from_documents")
    assert arguments == {"question": asking_how}
    assert decide(asking_to_do)[0] == "rejected"


@pytest.mark.parametrize("text", ["show sources", "Pokaż źródła", "skąd to wiesz?",
                                  "Where did you get that from?", "sources pls"])
def test_sources_requests(text: str) -> None:
    assert decide(text, has_last_sources=True)[:2] == ("action_proposed", "show_last_sources")
    assert decide(text, has_last_sources=False)[0] == "clarification_needed"


def test_metadata_needs_a_known_id_from_the_current_message() -> None:
    assert decide("Kto jest właścicielem DOC-DB?", known=["DOC-DB"]) == (
        "action_proposed", "get_document_metadata", {"document_id": "DOC-DB"})
    assert decide("DOC-TLS", known=["DOC-TLS"])[2] == {"document_id": "DOC-TLS"}
    for text in ("Pokaż metadane dokumentu.", "metadata for DOC-PAYROLL",
                 "metadata of /etc/passwd", "who owns it?"):
        assert decide(text)[0] == "clarification_needed", text


@pytest.mark.parametrize("text", ["Narysuj wykres restartów z ostatniego tygodnia.",
                                  "Book a meeting room for tomorrow.",
                                  "Przetłumacz to na angielski.",
                                  "Translate the last answer into German."])
def test_unsupported_requests(text: str) -> None:
    assert decide(text)[0] == "no_suitable_tool"


def test_a_question_about_a_chart_is_still_a_procedure_question() -> None:
    assert decide("Jak odczytać wykres kolejki w panelu?")[1] == "answer_from_documents"


def test_output_is_exactly_the_four_keys() -> None:
    request = SelectionRequest(message="hi", standalone_question="hi", history=[],
                               state_summary=StateSummary(has_last_sources=False),
                               tool_specs=[], language="en")
    raw = RulesSelector().propose(request)
    assert set(json.loads(raw)) == {"decision", "action", "arguments", "message"}
