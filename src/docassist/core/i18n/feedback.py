"""User text about an answer after it is given: votes and their reasons, asking a
human, sharing a private answer in its channel."""

from __future__ import annotations

from typing import Final

from docassist.core.statuses import Language

TEXTS: Final[dict[str, dict[Language, str]]] = {
    "feedback_good": {"pl": "Pomocna", "en": "Helpful"},
    "feedback_bad": {"pl": "Niepomocna", "en": "Not helpful"},
    "feedback_thanks": {"pl": "Dziękuję za ocenę.", "en": "Thanks for the feedback."},
    "feedback_elsewhere": {
        "pl": "Ta odpowiedź nie pochodzi z tej rozmowy, więc nic nie zapisałem.",
        "en": "That answer is not from this conversation, so nothing was recorded."},
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
}
