"""A fake Bot Connector on 127.0.0.1 (port 0): the `serviceUrl` Teams gives the bot. It records
every activity the bot sends (`POST /v3/conversations/{id}/activities[/{replyToId}]`)."""

from __future__ import annotations

import itertools
import json
import threading
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from docassist_testkit.fakes.loopback import FakeServer, QuietHandler, Request


@dataclass
class Sent:
    conversation_id: str
    reply_to_id: str | None
    activity: dict[str, Any]
    authorization: str | None

    @property
    def cards(self) -> list[dict[str, Any]]:
        return [a["content"] for a in self.activity.get("attachments") or []
                if a.get("contentType") == "application/vnd.microsoft.card.adaptive"]

    @property
    def text(self) -> str:
        """The activity's text, or its cards' text blocks joined."""
        if self.activity.get("text"):
            return str(self.activity["text"])
        return "\n".join(card_text(card) for card in self.cards)


def card_text(card: dict[str, Any]) -> str:
    """What a card's text elements show, one element a line (a RichTextBlock's runs joined)."""
    lines = []
    for block in card.get("body", []):
        if block.get("type") == "TextBlock":
            lines.append(str(block.get("text", "")))
        elif block.get("type") == "RichTextBlock":
            lines.append("".join(str(run.get("text", "")) for run in block.get("inlines", [])))
    return "\n".join(lines)


@dataclass
class FakeConnector(FakeServer):
    sent: list[Sent] = field(default_factory=list)
    updated: list[Sent] = field(default_factory=list)
    """Activities replaced in place (`PUT …/activities/{id}`): `reply_to_id` is the id."""
    failures: list[int] = field(default_factory=list)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _lock: threading.Lock = field(default_factory=threading.Lock)
    held: threading.Event | None = None
    """While set to an unset Event, sends wait for it and are then refused (a dead connector)."""

    def fail(self, *statuses: int) -> None:
        """Answer the next sends with these HTTP statuses."""
        self.failures.extend(statuses)

    def messages(self) -> list[Sent]:
        return [sent for sent in self.sent if sent.activity.get("type") == "message"]

    def answer(self, exchange: QuietHandler, request: Request) -> None:
        parts = request.path.split("?")[0].strip("/").split("/")
        if request.method == "PUT":
            self._update(exchange, request, parts)
            return
        if request.method != "POST" or parts[:2] != ["v3", "conversations"] \
                or len(parts) not in (4, 5) or parts[3] != "activities":
            exchange.reply(404, b'{"error": "not found"}')
            return
        body = json.loads(request.raw or b"{}")
        if self.held is not None:
            self.held.wait(30)
            exchange.reply(503, b'{"error": "held"}')
            return
        with self._lock:
            if self.failures:
                exchange.reply(self.failures.pop(0), b'{"error": "injected"}')
                return
            self.sent.append(Sent(
                conversation_id=unquote(parts[2]),
                reply_to_id=unquote(parts[4]) if len(parts) == 5 else None,
                activity=body, authorization=request.headers.get("Authorization")))
            reply_id = f"reply-{next(self._ids)}"
        exchange.reply(200, json.dumps({"id": reply_id}).encode())

    def _update(self, exchange: QuietHandler, request: Request, parts: list[str]) -> None:
        """`PUT …/activities/{id}`: an activity replaced in place (recorded in `updated`)."""
        if parts[:2] != ["v3", "conversations"] or len(parts) != 5:
            exchange.reply(404, b'{"error": "not found"}')
            return
        body = json.loads(request.raw or b"{}")
        with self._lock:
            if self.failures:
                exchange.reply(self.failures.pop(0), b'{"error": "injected"}')
                return
            self.updated.append(Sent(
                conversation_id=unquote(parts[2]), reply_to_id=unquote(parts[4]),
                activity=body, authorization=request.headers.get("Authorization")))
        exchange.reply(200, json.dumps({"id": unquote(parts[4])}).encode())

    @property
    def url(self) -> str:
        return self.base_url + "/"
