"""A fake of Slack's user-group Web API methods (`usergroups.list`, `usergroups.users.list`)
on 127.0.0.1 port 0: the documented answers, `invalid_auth`/`token_expired` for a wrong or
expired token, scripted HTTP 429s with Retry-After, and a record of the methods called."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from urllib.parse import parse_qs

from docassist_testkit.fakes.loopback import FakeServer, QuietHandler, Request

BOT_TOKEN = "xoxb-groups-s3cr3t"


@dataclass
class GroupsState:
    groups: dict[str, list[str]] = field(default_factory=dict)
    """User group id → member ids."""
    token_error: str | None = None
    """Answer every call `ok: false` with this error (token_expired, token_revoked)."""
    throttled: dict[str, int] = field(default_factory=dict)
    """Method → how many of its next calls get HTTP 429 (Retry-After: 0)."""
    calls: list[str] = field(default_factory=list)
    authorization: list[str] = field(default_factory=list)


class FakeSlackGroups(FakeServer):
    """Started when made; `stop()` ends it."""

    def __init__(self) -> None:
        super().__init__()
        self.state = GroupsState()
        self.start()

    def answer(self, exchange: QuietHandler, request: Request) -> None:
        state = self.state
        method = request.path.split("?", 1)[0].removeprefix("/api/")
        form = {k: v[0] for k, v in parse_qs(request.raw.decode()).items()}
        state.calls.append(method)
        authorization = request.headers.get("Authorization", "")
        state.authorization.append(authorization)
        if state.throttled.get(method):
            state.throttled[method] -= 1
            exchange.reply(429, b'{"ok": false, "error": "ratelimited"}',
                           extra={"Retry-After": "0"})
            return
        if authorization != f"Bearer {BOT_TOKEN}":
            answer: dict[str, object] = {"ok": False, "error": "invalid_auth"}
        elif state.token_error:
            answer = {"ok": False, "error": state.token_error}
        elif method == "usergroups.list":
            answer = {"ok": True, "usergroups": [
                {"id": group, "team_id": "T1", "handle": group.lower(),
                 "name": group, "is_usergroup": True} for group in state.groups]}
        elif method == "usergroups.users.list":
            members = state.groups.get(form.get("usergroup", ""))
            answer = ({"ok": True, "users": members} if members is not None
                      else {"ok": False, "error": "no_such_subteam"})
        else:
            answer = {"ok": False, "error": "unknown_method"}
        exchange.reply(200, json.dumps(answer).encode())

    @property
    def url(self) -> str:
        return f"{self.base_url}/api/"
