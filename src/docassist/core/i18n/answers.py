"""User text of a turn's reply: unreadable messages, clarifications, handoffs,
rejections, answers and sources, metadata, a cleared thread, storage problems."""

from __future__ import annotations

from typing import Final

from docassist.core.statuses import Language

TEXTS: Final[dict[str, dict[Language, str]]] = {
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
    "clarify_subject_plain": {
        "pl": "Którego obiektu dotyczy pytanie? Podaj go w pełnym pytaniu.",
        "en": "Which object do you mean? Name it in your question.",
    },
    "clarify_subject_ambiguous": {
        # Polish inflects names after "o" ("o kopii zapasowej"), and no maintained package
        # does that: the question ends at a colon and the candidates follow in quotes, in the
        # form the catalog spells them (a list needs no inflection).
        "pl": "O który obiekt chodzi: {options}?",
        "en": "Do you mean {options}? Please name one.",
    },
    "clarify_subject_instances": {
        "pl": "Który dokładnie? Ten wątek wspomina kilka takich obiektów („{options}”). "
        "Opisz w pytaniu ten, o który chodzi.",
        "en": "Which one exactly? This thread mentions more than one of this kind "
        "({options}). Describe the one you mean in your question.",
    },
    "clarify_document_id": {
        "pl": "Podaj identyfikator dokumentu. Znane dokumenty, najbliższe Twoim słowom "
        "najpierw: {known}.",
        "en": "Which document? Give its id. Known documents, closest to your words first: "
        "{known}.",
    },
    "more_documents": {
        "pl": " i {count} innych",
        "en": " and {count} more",
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
    "smalltalk": {
        "pl": "Jestem DocAssist. Odpowiadam na pytania o procedury na podstawie dokumentów "
        "firmy i podaję fragmenty, z których korzystam; pokażę też źródła ostatniej "
        "odpowiedzi albo dane dokumentu (właściciel, wersja). Zapytaj np. „Jak zgłosić "
        "incydent?”.",
        "en": "I'm DocAssist. I answer questions about our procedures from the company's "
        "documents and cite the passages I used; I can also show the sources of my last "
        "answer or a document's details (owner, version). Ask, e.g., “How do I report an "
        "incident?”.",
    },
    "smalltalk_thanks": {
        "pl": "Nie ma za co. Pytaj, gdy będziesz potrzebować kolejnej procedury.",
        "en": "You're welcome. Ask whenever you need another procedure.",
    },
    "off_topic": {
        "pl": "Tu nie pomogę — odpowiadam tylko na pytania o pracę na podstawie dokumentów "
        "firmy (procedury, zasady, instrukcje). Zapytaj np. „Jak zgłosić incydent?”.",
        "en": "I can't help with that one — I only answer work questions from the company's "
        "documents (procedures, policies, how-tos). Ask, e.g., “How do I report an "
        "incident?”.",
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
    "nothing_indexed": {
        "pl": "Nie ma jeszcze żadnych zaindeksowanych dokumentów, więc nie mam z czego "
        "odpowiedzieć. Administratorzy: zaindeksujcie dokumenty (docassist index ŚCIEŻKA) "
        "albo dodajcie źródło (docassist sources add …, potem docassist sync).",
        "en": "Nothing is indexed yet, so I have no documents to answer from. "
        "Administrators: index documents (docassist index PATH) or add a source "
        "(docassist sources add …, then docassist sync).",
    },
    "no_answer_unstated": {
        "pl": "Najbliższy dokument, {document}, jest na ten temat, ale nie podaje {fact}.",
        "en": "The closest document, {document}, is on this subject but states no {fact}.",
    },
    "no_answer_unstated_passage": {
        "pl": "Najbliższy dokument, {document}, jest na ten temat, ale w części o tym nie "
              "podaje {fact}.",
        "en": "The closest document, {document}, is on this subject, but its passage on it "
              "states no {fact}.",
    },
    "no_answer_unmentioned": {
        "pl": "Najbliższy dokument, {document}, nie wspomina o {names}.",
        "en": "The closest document, {document}, does not mention {names}.",
    },
    "asked_fact_money": {"pl": "kwoty", "en": "amount"},
    "asked_fact_frequency": {"pl": "częstotliwości", "en": "frequency"},
    "asked_fact_duration": {"pl": "czasu ani terminu", "en": "time or duration"},
    "asked_fact_count": {"pl": "liczby", "en": "number"},
    "asked_fact_clock": {"pl": "godziny", "en": "time of day"},
    "asked_fact_version": {"pl": "wersji", "en": "version"},
    "asked_fact_percent": {"pl": "wartości procentowej", "en": "percentage"},
    "asked_fact_size": {"pl": "rozmiaru", "en": "size"},
    "asked_fact_default": {"pl": "wartości domyślnej", "en": "default"},
    "no_answer_closest": {
        "pl": "Najbliższe dokumenty: {documents}.",
        "en": "The closest documents: {documents}.",
    },
    "answer_intro": {
        "pl": "Według dokumentacji:",
        "en": "According to the documents:",
    },
    "answer_passage_intro": {
        "pl": "Z dokumentu „{title}”, część „{section}”:",
        "en": "From “{title}”, section “{section}”:",
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
    "sources_also_given": {
        "pl": "Przeczytane do tej odpowiedzi, ale w niej nie cytowane:",
        "en": "Read for this answer but not quoted in it:",
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
        " · aktualizacja: {updated} · fragmentów: {chunk_count}",
        "en": "{document_id}: {title}\nVersion: {version} · owner: {owner} · language: {language}"
        " · updated: {updated} · chunks: {chunk_count}",
    },
    "metadata_url": {"pl": "Link: {url}", "en": "Link: {url}"},
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
}
