"""Fakes of Microsoft Entra ID (token service, over TLS with a test certificate authority,
as MSAL accepts only https authorities) and Microsoft Graph (sites, drives, driveItem delta,
downloads, group membership) on 127.0.0.1 port 0. They serve the documented response shapes
(`@odata.nextLink`/`@odata.deltaLink`, the `deleted` facet, `@microsoft.graph.downloadUrl`,
410 for an expired delta token, 401 `InvalidAuthenticationToken`) and record every request."""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import ssl
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import trustme

from docassist_testkit.fakes.loopback import (
    FakeServer,
    LoopbackServer,
    OneWriteHandler,
    QuietHandler,
    Request,
    TlsLoopbackServer,
)

TENANT = "11111111-2222-3333-4444-555555555555"
CLIENT_ID = "docassist-graph-app"
CLIENT_SECRET = "graph-s3cr3t-client-secret"
SITE_ID = "contoso.sharepoint.com,aaaa,bbbb"
SITE_REF = "contoso.sharepoint.com:/sites/ops"
DRIVE_ID = "b!DOCS"
ROOT_ID = "01ROOT"
WEB = "https://contoso.sharepoint.com/sites/ops/Shared%20Documents"


@dataclass
class DriveEntry:
    name: str
    parent: str = ROOT_ID
    data: bytes | None = None
    """None for a folder."""


@dataclass
class GraphState:
    entries: dict[str, DriveEntry] = field(default_factory=dict)
    changed: dict[str, int] = field(default_factory=dict)
    """Item id → the change number of its last change (deletions included)."""
    deleted: set[str] = field(default_factory=set)
    clock: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    page_size: int = 2
    expired_delta: bool = False
    """Answer any delta token with 410 Gone (resyncChangesApplyDifferences)."""
    link_base: str = ""
    """Another server's base URL for every `@odata.nextLink` (a link off Graph)."""
    revoked: bool = False
    """Answer Graph requests with 401 InvalidAuthenticationToken."""
    secret_expired: bool = False
    """The token service refuses the client secret (AADSTS7000222)."""
    groups: dict[str, list[dict[str, str]]] = field(default_factory=dict)
    """User id → directory objects for `transitiveMemberOf`."""
    issued: list[str] = field(default_factory=list)
    failures: dict[str, list[tuple[int, dict[str, str]]]] = field(default_factory=dict)
    requests: list[tuple[str, str, dict[str, str]]] = field(default_factory=list)
    """(server, path, headers) of every request."""
    token_forms: list[dict[str, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def put(self, item_id: str, name: str, data: bytes | None = None,
            parent: str = ROOT_ID) -> None:
        self.entries[item_id] = DriveEntry(name, parent, data)
        self.deleted.discard(item_id)
        self.changed[item_id] = next(self.clock)

    def delete(self, item_id: str) -> None:
        del self.entries[item_id]
        self.deleted.add(item_id)
        self.changed[item_id] = next(self.clock)

    def graph_paths(self) -> list[str]:
        return [path for server, path, _ in self.requests if server == "graph"]

    def web_url(self, item_id: str) -> str:
        names: list[str] = []
        while item_id in self.entries and item_id != ROOT_ID:
            names.insert(0, self.entries[item_id].name)
            item_id = self.entries[item_id].parent
        return "/".join([WEB, *names])


def _item(state: GraphState, item_id: str, base: str) -> dict[str, Any]:
    reference = {"driveId": DRIVE_ID, "driveType": "documentLibrary", "siteId": SITE_ID}
    if item_id in state.deleted:
        return {"id": item_id, "deleted": {"state": "deleted"}, "parentReference": reference}
    entry = state.entries[item_id]
    shape: dict[str, Any] = {
        "id": item_id, "name": entry.name, "webUrl": state.web_url(item_id),
        "eTag": f'"{{{item_id}}},{state.changed[item_id]}"',
        "parentReference": {**reference, "id": entry.parent}}
    if entry.data is None:
        shape["folder"] = {"childCount": 0}
    else:
        digest = base64.b64encode(hashlib.sha1(entry.data).digest()).decode()
        shape.update(file={"mimeType": "text/plain", "hashes": {"quickXorHash": digest}},
                     size=len(entry.data))
        shape["@microsoft.graph.downloadUrl"] = (
            f"{base}/download/{item_id}?tempauth=v{state.changed[item_id]}")
    return shape


class FakeGraph:
    def __init__(self, tmp_path: Path) -> None:
        self.state = GraphState()
        self.ca = trustme.CA()
        self.ca_file = tmp_path / "test-ca.pem"
        self.ca.cert_pem.write_to_path(str(self.ca_file))
        self.state.entries[ROOT_ID] = DriveEntry("root", "", None)
        self.state.changed[ROOT_ID] = next(self.state.clock)
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.ca.issue_cert("127.0.0.1", "localhost").configure_cert(context)
        self.login = EntraTokenService(self.state, context).start()
        self.graph = GraphApi(self.state).start()

    @property
    def authority_host(self) -> str:
        return self.login.base_url

    @property
    def graph_url(self) -> str:
        return f"{self.graph.base_url}/v1.0"

    def environment(self) -> dict[str, str]:
        return {"DOCASSIST_GRAPH_TENANT_ID": TENANT, "DOCASSIST_GRAPH_CLIENT_ID": CLIENT_ID,
                "DOCASSIST_GRAPH_CLIENT_SECRET": CLIENT_SECRET,
                "DOCASSIST_GRAPH_URL": self.graph_url,
                "DOCASSIST_GRAPH_AUTHORITY_HOST": self.authority_host,
                "DOCASSIST_GRAPH_CA_BUNDLE": str(self.ca_file)}

    def stop(self) -> None:
        self.login.stop()
        self.graph.stop()


class EntraTokenService(FakeServer):
    """The token service (OpenID configuration, client-credentials tokens) over TLS."""

    handler = OneWriteHandler

    def __init__(self, state: GraphState, tls: ssl.SSLContext) -> None:
        super().__init__()
        self.state = state
        self.tls = tls

    def make_server(self, handler: type[QuietHandler]) -> LoopbackServer:  # type: ignore[override]
        return TlsLoopbackServer(handler, self.tls)

    @property
    def base_url(self) -> str:
        return super().base_url.replace("http://", "https://", 1)

    def answer(self, exchange: QuietHandler, request: Request) -> None:
        state = self.state
        state.requests.append(("login", request.path, request.headers))
        if request.method != "POST":
            if request.path == f"/{TENANT}/v2.0/.well-known/openid-configuration":
                base = f"{self.base_url}/{TENANT}"
                exchange.reply(200, json.dumps({
                    "token_endpoint": f"{base}/oauth2/v2.0/token",
                    "authorization_endpoint": f"{base}/oauth2/v2.0/authorize",
                    "issuer": f"{base}/v2.0", "token_endpoint_auth_methods_supported": [
                        "client_secret_post"]}).encode())
            else:
                exchange.reply(404, b'{"error": "not_found"}')
            return
        form = {key: values[0] for key, values in parse_qs(request.raw.decode()).items()}
        state.token_forms.append(form)
        if form.get("client_secret") != CLIENT_SECRET or state.secret_expired:
            exchange.reply(401, json.dumps({
                "error": "invalid_client", "error_description": "AADSTS7000222: The "
                "provided client secret keys for app are expired.\r\nTrace ID: 1"}).encode())
            return
        token = f"graph-access-token-{len(state.issued) + 1}"
        state.issued.append(token)
        exchange.reply(200, json.dumps({"token_type": "Bearer", "expires_in": 3599,
                                        "access_token": token}).encode())


class GraphApi(FakeServer):
    """Microsoft Graph: sites, drives, driveItem delta, downloads, group membership."""

    handler = OneWriteHandler

    def __init__(self, state: GraphState) -> None:
        super().__init__()
        self.state = state

    def answer(self, exchange: QuietHandler, request: Request) -> None:
        state = self.state
        parts = urlsplit(request.path)
        query = {key: values[0] for key, values in parse_qs(parts.query).items()}
        with state.lock:
            state.requests.append(("graph", request.path, request.headers))
            scripted = state.failures.get(parts.path)
            failure = scripted.pop(0) if scripted else None
        if failure is not None:
            exchange.reply(failure[0], b'{"error": {"code": "TooManyRequests"}}',
                           extra=failure[1])
        elif parts.path.startswith("/download/"):
            entry = state.entries.get(parts.path.removeprefix("/download/"))
            if entry is None or entry.data is None:
                exchange.reply(404, b"{}")
            else:
                exchange.reply(200, entry.data, "application/octet-stream")
        elif (request.headers.get("Authorization", "").removeprefix("Bearer ")
              not in state.issued) or state.revoked:
            exchange.reply(401, json.dumps({"error": {
                "code": "InvalidAuthenticationToken",
                "message": "Access token has expired or is not yet valid."}}).encode())
        else:
            answer = _route(state, parts.path.removeprefix("/v1.0"), query, self.base_url)
            if isinstance(answer, int):
                exchange.reply(answer, b'{"error": {"code": "resyncRequired"}}')
            else:
                exchange.reply(200, json.dumps(answer).encode())


def _route(state: GraphState, path: str, query: dict[str, str], base: str
           ) -> dict[str, Any] | int:
    if path in (f"/sites/{SITE_REF}", f"/sites/{SITE_ID}"):
        return {"id": SITE_ID, "displayName": "Operations"}
    if path == f"/sites/{SITE_ID}/drive":
        return {"id": DRIVE_ID, "name": "Documents"}
    if path == f"/sites/{SITE_ID}/drives":
        return {"value": [{"id": "b!OTHER", "name": "Archive"},
                          {"id": DRIVE_ID, "name": "Documents"}]}
    if path == f"/drives/{DRIVE_ID}/root/delta":
        return _delta(state, query, base)
    if path.startswith("/users/") and path.endswith("/transitiveMemberOf"):
        return _paged(state.groups.get(path.split("/")[2], []), query,
                      f"{base}/v1.0{path}")
    return 404


def _paged(values: list[Any], query: dict[str, str], url: str) -> dict[str, Any]:
    skip = int(query.get("$skiptoken", "0"))
    page = values[skip:skip + 2]
    answer: dict[str, Any] = {"value": page}
    if skip + 2 < len(values):
        answer["@odata.nextLink"] = f"{url}?$skiptoken={skip + 2}"
    return answer


def _delta(state: GraphState, query: dict[str, str], base: str) -> dict[str, Any] | int:
    token = query.get("token")
    if token is not None and state.expired_delta:
        return 410
    since = int(token or "0")
    ids = [item_id for item_id, number in sorted(state.changed.items(), key=lambda x: x[1])
           if number > since and (token is not None or item_id not in state.deleted)]
    offset = int(query.get("page", "0"))
    shown = ids[offset:offset + state.page_size]
    delta = f"{base}/v1.0/drives/{DRIVE_ID}/root/delta"
    answer: dict[str, Any] = {"value": [_item(state, item_id, base) for item_id in shown]}
    if offset + state.page_size < len(ids):
        following = f"{state.link_base or base}/v1.0/drives/{DRIVE_ID}/root/delta"
        answer["@odata.nextLink"] = f"{following}?token={since}&page={offset + state.page_size}" \
            if token is not None else f"{following}?page={offset + state.page_size}"
    else:
        answer["@odata.deltaLink"] = f"{delta}?token={max(state.changed.values())}"
    return answer
