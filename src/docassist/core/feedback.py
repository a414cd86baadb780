"""Why an answer did not help: the reasons a 👎 offers (the values stored and exported; their
labels live in i18n as `feedback_reason_<value>`)."""

from __future__ import annotations

from typing import Final, Literal, get_args

from docassist.core import i18n

FeedbackReason = Literal["wrong", "outdated", "incomplete", "not_what_i_asked", "other"]
FEEDBACK_REASONS: Final[tuple[FeedbackReason, ...]] = get_args(FeedbackReason)


def parse_reason(value: object) -> FeedbackReason | None:
    """A reason as a platform sent it back; None for anything else (a forged or old value)."""
    return next((reason for reason in FEEDBACK_REASONS if reason == value), None)


def reason_label(reason: FeedbackReason, language: i18n.Language) -> str:
    return i18n.text(f"feedback_reason_{reason}", language)


def answered_elsewhere(place: tuple[str, str] | None, platform: str, channel: str) -> bool:
    """A click naming an answer given in another channel (a crafted payload): refused. An
    unknown answer is not "elsewhere": recording it says it was not found."""
    return place is not None and place != (platform, channel)
