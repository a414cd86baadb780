"""Was this answer posted already? A process that died between posting an answer and marking
its event `done` leaves the event `answered`; the next one asks here before posting again.

Every answer's last post carries its result id in Slack message metadata (`metadata_for`);
a finished stream carries it in its feedback buttons' values instead. (An ephemeral answer,
which no history shows, is recorded in the store when sent; the adapter looks there first.)
"""

from __future__ import annotations

import json
from typing import Any, Final

from slack_sdk import WebClient

from docassist.bot.slack.limits import ANSWER_HISTORY_PAGE_SIZE, ANSWER_HISTORY_PAGES
from docassist.core.results import TurnResult

ANSWER_EVENT_TYPE: Final = "docassist_answer"


def metadata_for(result: TurnResult) -> dict[str, Any]:
    """The metadata of an answer's last post, naming its result."""
    return {"event_type": ANSWER_EVENT_TYPE, "event_payload": {"result_id": result.result_id}}


def _names_result(message: dict[str, Any], result_id: str) -> bool:
    payload = (message.get("metadata") or {}).get("event_payload") or {}
    if payload.get("result_id") == result_id:
        return True
    return f":{result_id}" in json.dumps(message.get("blocks") or [])  # feedback button values


def in_history(client: WebClient, channel: str, thread_ts: str | None, result_id: str) -> bool:
    """Is a post naming `result_id` in the thread (or, for a DM's top level, the channel),
    within the last ANSWER_HISTORY_PAGES pages?"""
    cursor: str | None = None
    for _ in range(ANSWER_HISTORY_PAGES):
        if thread_ts is None:
            page = client.conversations_history(
                channel=channel, limit=ANSWER_HISTORY_PAGE_SIZE, cursor=cursor,
                include_all_metadata=True)
        else:
            page = client.conversations_replies(
                channel=channel, ts=thread_ts, limit=ANSWER_HISTORY_PAGE_SIZE,
                cursor=cursor, include_all_metadata=True)
        messages: list[dict[str, Any]] = page.get("messages") or []
        if any(_names_result(item, result_id) for item in messages):
            return True
        cursor = (page.get("response_metadata") or {}).get("next_cursor")
        if not page.get("has_more") or not cursor:
            return False
    return False
