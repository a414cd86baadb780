"""Reading Confluence spaces: Cloud REST v2 and Data Center REST, behind one small client.

Cloud: `GET /wiki/api/v2/spaces?keys=K`, then `/spaces/{id}/pages?body-format=storage`,
paged by the cursor in `_links.next`. Data Center: `GET /rest/api/space/{K}`, then
`/rest/api/content?spaceKey=K&type=page&expand=body.storage,version`, paged by
`_links.next` too. Attachments, on both: the CQL search `/rest/api/content/search?cql=
type=attachment AND space="K"&expand=version,container` (Cloud under /wiki).

Credentials come from the environment only: Cloud uses Basic auth with the account's email
and an API token, Data Center a personal access token as Bearer. They are sent, never stored
or logged.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final

import httpx

from docassist.core.errors import ConfigurationError
from docassist.core.limits import HTTP_READ_TIMEOUT_SECONDS
from docassist.core.sources import ConfluenceDeployment, ConfluenceSettings
from docassist.sources.limits import CONFLUENCE_PAGE_LIMIT
from docassist.sources.remote import RemoteError, RemoteHttp, resolve_link
from docassist.sources.web import USER_AGENT

EMAIL_ENV: Final = "DOCASSIST_CONFLUENCE_EMAIL"
"""Cloud: the Atlassian account's email (Basic auth user)."""
TOKEN_ENV: Final = "DOCASSIST_CONFLUENCE_TOKEN"
"""Cloud: an API token of that account; Data Center: a personal access token."""


@dataclass(frozen=True)
class ConfluencePage:
    page_id: str
    title: str
    space: str
    version: int
    storage: str
    """The body in storage format (XHTML)."""
    url: str


@dataclass(frozen=True)
class ConfluenceAttachment:
    attachment_id: str
    page_id: str
    title: str
    version: int
    download_url: str
    url: str


def _credentials(flavour: ConfluenceDeployment) -> httpx.Auth | dict[str, str]:
    token = os.environ.get(TOKEN_ENV)
    if not token:
        raise ConfigurationError(f"environment variable {TOKEN_ENV} is not set")
    if flavour is ConfluenceDeployment.DATACENTER:
        return {"Authorization": f"Bearer {token}"}
    email = os.environ.get(EMAIL_ENV)
    if not email:
        raise ConfigurationError(f"environment variable {EMAIL_ENV} is not set (Confluence "
                                 "Cloud authenticates with email + API token)")
    return httpx.BasicAuth(email, token)


class ConfluenceApi:
    def __init__(self, settings: ConfluenceSettings) -> None:
        self.base = settings.url
        self.flavour = settings.flavour
        credentials = _credentials(self.flavour)
        headers = {"User-Agent": USER_AGENT, "Accept": "application/json"}
        auth: httpx.Auth | None = None
        if isinstance(credentials, dict):
            headers.update(credentials)
        else:
            auth = credentials
        self.http = RemoteHttp(httpx.Client(
            headers=headers, auth=auth, follow_redirects=True,
            timeout=httpx.Timeout(HTTP_READ_TIMEOUT_SECONDS)), "Confluence", origin=self.base)

    def close(self) -> None:
        self.http.close()

    def _paged(self, url: str, params: dict[str, Any]) -> Iterator[dict[str, Any]]:
        """Every result of a listing, following `_links.next` (cursor or start)."""
        next_url: str | None = url
        query: dict[str, Any] | None = params
        while next_url:
            body = self.http.json(next_url, query)
            results = body.get("results")
            if not isinstance(results, list):
                raise RemoteError("a listing without results")
            yield from (result for result in results if isinstance(result, dict))
            link = (body.get("_links") or {}).get("next")
            next_url, query = (resolve_link(self.base, link), None) if link else (None, None)

    def pages(self, space: str) -> Iterator[ConfluencePage]:
        if self.flavour is ConfluenceDeployment.CLOUD:
            found = list(self._paged(f"{self.base}/api/v2/spaces", {"keys": space}))
            if not found:
                raise RemoteError(f"space {space} not found or not visible")
            listing = self._paged(f"{self.base}/api/v2/spaces/{found[0]['id']}/pages", {
                "body-format": "storage", "status": "current",
                "limit": CONFLUENCE_PAGE_LIMIT})
        else:
            self.http.json(f"{self.base}/rest/api/space/{space}")  # 404: not found or visible
            listing = self._paged(f"{self.base}/rest/api/content", {
                "spaceKey": space, "type": "page", "status": "current",
                "expand": "body.storage,version", "limit": CONFLUENCE_PAGE_LIMIT})
        for result in listing:
            yield self._page(result, space)

    def _page(self, result: dict[str, Any], space: str) -> ConfluencePage:
        body = (result.get("body") or {}).get("storage") or {}
        webui = (result.get("_links") or {}).get("webui") or f"/pages/{result['id']}"
        return ConfluencePage(
            page_id=str(result["id"]), title=str(result.get("title") or result["id"]),
            space=space, version=int((result.get("version") or {}).get("number") or 0),
            storage=str(body.get("value") or ""), url=resolve_link(self.base, webui))

    def attachments(self, space: str) -> Iterator[ConfluenceAttachment]:
        """Every attachment of the space in one paged CQL search (both deployments), so an
        unchanged space costs a few listings, not one request per page."""
        cql = f'type=attachment AND space="{space}"'
        listing = self._paged(f"{self.base}/rest/api/content/search", {
            "cql": cql, "expand": "version,container", "limit": CONFLUENCE_PAGE_LIMIT})
        for result in listing:
            links = result.get("_links") or {}
            container = result.get("container") or {}
            download = links.get("download")
            if not download or not container.get("id"):
                continue
            yield ConfluenceAttachment(
                attachment_id=str(result["id"]), page_id=str(container["id"]),
                title=str(result.get("title") or result["id"]),
                version=int((result.get("version") or {}).get("number") or 0),
                download_url=resolve_link(self.base, str(download)),
                url=resolve_link(self.base, str(links.get("webui") or download)))

    def download(self, attachment: ConfluenceAttachment) -> bytes:
        return self.http.download(attachment.download_url)
