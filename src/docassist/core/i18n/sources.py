"""User text about documents changing and who may read them: stale-answer notes,
document sources, scopes (issue 22)."""

from __future__ import annotations

from typing import Final

from docassist.core.statuses import Language

TEXTS: Final[dict[str, dict[Language, str]]] = {
    "stale_note_updated": {
        "pl": "Dokument „{title}” ({document_id}), na którym opierała się moja ostatnia "
        "odpowiedź w tym wątku, zmienił się ({when}). Zapytaj ponownie, aby dostać odpowiedź "
        "z aktualnej wersji.",
        "en": "The document “{title}” ({document_id}) my last answer in this thread cited "
        "has changed ({when}). Ask again to get an answer from the current version.",
    },
    "stale_note_deleted": {
        "pl": "Dokument „{title}” ({document_id}), na którym opierała się moja ostatnia "
        "odpowiedź w tym wątku, został usunięty ({when}). Zapytaj ponownie, aby dostać "
        "odpowiedź z aktualnych dokumentów.",
        "en": "The document “{title}” ({document_id}) my last answer in this thread cited "
        "was removed ({when}). Ask again to get an answer from the current documents.",
    },
    "stale_ask_again": {"pl": "Zapytaj ponownie", "en": "Ask again"},
    "stale_no_question": {
        "pl": "Nie mam już tego pytania (historia wątku została wyczyszczona). Zadaj je "
        "ponownie.",
        "en": "I no longer have that question (the thread's history was cleared). Please "
        "ask it again.",
    },
    "stale_note_unknown": {
        "pl": "Nie znam tej notatki o zmienionym dokumencie w tym wątku, więc niczego nie "
        "uruchomiłem. Zadaj pytanie ponownie.",
        "en": "I don't know that changed-document note in this thread, so nothing was run. "
        "Please ask your question again.",
    },
    "sources_header_admin": {"pl": "Źródła dokumentów:", "en": "Document sources:"},
    "scope_held_back": {
        "pl": "Część źródeł, które możesz czytać, nie została tu użyta, bo nie wszyscy w tej "
        "rozmowie mogą je zobaczyć. Napisz do mnie w wiadomości prywatnej, a odpowiem z "
        "Twoich własnych zbiorów.",
        "en": "Some sources you can read were not used here, because not everyone in this "
        "conversation may see them. Ask me in a direct message and I will answer from your "
        "own collections.",
    },
    "sources_withheld_scope": {
        "pl": "Pominięto źródła ({count}), których ta rozmowa nie może już zobaczyć.",
        "en": "{count} source(s) withheld: this conversation may no longer see them.",
    },
    "scopes_usage": {
        "pl": "Użycie: scopes | scopes set slack:KANAŁ|teams:ROZMOWA|user:PLATFORMA:ID|"
        "group:PLATFORMA:ID ZBIÓR… | scopes clear PODMIOT | scopes share ZBIÓR… | "
        "scopes unshare ZBIÓR…",
        "en": "Usage: scopes | scopes set slack:CHANNEL|teams:CONVERSATION|user:PLATFORM:ID|"
        "group:PLATFORM:ID COLLECTION… | scopes clear SUBJECT | scopes share COLLECTION… | "
        "scopes unshare COLLECTION…",
    },
    "scopes_unknown_collection": {
        "pl": "Nieznany zbiór: {names}. Znane zbiory: {known}. Nic nie zmieniono.",
        "en": "Unknown collection: {names}. Known collections: {known}. Nothing changed.",
    },
    "scopes_bad_subject": {
        "pl": "Nieznany podmiot „{subject}”: użyj slack:KANAŁ, teams:ROZMOWA, "
        "user:PLATFORMA:ID lub group:PLATFORMA:ID. Nic nie zmieniono.",
        "en": "Unknown subject “{subject}”: use slack:CHANNEL, teams:CONVERSATION, "
        "user:PLATFORM:ID or group:PLATFORM:ID. Nothing changed.",
    },
    "scopes_slack_id": {
        "pl": "„{subject}” nie jest identyfikatorem Slacka: podaj identyfikator ({kind}…, "
        "widoczny w szczegółach kanału lub profilu), a nie nazwę. Nic nie zmieniono.",
        "en": "“{subject}” is not a Slack id: give the id ({kind}…, shown in the channel's or "
        "profile's details), not a name. Nothing changed.",
    },
    "scopes_not_mapped": {
        "pl": "{subject} nie ma przypisanych zbiorów. Nic nie zmieniono.",
        "en": "{subject} has no mapping. Nothing changed.",
    },
    "scopes_changed": {"pl": "Zakresy zmienione.", "en": "Scopes changed."},
    "scopes_header": {
        "pl": "Zakresy (nieprzypisane kanały i użytkownicy: default):",
        "en": "Scopes (unmapped channels and users: default):",
    },
    "scopes_shareable": {
        "pl": "Zbiory dostępne w kanałach współdzielonych: {names}",
        "en": "Collections shareable with externally shared channels: {names}",
    },
    "sources_none": {"pl": "Brak skonfigurowanych źródeł.", "en": "No sources configured."},
    "source_line": {
        "pl": "{name} ({kind}, {collection}): {documents} dok., ostatni sukces {last_success}, "
        "następny {next_run}{problem}",
        "en": "{name} ({kind}, {collection}): {documents} docs, last success {last_success}, "
        "next {next_run}{problem}",
    },
    "source_failing": {"pl": " — BŁĄD: {error}", "en": " — FAILING: {error}"},
    "source_never": {"pl": "nigdy", "en": "never"},
}
