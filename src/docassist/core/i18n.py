"""Every user-facing sentence of DocAssist, in Polish and English.

Adapters and the core look text up here by key; nothing else spells out replies.
Add a language by adding a column to every entry.
"""

from __future__ import annotations

import re
from typing import Final

# Defined in statuses (the leaf every layer reads); re-exported: `i18n.Language` reads well.
from docassist.core.statuses import LANGUAGES as LANGUAGES
from docassist.core.statuses import Language as Language

_TEXTS: Final[dict[str, dict[Language, str]]] = {
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
    "empty_message": {
        "pl": "Wiadomość jest pusta. Napisz pytanie, np. „Co zrobić po zmianie konfiguracji?”.",
        "en": "The message is empty. Type a question, e.g. “What do I do after a config change?”.",
    },
    "message_too_long": {
        "pl": "Wiadomość jest za długa ({length} znaków, limit {limit}). "
        "Skróć ją i wyślij ponownie.",
        "en": "The message is too long ({length} characters, limit {limit}). "
        "Shorten it and send it again.",
    },
    "invalid_message": {
        "pl": "Nie mogę odczytać tej wiadomości: musi być tekstem bez znaków sterujących.",
        "en": "I can't read this message: it must be text without control characters.",
    },
    "choice_stale": {
        "pl": "Ten wybór dotyczy pytania, które nie czeka już na odpowiedź. Napisz, o co "
        "chodzi, albo kliknij przycisk pod ostatnim pytaniem.",
        "en": "That choice belongs to a question that is no longer waiting for an answer. "
        "Say what you mean, or use the buttons under the latest question.",
    },
    "clarify_subject": {
        "pl": "Którego obiektu dotyczy pytanie? Podaj go w pełnym pytaniu, np. {examples}.",
        "en": "Which object do you mean? Name it in your question, e.g. {examples}.",
    },
    "clarify_subject_ambiguous": {
        "pl": "Czy chodzi o {options}? Wskaż jeden obiekt.",
        "en": "Do you mean {options}? Please name one.",
    },
    "clarify_subject_instances": {
        "pl": "Który dokładnie? Ten wątek wspomina kilka takich obiektów („{options}”). "
        "Opisz w pytaniu ten, o który chodzi.",
        "en": "Which one exactly? This thread mentions several ({options}). Describe the one "
        "you mean in your question.",
    },
    "clarify_document_id": {
        "pl": "Podaj identyfikator dokumentu. Znane dokumenty: {known}.",
        "en": "Which document? Give its id. Known documents: {known}.",
    },
    "clarify_unknown_document": {
        "pl": "Nie znam dokumentu „{document_id}”. Znane dokumenty: {known}.",
        "en": "I don't know the document “{document_id}”. Known documents: {known}.",
    },
    "clarify_no_sources": {
        "pl": "W tym wątku nie ma jeszcze odpowiedzi z dokumentów, więc nie mam źródeł "
        "do pokazania. Zadaj pytanie, a potem poproś o źródła.",
        "en": "This thread has no answer from the documents yet, so there are no sources "
        "to show. Ask a question first, then ask for its sources.",
    },
    "handoff": {
        "pl": "Nie udało mi się ustalić, o co chodzi. Przekazuję sprawę ludziom: "
        "napisz na {channel}.",
        "en": "I couldn't work out what you need. Please ask the people at {channel}.",
    },
    "handoff_model_down": {
        "pl": "Model językowy jest teraz niedostępny. Napisz na {channel} albo spróbuj później.",
        "en": "The language model is unavailable right now. Ask at {channel} or try again later.",
    },
    "rejected": {
        "pl": "Nie wykonuję działań na systemach (restart, polecenia, zmiany, wysyłanie danych). "
        "Mogę wyjaśnić procedurę: zapytaj „Jak…?”.",
        "en": "I don't perform actions on systems (restarts, commands, changes, sending data). "
        "I can explain the procedure: ask “How do I…?”.",
    },
    "answer_procedure_intro": {
        "pl": "Według dokumentacji: procedura z dokumentu „{title}”, krok po kroku.",
        "en": "According to the documents: the procedure from “{title}”, step by step.",
    },
    "rejected_injection": {
        "pl": "Nie wykonuję poleceń zmiany moich zasad ani roli i nie ujawniam swoich instrukcji "
        "— dlatego nie odpowiadam na tę wiadomość w całości. Jeśli masz pytanie o procedury, "
        "zadaj je samo, bez takich poleceń.",
        "en": "I don't follow instructions to change my rules or role, and I don't reveal my "
        "instructions — so I'm not answering this message as a whole. If you have a question "
        "about our procedures, ask it on its own.",
    },
    "no_suitable_tool": {
        "pl": "Nie mam narzędzia do tego (np. wykresy, rezerwacje, tłumaczenia). "
        "Odpowiadam na pytania o procedury z dokumentów.",
        "en": "I have no tool for that (e.g. charts, bookings, translations). "
        "I answer procedure questions from the documents.",
    },
    "greeting": {
        "pl": "Cześć! Odpowiadam na pytania o procedury na podstawie dokumentów, np. "
        "„Co zrobić po zmianie konfiguracji docassist-api?”",
        "en": "Hi! I answer procedure questions from the documents, e.g. "
        "“What do I do after changing the docassist-api config?”",
    },
    "parse_error": {
        "pl": "Nie zrozumiałem odpowiedzi modelu, więc niczego nie wykonałem. "
        "Spróbuj zadać pytanie inaczej.",
        "en": "I couldn't understand the model's proposal, so nothing was done. "
        "Try rephrasing your question.",
    },
    "tool_error": {
        "pl": "Coś poszło nie tak podczas szukania odpowiedzi ({code}). Spróbuj ponownie.",
        "en": "Something went wrong while preparing the answer ({code}). Please try again.",
    },
    "tool_rejected": {
        "pl": "W jednej turze wykonuję tylko jedno działanie. Zadaj kolejne pytanie osobno.",
        "en": "I run one action per turn. Please ask the next thing separately.",
    },
    "unknown_tool": {
        "pl": "Model zaproponował nieznane działanie ({code}); niczego nie wykonałem.",
        "en": "The model proposed an unknown action ({code}); nothing was done.",
    },
    "invalid_arguments": {
        "pl": "Model podał niepoprawne argumenty ({code}); niczego nie wykonałem.",
        "en": "The model gave invalid arguments ({code}); nothing was done.",
    },
    "no_answer": {
        "pl": "Nie znalazłem tego w dokumentach.",
        "en": "I didn't find this in the documents.",
    },
    "no_answer_closest": {
        "pl": "Najbliższe dokumenty: {documents}.",
        "en": "The closest documents: {documents}.",
    },
    "answer_intro": {
        "pl": "Według dokumentacji:",
        "en": "According to the documents:",
    },
    "no_supported_answer": {
        "pl": "Odpowiedź modelu nie powoływała się na żaden z odnalezionych fragmentów, więc jej "
              "nie pokazuję. Poniżej najbliższe źródła.",
        "en": "The model's answer cited none of the passages found, so it is not shown. The "
              "closest sources are listed below.",
    },
    "no_valid_citation": {
        "pl": "Uwaga: odpowiedź nie ma potwierdzonego źródła.",
        "en": "Note: this answer has no verified source.",
    },
    "sources_header": {
        "pl": "Źródła poprzedniej odpowiedzi (tura {turn_id}):",
        "en": "Sources of the previous answer (turn {turn_id}):",
    },
    "sources_empty": {
        "pl": "Poprzednie wyszukiwanie (tura {turn_id}) nie znalazło żadnych fragmentów, "
        "więc nie mam źródeł do pokazania.",
        "en": "The previous search (turn {turn_id}) found no passages, so there are no "
        "sources to show.",
    },
    "sources_label": {"pl": "Źródła", "en": "Sources"},
    "metadata": {
        "pl": "{document_id}: {title}\nWersja: {version} · właściciel: {owner} · język: {language}"
        " · aktualizacja: {updated} · fragmentów: {chunk_count}\nPlik: {source_path}",
        "en": "{document_id}: {title}\nVersion: {version} · owner: {owner} · language: {language}"
        " · updated: {updated} · chunks: {chunk_count}\nFile: {source_path}",
    },
    "cleared": {
        "pl": "Wyczyściłem ten wątek. Zaczynamy od nowa.",
        "en": "This thread is cleared. Let's start fresh.",
    },
    "storage_busy": {
        "pl": "Baza danych jest teraz zajęta, więc nie obsłużyłem tej wiadomości i niczego "
        "nie zapisałem. Wyślij ją ponownie za chwilę.",
        "en": "The database is busy right now, so I didn't handle this message and saved "
        "nothing. Please send it again in a moment.",
    },
    "storage_read_only": {
        "pl": "Nie mogę teraz niczego zapisać (baza danych jest tylko do odczytu), więc nie "
        "obsłużyłem tej wiadomości. Administratorzy zobaczą problem w logach; spróbuj później.",
        "en": "I can't save anything right now (the database is read-only), so I didn't "
        "handle this message. The administrators will see the problem in the logs; please "
        "try again later.",
    },
    "storage_full": {
        "pl": "Nie mogę teraz niczego zapisać (brak miejsca na dysku), więc nie obsłużyłem "
        "tej wiadomości. Administratorzy zobaczą problem w logach; spróbuj później.",
        "en": "I can't save anything right now (the disk is full), so I didn't handle this "
        "message. The administrators will see the problem in the logs; please try again later.",
    },
    "storage_unavailable": {
        "pl": "Nie mogę teraz niczego zapisać (błąd bazy danych), więc nie obsłużyłem tej "
        "wiadomości. Administratorzy zobaczą problem w logach; spróbuj później.",
        "en": "I can't save anything right now (a database error), so I didn't handle this "
        "message. The administrators will see the problem in the logs; please try again later.",
    },
    "unknown_value": {"pl": "brak", "en": "n/a"},
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
    "feedback_good": {"pl": "Pomocna", "en": "Helpful"},
    "feedback_bad": {"pl": "Niepomocna", "en": "Not helpful"},
    "feedback_thanks": {"pl": "Dziękuję za ocenę.", "en": "Thanks for the feedback."},
    "feedback_reason_title": {"pl": "Co było nie tak?", "en": "What was wrong?"},
    "feedback_reason_question": {
        "pl": "Dlaczego ta odpowiedź nie pomogła?", "en": "Why did this answer not help?"},
    "feedback_reason_wrong": {"pl": "Błędna", "en": "Wrong"},
    "feedback_reason_outdated": {"pl": "Nieaktualna", "en": "Outdated"},
    "feedback_reason_incomplete": {"pl": "Niepełna", "en": "Incomplete"},
    "feedback_reason_not_what_i_asked": {"pl": "Nie o to pytałem", "en": "Not what I asked"},
    "feedback_reason_other": {"pl": "Inny powód", "en": "Other"},
    "feedback_reason_text": {"pl": "Coś jeszcze? (opcjonalnie)",
                             "en": "Anything to add? (optional)"},
    "feedback_reason_send": {"pl": "Wyślij", "en": "Send"},
    "feedback_reason_cancel": {"pl": "Pomiń", "en": "Skip"},
    "feedback_reason_missing": {"pl": "Wybierz powód.", "en": "Please pick a reason."},
    "feedback_reason_thanks": {"pl": "Dziękuję, zapisałem powód: {reason}.",
                               "en": "Thanks, I noted the reason: {reason}."},
    "feedback_reason_unknown": {
        "pl": "Nie znalazłem odpowiedzi, której dotyczy ta ocena (mogła zostać usunięta).",
        "en": "I could not find the answer this feedback is about (it may have been removed)."},
    "slack_ask_human_offer": {
        "pl": "Przykro mi, że odpowiedź nie pomogła. Przekazać pytanie ludziom?",
        "en": "Sorry that didn't help. Shall I pass the question to a person?",
    },
    "slack_ask_human": {"pl": "Zapytaj człowieka", "en": "Ask a human"},
    "slack_human_request": {
        "pl": "<@{user}> potrzebuje pomocy — odpowiedź DocAssist nie pomogła: {link}",
        "en": "<@{user}> needs help — DocAssist's answer did not help: {link}",
    },
    "slack_human_requested": {
        "pl": "Przekazałem pytanie na {channel}.",
        "en": "I've passed your question to {channel}.",
    },
    "slack_human_already_requested": {
        "pl": "To pytanie jest już przekazane na {channel}.",
        "en": "This question has already been passed to {channel}.",
    },
    "teams_human_request": {
        "pl": "{user} potrzebuje pomocy — odpowiedź DocAssist nie pomogła: {link}",
        "en": "{user} needs help — DocAssist's answer did not help: {link}",
    },
    "teams_human_requested": {
        "pl": "Przekazałem pytanie na kanał pomocy.",
        "en": "I've passed your question to the help channel.",
    },
    "teams_human_already_requested": {
        "pl": "To pytanie jest już przekazane na kanał pomocy.",
        "en": "This question has already been passed to the help channel.",
    },
    "teams_human_unknown": {
        "pl": "Nie mogę jeszcze pisać na kanale pomocy. Zapytaj proszę na {channel}.",
        "en": "I can't post in the help channel yet. Please ask in {channel}.",
    },
    "share_button": {"pl": "Udostępnij na kanale", "en": "Share in channel"},
    "shared_by": {"pl": "Udostępnił(a) {user}", "en": "Shared by {user}"},
    "share_already": {"pl": "Ta odpowiedź jest już na kanale.",
                      "en": "This answer is already in the channel."},
    "share_gone": {
        "pl": "Tej odpowiedzi nie można już udostępnić (wątek został wyczyszczony lub padła "
        "nowsza odpowiedź).",
        "en": "This answer can no longer be shared (the thread was cleared or has a newer "
        "answer)."},
    "share_not_yours": {"pl": "Udostępnić odpowiedź może tylko osoba, która pytała.",
                        "en": "Only the person who asked can share this answer."},
    "share_not_allowed": {
        "pl": "Ta odpowiedź cytuje dokumenty spoza zakresu tego kanału, więc zostaje prywatna.",
        "en": "This answer cites documents outside this channel's scope, so it stays "
        "private."},
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
    "or": {"pl": "czy", "en": "or"},
    "chat_welcome": {
        "pl": "DocAssist — pytaj o procedury. Polecenia: /sources /meta ID /clear /new /debug "
        "/good /bad /quit",
        "en": "DocAssist — ask about procedures. Commands: /sources /meta ID /clear /new /debug "
        "/good /bad /quit",
    },
    "chat_unknown_command": {
        "pl": "Nieznane polecenie {command}. Dostępne: /sources /meta ID /clear /new /debug "
        "/good /bad /quit",
        "en": "Unknown command {command}. Available: /sources /meta ID /clear /new /debug "
        "/good /bad /quit",
    },
    "chat_no_answer_to_rate": {"pl": "Nie ma jeszcze odpowiedzi do oceny.",
                               "en": "There is no answer to rate yet."},
    "chat_new_thread": {"pl": "Nowy wątek: {thread}", "en": "New thread: {thread}"},
    "chat_debug": {"pl": "Tryb debug: {state}", "en": "Debug mode: {state}"},
    "indexing_resumed": {
        "pl": "Pierwsze indeksowanie zostało przerwane — kończę indeksować {path}",
        "en": "The first indexing was interrupted — finishing indexing {path}",
    },
    "index_run_resumed": {
        "pl": "Poprzednie indeksowanie {path} zostało przerwane — kontynuuję (zapisane "
              "dokumenty i wektory zostają)",
        "en": "The previous indexing of {path} was interrupted — continuing (stored documents "
              "and vectors are kept)",
    },
    "indexing_empty_catalog": {
        "pl": "Pusta baza — indeksuję korpus demonstracyjny {path}",
        "en": "Empty database — indexing the demo corpus {path}",
    },
}

_POLISH_LETTERS: Final = re.compile(r"[ąćęłńóśźż]", re.IGNORECASE)
_WORD: Final = re.compile(r"[^\W\d_]+", re.UNICODE)
_POLISH_WORDS: Final = frozenset(
    "jak czy co jest się nie w z na do po dla jej jego ją go mój moja proszę pokaż źródła "
    "gdzie kiedy dlaczego kto który która jaki jaka mogę możesz usługi usługa teraz stan "
    "zrobić sprawdzić zmianie konfiguracji dokumentu metadane wyczyść też oraz albo lub "
    "narysuj wykres zrób zrob pokaz podaj wiem mi mnie tak dobrze dzieki dzięki cześć czesc "
    "jakie gdzie logi logów dostęp dostep baza bazy danych kopia kopii zapasowej usługę pomoc "
    "dokumenty statystyki metadane".split()
)
_ENGLISH_WORDS: Final = frozenset(
    "the how what is do does i to of an it its my me you can could should please show "
    "sources where when why who which status service after before with for and or this that "
    "restart check about document metadata clear help docs documents stats".split()
)


def text(key: str, language: Language, /, **values: object) -> str:
    """The sentence `key` in `language`, with `values` filled in."""
    template = _TEXTS[key][language]
    return template.format(**values) if values else template


def template(key: str, language: Language) -> str:
    """The raw template, for checks that every language has the same placeholders."""
    return _TEXTS[key][language]


def detect_language(message: str, default: Language) -> Language:
    """Polish or English by letters and common words; `default` when unsure."""
    if _POLISH_LETTERS.search(message):
        return "pl"
    words = [word.casefold() for word in _WORD.findall(message)]
    polish = sum(word in _POLISH_WORDS for word in words)
    english = sum(word in _ENGLISH_WORDS for word in words)
    if polish > english:
        return "pl"
    if english > polish:
        return "en"
    return default


def text_keys() -> frozenset[str]:
    return frozenset(_TEXTS)
