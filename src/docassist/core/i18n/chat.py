"""User text of the chat around the answers: buttons, admission notes, admin and help
commands, status lines, the gaps digest, rate limits, the terminal chat and indexing."""

from __future__ import annotations

from typing import Final

from docassist.core.statuses import Language

TEXTS: Final[dict[str, dict[Language, str]]] = {
    "button_show_sources": {"pl": "Pokaż źródła", "en": "Show sources"},
    "button_clear_thread": {"pl": "Wyczyść wątek", "en": "Clear thread"},
    "attachments_ignored": {
        "pl": "Nie czytam załączników — odpowiadam tylko na tekst wiadomości.",
        "en": "I don't read attachments — I only answer the text of the message.",
    },
    "external_user": {
        "pl": "Przepraszam, odpowiadam tylko osobom z naszej organizacji.",
        "en": "Sorry, I only answer people from our own organisation.",
    },
    "post_failed": {
        "pl": "Nie udało mi się wysłać odpowiedzi. Spróbuj ponownie za chwilę.",
        "en": "I couldn't post my answer. Please try again in a moment.",
    },
    "admin_refused": {
        "pl": "To polecenie jest tylko dla administratorów DocAssist.",
        "en": "This command is for DocAssist administrators only.",
    },
    "slack_admin_usage": {
        "pl": "Użycie: /docassist-admin export [od] [do] | stats | sources | scopes …",
        "en": "Usage: /docassist-admin export [since] [until] | stats | sources | scopes …",
    },
    "slack_admin_exported": {
        "pl": "Eksport śladów ({rows} tur) jest w Twoich wiadomościach prywatnych.",
        "en": "The trace export ({rows} turns) is in your direct messages.",
    },
    "stats_header": {"pl": "DocAssist — ostatnie 7 dni", "en": "DocAssist — last 7 days"},
    "slack_status_searching": {"pl": "Szukam w dokumentach…", "en": "Searching documents…"},
    "slack_status_writing": {"pl": "Piszę odpowiedź…", "en": "Writing the answer…"},
    "gaps_digest_title": {
        "pl": "Luki w dokumentach z ostatnich {days} dni (pytania bez odpowiedzi, 👎, "
        "przekazania do ludzi):",
        "en": "Gaps in the documents over the last {days} days (unanswered questions, 👎, "
        "handoffs):",
    },
    "gaps_digest_group": {
        "pl": "• {count}× ({kinds}) — najbliższe dokumenty: {documents}{example}",
        "en": "• {count}× ({kinds}) — closest documents: {documents}{example}",
    },
    "gaps_digest_none": {"pl": "Brak luk w tym tygodniu.", "en": "No gaps this week."},
    "gaps_digest_no_document": {"pl": "brak", "en": "none"},
    "slack_prompt": {"pl": "Co mówi dokument „{title}”?", "en": "What does “{title}” say?"},
    "slack_prompts_title": {"pl": "Na przykład:", "en": "For example:"},
    "rate_limited": {
        "pl": "Dużo pytań naraz — spróbuj ponownie za {seconds} s.",
        "en": "That's a lot of questions at once — please try again in {seconds} s.",
    },
    "docs_header": {"pl": "Dokumenty w katalogu:", "en": "Documents in the catalog:"},
    "slack_help": {
        "pl": "Wspomnij @DocAssist w kanale albo napisz do mnie prywatnie, a odpowiem z "
        "dokumentów, z cytatami. W wątku: „pokaż źródła”, „clear”. Polecenia: "
        "/docassist-meta ID, /docassist-docs, /docassist-help.",
        "en": "Mention @DocAssist in a channel or message me directly and I answer from the "
        "documents, with citations. In a thread: “show sources”, “clear”. Commands: "
        "/docassist-meta ID, /docassist-docs, /docassist-help.",
    },
    "teams_help": {
        "pl": "Wspomnij @DocAssist w kanale albo napisz do mnie w czacie, a odpowiem z "
        "dokumentów, z cytatami. Polecenia: meta ID-DOKUMENTU, docs, clear, help "
        "(dla administratorów: stats, sources, scopes). Na karcie odpowiedzi: Pokaż źródła, "
        "Wyczyść wątek.",
        "en": "Mention @DocAssist in a channel or chat with me and I answer from the "
        "documents, with citations. Commands: meta DOCUMENT-ID, docs, clear, help "
        "(for administrators: stats, sources, scopes). On an answer card: Show sources, "
        "Clear thread.",
    },
    "teams_meta_usage": {
        "pl": "Podaj identyfikator dokumentu, np. „meta {example}”.",
        "en": "Give a document id, for example “meta {example}”.",
    },
    "stats_turns": {"pl": "Tury: {turns}", "en": "Turns: {turns}"},
    "stats_feedback": {
        "pl": "Oceny: {helpful} pomocnych, {not_helpful} niepomocnych",
        "en": "Feedback: {helpful} helpful, {not_helpful} not helpful",
    },
    "option": {"pl": "„{option}”", "en": "{option}"},
    "options_last_joiner": {"pl": " czy ", "en": " or "},
    "chat_welcome": {
        "pl": "DocAssist — pytaj o procedury. Polecenia: /help /sources /meta ID /clear /new "
        "/debug /good /bad /quit",
        "en": "DocAssist — ask about procedures. Commands: /help /sources /meta ID /clear /new "
        "/debug /good /bad /quit",
    },
    "chat_unknown_command": {
        "pl": "Nieznane polecenie {command}. Dostępne: /help /sources /meta ID /clear /new "
        "/debug /good /bad /quit",
        "en": "Unknown command {command}. Available: /help /sources /meta ID /clear /new "
        "/debug /good /bad /quit",
    },
    "chat_help": {
        "pl": "Zadaj pytanie o procedurę zwykłymi słowami, np. „Jak zgłosić incydent?”; "
        "odpowiem z dokumentów i podam źródła. Polecenia:\n"
        "  /sources   źródła ostatniej odpowiedzi\n"
        "  /meta ID   dane dokumentu (właściciel, wersja), np. /meta DOC-TLS\n"
        "  /good /bad oceń ostatnią odpowiedź\n"
        "  /clear     wyczyść ten wątek;  /new  zacznij nowy wątek\n"
        "  /debug     pokazuj decyzję i narzędzie każdej tury\n"
        "  /quit      zakończ",
        "en": "Ask about a procedure in your own words, e.g. “How do I report an incident?”; "
        "I answer from the documents and cite my sources. Commands:\n"
        "  /sources   the sources of the last answer\n"
        "  /meta ID   a document's details (owner, version), e.g. /meta DOC-TLS\n"
        "  /good /bad rate the last answer\n"
        "  /clear     clear this thread;  /new  start a new thread\n"
        "  /debug     show each turn's decision and tool\n"
        "  /quit      leave",
    },
    "chat_no_answer_to_rate": {"pl": "Nie ma jeszcze odpowiedzi do oceny.",
                               "en": "There is no answer to rate yet."},
    "chat_new_thread": {"pl": "Nowy wątek: {thread}", "en": "New thread: {thread}"},
    "chat_debug": {"pl": "Tryb debug: {state}", "en": "Debug mode: {state}"},
    "indexing_resumed": {
        "pl": "Pierwsze indeksowanie zostało przerwane — kończę indeksować {path}",
        "en": "The first indexing was interrupted — finishing indexing {path}",
    },
    "index_demo_kept": {
        "pl": "ta baza zawiera też korpus demonstracyjny ({count} dokumentów z {folder}), "
              "przeszukiwany razem z Twoimi; usuwa go `docassist remove {ids}`",
        "en": "this database also holds the demo corpus ({count} documents from {folder}), "
              "searched with yours; `docassist remove {ids}` takes it out",
    },
    "index_run_resumed": {
        "pl": "Poprzednie indeksowanie {path} zostało przerwane — kontynuuję (zapisane "
              "dokumenty i wektory zostają)",
        "en": "The previous indexing of {path} was interrupted — continuing (stored documents "
              "and vectors are kept)",
    },
    "database_in_folder": {
        "pl": "Uwaga: używam ./docassist.db z tego folderu. DocAssist trzyma teraz bazę w "
              "{path} (tę samą w każdym folderze).\nAby dalej używać tej bazy:  "
              "export DOCASSIST_DB=./docassist.db\nAby ją tam przenieść:  {move}",
        "en": "Note: using ./docassist.db from this folder. DocAssist now keeps its database "
              "in {path} (the same from every folder).\nTo keep using this one:  "
              "export DOCASSIST_DB=./docassist.db\nTo move it there:  {move}",
    },
    "database_in_both": {
        "pl": "Uwaga: używam ./docassist.db z tego folderu, choć domyślna baza DocAssist jest "
              "teraz w {path}.\nAby dalej używać tej bazy:  export DOCASSIST_DB=./docassist.db"
              "\nAby używać tamtej:  export DOCASSIST_DB={path}  (albo przenieś "
              "./docassist.db gdzie indziej)",
        "en": "Note: using ./docassist.db from this folder, though DocAssist's default database "
              "is now {path}.\nTo keep using this one:  export DOCASSIST_DB=./docassist.db"
              "\nTo use that one:  export DOCASSIST_DB={path}  (or move ./docassist.db "
              "elsewhere)",
    },
    "catalog_empty": {
        "pl": "Katalog jest pusty. Zaindeksuj dokumenty: docassist index ŚCIEŻKA (albo dodaj "
              "źródło: docassist sources add, potem docassist sync).",
        "en": "The catalog is empty. Index documents: docassist index PATH (or add a source: "
              "docassist sources add, then docassist sync).",
    },
    "eval_catalog_empty": {
        "pl": "Nie ma względem czego oceniać: katalog jest pusty. Najpierw zaindeksuj dokumenty, "
              "o które pytają przypadki: docassist index ŚCIEŻKA (albo docassist sync).",
        "en": "Nothing to evaluate against: the catalog is empty. Index the documents the "
              "cases ask about first: docassist index PATH (or docassist sync).",
    },
    "indexing_empty_catalog": {
        "pl": "Pusta baza — indeksuję korpus demonstracyjny {path}",
        "en": "Empty database — indexing the demo corpus {path}",
    },
}
