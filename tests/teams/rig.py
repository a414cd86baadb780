"""The Teams adapter behind its real HTTP server, driven by posted Activities."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx

from docassist.bot.teams import cards
from docassist.bot.teams.app import TeamsAdapter
from docassist.storage import Store
from docassist_testkit.fakes.teams_connector import FakeConnector, Sent

TENANT = "tenant-1"
BOT = {"id": "28:docassist-bot", "name": "DocAssist"}
ADMIN = "aad-admin"
CHANNEL = "19:general@thread.tacv2"
PERSONAL = "a:personal-chat-1"


@dataclass
class TeamsRig:
    connector: FakeConnector
    adapter: TeamsAdapter
    url: str
    store: Store
    ids: Iterator[int]

    def activity(self, text: str | None, *, conversation: str = PERSONAL,
                 conversation_type: str = "personal", activity_id: str | None = None,
                 user: str = "aad-user-1", mention: bool = False,
                 value: dict[str, Any] | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {
            "type": "message", "id": activity_id or f"act-{next(self.ids)}",
            "channelId": "msteams", "serviceUrl": self.connector.url,
            "from": {"id": f"29:{user}", "aadObjectId": user, "name": "Ada"},
            "recipient": BOT, "locale": "en-US",
            "conversation": {"id": conversation, "conversationType": conversation_type,
                             "tenantId": TENANT},
            "channelData": {"tenant": {"id": TENANT}}}
        if text is not None:
            body["text"] = f"<at>DocAssist</at> {text}" if mention else text
        if mention:
            body["entities"] = [{"type": "mention", "text": "<at>DocAssist</at>",
                                 "mentioned": BOT}]
        if value is not None:
            body["value"] = value
        return body

    def post(self, activity: dict[str, Any], *, expect_replies: bool = False,
             headers: dict[str, str] | None = None) -> httpx.Response:
        if expect_replies:
            activity = {**activity, "deliveryMode": "expectReplies"}
        response = httpx.post(self.url, json=activity, headers=headers, timeout=30)
        assert self.adapter.worker.wait_idle()
        return response

    def channel_thread(self, root: str) -> str:
        return f"{CHANNEL};messageid={root}"


def actions(sent: Sent) -> list[dict[str, Any]]:
    return [action["data"] for card in sent.cards for action in cards.actions(card)]
