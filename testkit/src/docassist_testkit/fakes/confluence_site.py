"""A fake Confluence on 127.0.0.1 port 0, Cloud (REST v2 under /wiki) and Data Center (REST
under /confluence) at once, serving the documented response shapes: spaces, pages with
storage-format bodies and version numbers, attachments, `_links.next` paging (cursor on
Cloud, start on Data Center), 401 for a wrong credential, scripted 429/5xx per path, and a
record of every request."""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, quote, urlencode, urlsplit

from docassist_testkit.fakes.loopback import FakeServer, OneWriteHandler, QuietHandler, Request

CLOUD_BASE = "/wiki"
DC_CONTEXT = "/confluence"


@dataclass
class FakePage:
    title: str
    body: str
    version: int = 1
    attachments: dict[str, tuple[str, bytes, int]] = field(default_factory=dict)
    """Attachment id → (file name, bytes, version)."""


@dataclass
class ConfluenceState:
    spaces: dict[str, dict[str, FakePage]] = field(default_factory=dict)
    """Space key → page id → page."""
    space_ids: dict[str, str] = field(default_factory=dict)
    authorization: str = ""
    """The Authorization header every request must carry (else 401)."""
    page_size: int = 2
    """The server's cap on results per listing (whatever `limit` asks): paging is exercised."""
    failures: dict[str, list[tuple[int, dict[str, str]]]] = field(default_factory=dict)
    link_host: str = ""
    """Put before every `_links.next` (e.g. another server's http://host:port): a hostile or
    misconfigured server's absolute links."""
    requests: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def paths(self) -> list[str]:
        return [path for path, _headers in self.requests]


class FakeConfluence(FakeServer):
    """Started when made (as the sync tests use it); `stop()` ends it."""

    handler = OneWriteHandler

    def __init__(self) -> None:
        super().__init__()
        self.state = ConfluenceState()
        self.start()

    def answer(self, exchange: QuietHandler, request: Request) -> None:
        state = self.state
        parts = urlsplit(request.path)
        query = {key: values[0] for key, values in parse_qs(parts.query).items()}
        with state.lock:
            state.requests.append((request.path, request.headers))
            scripted = state.failures.get(parts.path)
            failure = scripted.pop(0) if scripted else None
        if failure is not None:
            exchange.reply(failure[0], b'{"message": "busy"}', extra=failure[1])
        elif request.headers.get("Authorization") != state.authorization:
            exchange.reply(401, b'{"message": "Unauthorized"}')
        else:
            self._route(exchange, parts.path, query)

    def _route(self, exchange: QuietHandler, path: str, query: dict[str, str]) -> None:
        state = self.state
        for prefix in (CLOUD_BASE, DC_CONTEXT):
            if path.startswith(prefix + "/download/attachments/"):
                _download(exchange, state, path.removeprefix(prefix))
                return
        cloud = path.startswith(CLOUD_BASE + "/")
        rest = path.removeprefix(CLOUD_BASE if cloud else DC_CONTEXT)
        if rest == "/rest/api/content/search":
            answer: dict[str, Any] | None = _search(state, query, cloud)
        elif cloud:
            answer = _cloud(state, rest, query)
        else:
            answer = _datacenter(state, rest, query)
        if answer is None:
            exchange.reply(404, b'{"message": "No content found"}')
        else:
            answer.setdefault("_links", {})["base"] = self.base_url + (
                CLOUD_BASE if path.startswith(CLOUD_BASE) else DC_CONTEXT)
            exchange.reply(200, json.dumps(answer).encode())

    @property
    def cloud_url(self) -> str:
        return self.base_url + CLOUD_BASE

    @property
    def datacenter_url(self) -> str:
        return self.base_url + DC_CONTEXT

    def add_space(self, key: str, pages: dict[str, FakePage]) -> None:
        self.state.spaces[key] = pages
        self.state.space_ids[key] = str(1000 + len(self.state.space_ids))


def _download(exchange: QuietHandler, state: ConfluenceState, path: str) -> None:
    _, _, _, page_id, name = path.split("/", 4)
    for pages in state.spaces.values():
        page = pages.get(page_id)
        for file_name, data, _version in (page.attachments.values() if page else ()):
            if quote(file_name) == name:
                exchange.reply(200, data, "application/octet-stream")
                return
    exchange.reply(404, b"{}")


def _window(state: ConfluenceState, items: list[Any], start: int) -> tuple[list[Any], int | None]:
    end = start + state.page_size
    return items[start:end], (end if end < len(items) else None)


def _space_of(state: ConfluenceState, space_id: str) -> str | None:
    return next((key for key, value in state.space_ids.items() if value == space_id), None)


def _page_json(state: ConfluenceState, key: str, page_id: str, page: FakePage,
               cloud: bool) -> dict[str, Any]:
    body = {"storage": {"value": page.body, "representation": "storage"}}
    slug = page.title.replace(" ", "+")
    webui = f"/spaces/{key}/pages/{page_id}/{slug}" if cloud else f"/display/{key}/{slug}"
    shape: dict[str, Any] = {"id": page_id, "status": "current", "title": page.title,
                             "version": {"number": page.version}, "body": body,
                             "_links": {"webui": webui}}
    if cloud:
        shape.update(spaceId=state.space_ids[key], parentId=None, parentType="space")
    else:
        shape.update(type="page")
    return shape


def _attachments(state: ConfluenceState, key: str) -> list[dict[str, Any]]:
    """A space's attachments as the CQL content search shows them (expand=version,container)."""
    shapes = []
    for page_id, page in state.spaces.get(key, {}).items():
        for attachment_id, (name, _data, version) in page.attachments.items():
            download = f"/download/attachments/{page_id}/{quote(name)}?version={version}"
            shapes.append({"id": attachment_id, "type": "attachment", "title": name,
                           "metadata": {"mediaType": "text/markdown"},
                           "version": {"number": version},
                           "container": {"id": page_id, "type": "page", "title": page.title},
                           "_links": {"download": download,
                                      "webui": f"/pages/viewpageattachments.action?pageId="
                                               f"{page_id}&preview={quote(name)}"}})
    return shapes


def _search(state: ConfluenceState, query: dict[str, str], cloud: bool) -> dict[str, Any]:
    """`/rest/api/content/search?cql=type=attachment AND space="KEY"`: paged by `cursor`
    (Cloud) or `start` (Data Center), `_links.next` relative to the base."""
    match = re.search(r'space="?([^"\s]+)"?', query.get("cql", ""))
    cursor = "cursor" if cloud else "start"
    start = int(query.get(cursor, "0"))
    shown, following = _window(state, _attachments(state, match.group(1) if match else ""),
                               start)
    links = {} if following is None else {
        "next": f"{state.link_host}/rest/api/content/search?"
                f"{urlencode({**query, cursor: following})}"}
    return {"results": shown, "start": start, "limit": state.page_size, "size": len(shown),
            "_links": links}


def _cloud(state: ConfluenceState, path: str, query: dict[str, str]) -> dict[str, Any] | None:
    parts = path.strip("/").split("/")  # api, v2, ...
    start = int(query.get("cursor", "0"))
    if parts[2:] == ["spaces"]:
        keys = query.get("keys", "").split(",")
        return {"results": [{"id": state.space_ids[key], "key": key, "name": key}
                            for key in keys if key in state.spaces]}
    if len(parts) == 5 and parts[2] == "spaces" and parts[4] == "pages":
        key = _space_of(state, parts[3])
        if key is None:
            return None
        items = [_page_json(state, key, pid, page, True)
                 for pid, page in state.spaces[key].items()]
        shown, following = _window(state, items, start)
        links = {} if following is None else {
            "next": f"{state.link_host}{CLOUD_BASE}/api/v2/spaces/{parts[3]}"
                    f"/pages?{urlencode({**query, 'cursor': following})}"}
        return {"results": shown, "_links": links}
    return None


def _datacenter(state: ConfluenceState, path: str, query: dict[str, str]
                ) -> dict[str, Any] | None:
    parts = path.strip("/").split("/")  # rest, api, ...
    start = int(query.get("start", "0"))
    if len(parts) == 4 and parts[2] == "space":
        return {"key": parts[3], "name": parts[3]} if parts[3] in state.spaces else None
    if parts[2:] == ["content"]:
        key = query.get("spaceKey", "")
        items = [_page_json(state, key, pid, page, False)
                 for pid, page in state.spaces.get(key, {}).items()]
    else:
        return None
    shown, following = _window(state, items, start)
    links: dict[str, str] = {"context": DC_CONTEXT}
    if following is not None:
        links["next"] = f"{state.link_host}{path}?{urlencode({**query, 'start': following})}"
    return {"results": shown, "start": start, "limit": state.page_size, "size": len(shown),
            "_links": links}
