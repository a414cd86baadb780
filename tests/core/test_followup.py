"""The rule-based follow-up resolver (Polish and English)."""

from __future__ import annotations

import pytest

from docassist.core.documents import parse_document
from docassist.core.followup import SubjectVocabulary, resolve_follow_up
from docassist.core.i18n import Language
from docassist.core.state import HistoryMessage
from docassist.storage import Store

CONFIG_HISTORY = [
    HistoryMessage(role="user", content="Co zrobić po zmianie konfiguracji docassist-api?"),
    HistoryMessage(role="assistant", content="Instrukcja opisuje restart usługi docassist-api."),
]


@pytest.fixture
def vocabulary(store: Store) -> SubjectVocabulary:
    return SubjectVocabulary.from_catalog(store.documents())


def test_reference_present_and_missing(vocabulary: SubjectVocabulary) -> None:
    """Seed stage test: resolved with history naming the service, clarification without."""
    resolved = resolve_follow_up("Jak sprawdzić jej stan?", CONFIG_HISTORY, vocabulary, "pl")
    assert resolved.status == "resolved"
    assert resolved.standalone_question == "Jak sprawdzić stan usługi docassist-api?"
    assert resolved.history_used
    missing = resolve_follow_up("Jak sprawdzić jej stan?", [], vocabulary, "pl")
    assert missing.status == "clarification_needed"
    assert missing.standalone_question is None
    assert missing.reason == "missing_reference"


@pytest.mark.parametrize(
    ("text", "language", "history", "expected"),
    [
        ("stan to failed", "pl", "Zrestartowałem docassist-api.", "docassist-api ma stan failed"),
        ("co teraz?", "pl", "Zmieniłem konfigurację docassist-api.", "usługą docassist-api"),
        ("A co jeśli restart tej usługi się nie powiedzie?", "pl",
         "Jak zrestartować docassist-worker?", "restart usługi docassist-worker"),
        ("Jak ją zrestartować?", "pl", "Mam problem z docassist-gateway.",
         "zrestartować usługę docassist-gateway"),
        ("How do I check its status?", "en", "I changed the docassist-api config.",
         "the status of the docassist-api service"),
        ("what if that service doesn't come back up?", "en", "How do I restart docassist-worker?",
         "the docassist-worker service doesn't"),
        ("status is failed", "en", "I restarted docassist-api.", "docassist-api service is in"),
        ("what now?", "en", "I restored the database.", "the DocAssist database"),
        ("and if it still serves the old certificate, what now?", "en",
         "How do I reload docassist-gateway?", "if the docassist-gateway service still serves"),
        ("Jak sprawdzić jego datę ważności?", "pl", "Jak odnowić certyfikat TLS?",
         "datę certyfikatu TLS"),
    ],
)
def test_follow_ups_become_standalone_questions(
    vocabulary: SubjectVocabulary, text: str, language: Language, history: str, expected: str
) -> None:
    resolution = resolve_follow_up(
        text, [HistoryMessage(role="user", content=history),
               HistoryMessage(role="assistant", content="OK.")], vocabulary, language)
    assert resolution.status == "resolved"
    assert resolution.standalone_question is not None
    assert expected in resolution.standalone_question


def test_service_and_database_in_one_message_is_ambiguous(vocabulary: SubjectVocabulary) -> None:
    history = [HistoryMessage(role="user",
                              content="Po zmianie konfiguracji docassist-api odtworzyłem bazę "
                                      "danych z kopii."),
               HistoryMessage(role="assistant", content="Dobrze.")]
    resolution = resolve_follow_up("Jak sprawdzić jej stan?", history, vocabulary, "pl")
    assert resolution.status == "clarification_needed"
    assert resolution.reason == "ambiguous_reference"
    assert {subject.key for subject in resolution.options} == {"service:docassist-api",
                                                               "database"}


def test_the_most_recent_subject_wins_across_exchanges(vocabulary: SubjectVocabulary) -> None:
    history = [
        HistoryMessage(role="user", content="Jak odnowić certyfikat TLS?"),
        HistoryMessage(role="assistant", content="Zgodnie z DOC-TLS…"),
        HistoryMessage(role="user", content="A jak zrestartować usługę docassist-api?"),
        HistoryMessage(role="assistant", content="Poleceniem systemctl."),
    ]
    resolution = resolve_follow_up("jak sprawdzić jej stan?", history, vocabulary, "pl")
    assert resolution.standalone_question == "jak sprawdzić stan usługi docassist-api?"


def test_the_users_words_come_before_the_answers(vocabulary: SubjectVocabulary) -> None:
    history = [
        HistoryMessage(role="user", content="I changed the docassist-api config."),
        HistoryMessage(role="assistant", content="Back up the database and the TLS certificate."),
    ]
    resolution = resolve_follow_up("How do I check its status?", history, vocabulary, "en")
    assert resolution.status == "resolved"
    assert "docassist-api" in (resolution.standalone_question or "")


@pytest.mark.parametrize(
    "text",
    [
        "A node is not ready — how do I diagnose it?",
        "How do I check the status of docassist-worker?",
        "The database backup failed, how do I restore it?",
        "Jak sprawdzić stan usługi docassist-api?",
        "Ile trwa zatwierdzenie wniosku o dostęp i kto go zatwierdza?",
    ],
)
def test_messages_that_name_their_own_subject_are_not_follow_ups(
    vocabulary: SubjectVocabulary, text: str
) -> None:
    resolution = resolve_follow_up(text, CONFIG_HISTORY, vocabulary, "en")
    assert resolution.status == "unchanged"
    assert resolution.standalone_question == text


def test_history_is_bounded_to_three_exchanges(vocabulary: SubjectVocabulary) -> None:
    old = [HistoryMessage(role="user", content="Jak zrestartować docassist-worker?"),
           HistoryMessage(role="assistant", content="…")]
    filler = [HistoryMessage(role=role, content="Dziękuję.")  # type: ignore[arg-type]
              for _ in range(3) for role in ("user", "assistant")]
    resolution = resolve_follow_up("Jak sprawdzić jej stan?", old + filler, vocabulary, "pl")
    assert resolution.status == "clarification_needed"  # the subject fell out of the window


def test_subject_vocabulary_comes_from_the_catalog() -> None:
    parsed = parse_document(
        "billing.md", "billing",
        "---\nid: DOC-BILL\n---\n# Billing\n## Restart\nRestart the service billing-api with "
        "`systemctl restart billing-api`.\n")
    assert parsed.info.services == ["billing-api"]
    vocabulary = SubjectVocabulary.from_catalog([parsed.info])
    resolution = resolve_follow_up(
        "How do I check its status?",
        [HistoryMessage(role="user", content="I restarted billing-api."),
         HistoryMessage(role="assistant", content="OK.")],
        vocabulary, "en")
    assert resolution.standalone_question == "How do I check the status of the billing-api service?"
