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


def test_the_pronoun_picks_the_feminine_service_over_the_certificate(
        vocabulary: SubjectVocabulary) -> None:
    """Both exchanges name a candidate; "jej" (feminine) agrees only with "usługa"."""
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
    filler = [HistoryMessage(role=role, content="Dziękuję.")
              for _ in range(3) for role in ("user", "assistant")]
    resolution = resolve_follow_up("Jak sprawdzić jej stan?", old + filler, vocabulary, "pl")
    assert resolution.status == "clarification_needed"  # the subject fell out of the window


def test_subject_vocabulary_comes_from_the_catalog() -> None:
    parsed = parse_document(
        "billing.md", "billing",
        "---\nid: DOC-BILL\n---\n# Billing\n## Restart\nRestart the service billing-api with "
        "`systemctl restart billing-api`.\n")
    assert parsed.info.services == ["billing-api"]
    verb = parse_document("dns.md", "dns", "# DNS\nSome services dual-host their DNS; the "
                          "service billing-api does not.\n")
    assert verb.info.services == ["billing-api"]  # "dual-host their DNS" is a verb
    vocabulary = SubjectVocabulary.from_catalog([parsed.info])
    resolution = resolve_follow_up(
        "How do I check its status?",
        [HistoryMessage(role="user", content="I restarted billing-api."),
         HistoryMessage(role="assistant", content="OK.")],
        vocabulary, "en")
    assert resolution.standalone_question == "How do I check the status of the billing-api service?"


def _thread(*texts: str) -> list[HistoryMessage]:
    roles = ("user", "assistant")
    return [HistoryMessage(role=roles[i % 2], content=text)
            for i, text in enumerate(texts)]


@pytest.mark.parametrize(
    ("history", "text", "language", "expected"),
    [
        # gender and number of the Polish pronoun
        (("Zrobiłem kopię zapasową bazy, a proces docassist-worker dalej działa.", "OK."),
         "Jak ją zweryfikować?", "pl", "kopię zapasową"),
        (("Zrobiłem kopię zapasową bazy, a proces docassist-worker dalej działa.", "OK."),
         "Jak go zatrzymać na czas odtwarzania?", "pl", "docassist-worker"),
        (("docassist-gateway ma problem z nowym certyfikatem – gdzie są logi?", "journalctl."),
         "A jak je przeczytać?", "pl", "logi"),
        # a Polish past-tense verb carries gender too: "wygasł" is masculine
        (("Jak odnowić certyfikat TLS?", "Procedura w DOC-TLS."),
         "a co jeśli wygasł już wczoraj?", "pl", "certyfikat TLS wygasł"),
        # the verb must fit its object: only services are restarted or reloaded
        (("The private key and docassist-api both need attention.", "See DOC-TLS, DOC-INSTR."),
         "How do I restart it?", "en", "docassist-api"),
        (("I need to deal with docassist-worker and the TLS certificate today.", "See DOC-TLS."),
         "How do I renew it?", "en", "TLS certificate"),
        (("We have last night's backup and docassist-gateway is acting up.", "See DOC-DB."),
         "How do I restore it?", "en", "backup"),
        # a compound is one object: "kopia bazy danych" is the backup, not the database
        (("Jak zrobić ręczną kopię bazy danych?", "docassist-db backup."),
         "A jak ją potem zweryfikować?", "pl", "kopię zapasową"),
        # elliptical continuations carry the thread's subject
        (("How do I restart docassist-worker on the VM?", "sudo systemctl restart …"),
         "and on the cluster?", "en", "docassist-worker"),
        (("Jak sprawdzić kolejkę docassist-worker?", "docassist-worker queue stats."),
         "a co jest normalną wartością?", "pl", "docassist-worker"),
        # "je" is the neuter singular too ("konto"), and only certificates are renewed
        (("Mam zablokowane konto i wygasający certyfikat.", "DOC-ACCESS i DOC-TLS."),
         "Jak je odblokować?", "pl", "konto"),
        (("Mam zablokowane konto i wygasający certyfikat.", "DOC-ACCESS i DOC-TLS."),
         "Jak go odnowić?", "pl", "certyfikat"),
        # "node worker-node-2" is one node, not two
        (("Node worker-node-2 is NotReady and job 7731 is stuck.", "See DOC-WORKER."),
         "How do I cordon it?", "en", "node"),
        # Polish drops the subject; "powinien" is masculine: the key, not the backup
        (("Wygenerowałem klucz prywatny i kopię zapasową.", "OK."),
         "Jakie uprawnienia powinien mieć?", "pl", "klucz"),
        # the named object belongs to the reference: "the logs for it", "logi tej usługi"
        (("How do I restart docassist-gateway?", "systemctl reload."),
         "How do I check the logs for it?", "en", "logs for the docassist-gateway service"),
        (("Jak zrestartować docassist-worker?", "systemctl restart."),
         "Jak sprawdzić logi tej usługi?", "pl", "logi usługi docassist-worker"),
        # a bare short question and "ona" carry the subject on; "do that" keeps it too
        (("Jak zrobić kopię zapasową bazy?", "docassist-db backup."), "Ile trwa?", "pl",
         "kopia zapasowa"),
        (("Jak zrobić kopię zapasową bazy?", "docassist-db backup."), "Gdzie ona trafia?", "pl",
         "kopi"),
        (("How do I restart docassist-api?", "sudo systemctl restart docassist-api."),
         "Can I do that during business hours?", "en", "docassist-api"),
        (("How do I restore the database?", "Stop docassist-worker, run restore."),
         "what do I check afterwards?", "en", "database"),
        # Polish case endings on a service name, and its short form
        (("Mam problem z workerem, kolejka rośnie.", "Sprawdź queue stats."),
         "Jak go zrestartować?", "pl", "docassist-worker"),
    ],
)
def test_agreement_and_verb_fit_narrow_the_candidates(
    vocabulary: SubjectVocabulary, history: tuple[str, str], text: str, language: Language,
    expected: str
) -> None:
    resolution = resolve_follow_up(text, _thread(*history), vocabulary, language)
    assert resolution.status == "resolved", resolution
    assert expected in (resolution.standalone_question or "")


def test_the_users_subjects_come_first_then_those_only_the_assistant_named(
        vocabulary: SubjectVocabulary) -> None:
    history = _thread("How do I restore the DocAssist database?",
                      "Stop docassist-worker, run docassist-db restore, then start the worker.")
    checked = resolve_follow_up("and how do I check its consistency afterwards?", history,
                                vocabulary, "en")
    assert "database" in (checked.standalone_question or "")
    # Nothing the user named can be restarted; the assistant named docassist-worker.
    restarted = resolve_follow_up("How do I restart it?", history, vocabulary, "en")
    assert "docassist-worker" in (restarted.standalone_question or "")


@pytest.mark.parametrize(
    ("history", "text", "options"),
    [
        (("We're having trouble with docassist-api and docassist-worker.", "See DOC-INSTR."),
         "How do I restart it?", {"service:docassist-api", "service:docassist-worker"}),
        (("We have last night's backup and a manual backup from before the migration.",
          "Both are in /backup/docassist/."), "How long is it kept?", {"backup"}),
        (("There's an incident open for docassist-gateway and another one for docassist-api.",
          "The on-call engineer sets the priority."), "who closes it?", {"incident"}),
        (("Two nodes are NotReady: worker-node-1 and worker-node-3.", "kubectl describe node."),
         "how do I cordon it?", {"node"}),
    ],
)
def test_several_fitting_candidates_are_asked_about_by_name(
    vocabulary: SubjectVocabulary, history: tuple[str, str], text: str, options: set[str]
) -> None:
    resolution = resolve_follow_up(text, _thread(*history), vocabulary, "en")
    assert resolution.status == "clarification_needed"
    assert resolution.reason == "ambiguous_reference"
    assert resolution.standalone_question is None
    assert {subject.key for subject in resolution.options} == options


@pytest.mark.parametrize(
    ("history", "text"),
    [
        (("How do I take a manual backup?", "Run docassist-db backup on the database server."),
         "how do I renew it?"),  # a backup is not renewed
        (("Jak odtworzyć bazę z kopii?", "Zatrzymaj docassist-worker, uruchom restore."),
         "a jak go odnowić?"),  # "go" is masculine, and nothing named can be renewed
        ((), "i co dalej?"),
        ((), "a na produkcji?"),
    ],
)
def test_no_fitting_candidate_is_a_clarification(
    vocabulary: SubjectVocabulary, history: tuple[str, ...], text: str
) -> None:
    resolution = resolve_follow_up(text, _thread(*history), vocabulary, "pl")
    assert resolution.status == "clarification_needed"
    assert resolution.reason == "missing_reference"


def test_a_longer_message_with_nothing_to_continue_stands_alone(
        vocabulary: SubjectVocabulary) -> None:
    text = "a jak uzyskać dostęp do portalu Service Desk dla nowego pracownika?"
    assert resolve_follow_up(text, [], vocabulary, "pl").status == "unchanged"


@pytest.mark.parametrize("text", [
    "i go by my middle name at work, can my display name show it instead?",
    "we want to go through the disaster recovery drill next week, who signs it off?",
    "its a two-line change to the readme, do i need a second reviewer?",
    "the job fails since we moved the bucket to another region, could that be it?",
    "we changed the proxy port yesterday and now uploads time out, is that it?",
])
def test_english_words_that_look_like_references_are_not_asked_about(
        vocabulary: SubjectVocabulary, text: str) -> None:
    """The Polish pronoun "go" is not looked for in English ("i go by", "go through"); "its a
    …" is "it's" typed without its apostrophe; "could that be it?" asks about the cause the
    message itself names. The first three were asked "Which object do you mean?" on a
    first message; the last two guard the "it" that points at a cause."""
    assert resolve_follow_up(text, [], vocabulary, "en").status == "unchanged"
    assert resolve_follow_up("jak go zrestartować?", [], vocabulary, "pl").status == (
        "clarification_needed")  # Polish "go" still refers
    assert resolve_follow_up("is its certificate still valid?", [], vocabulary, "en").status == (
        "clarification_needed")
