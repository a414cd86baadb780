"""Fetching a web source over httpx: robots.txt, sitemaps, links, conditional requests, and
bounded retries (429 with Retry-After, 5xx with backoff).

Only what a sync needs to decide is returned: a page's body and validators, "not modified",
or "gone"; anything else is a FetchError that fails that page for this sync only.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass
from typing import Final
from urllib.parse import urldefrag, urljoin, urlsplit
from urllib.robotparser import RobotFileParser
from xml.etree import ElementTree

import httpx

from docassist.core.errors import ConfigurationError
from docassist.core.limits import (
    HTTP_READ_TIMEOUT_SECONDS,
    MAX_DOCUMENT_BYTES,
    WEB_BACKOFF_SECONDS,
    WEB_MAX_RETRY_AFTER_SECONDS,
    WEB_REQUEST_ATTEMPTS,
)
from docassist.core.sources import WebSettings

logger = logging.getLogger(__name__)

USER_AGENT: Final = "DocAssist"
GONE_STATUSES: Final = frozenset({404, 410})
_SITEMAP_NS: Final = "{http://www.sitemaps.org/schemas/sitemap/0.9}"


class FetchError(Exception):
    """A request that did not give a usable answer after the bounded tries."""


@dataclass(frozen=True)
class Page:
    url: str
    status: int
    body: bytes = b""
    content_type: str = ""
    etag: str | None = None
    last_modified: str | None = None

    @property
    def not_modified(self) -> bool:
        return self.status == 304

    @property
    def gone(self) -> bool:
        return self.status in GONE_STATUSES


class WebFetcher:
    """One sync's HTTP client for one site. The Authorization header comes from the
    environment variable the source names; it is sent, never stored or logged."""

    def __init__(self, settings: WebSettings, *, sleep_cap: float = WEB_MAX_RETRY_AFTER_SECONDS,
                 backoff: float = WEB_BACKOFF_SECONDS) -> None:
        headers = {"User-Agent": USER_AGENT}
        if settings.auth_env:
            secret = os.environ.get(settings.auth_env)
            if not secret:
                raise ConfigurationError(f"environment variable {settings.auth_env} is not set")
            headers["Authorization"] = secret
        self.client = httpx.Client(headers=headers, follow_redirects=True,
                                   timeout=httpx.Timeout(HTTP_READ_TIMEOUT_SECONDS))
        self.sleep_cap = sleep_cap
        self.backoff = backoff
        self.robots = RobotFileParser()
        self.robots.parse([])

    def close(self) -> None:
        self.client.close()

    def load_robots(self, site_url: str) -> None:
        """robots.txt of the site; missing (4xx) means everything is allowed."""
        parts = urlsplit(site_url)
        page = self.get(f"{parts.scheme}://{parts.netloc}/robots.txt")
        lines = page.body.decode("utf-8", "replace").splitlines() if page.status == 200 else []
        self.robots = RobotFileParser()
        self.robots.parse(lines)

    def allowed(self, url: str) -> bool:
        return self.robots.can_fetch(USER_AGENT, url)

    def get(self, url: str, etag: str | None = None,
            last_modified: str | None = None) -> Page:
        headers = {}
        if etag:
            headers["If-None-Match"] = etag
        if last_modified:
            headers["If-Modified-Since"] = last_modified
        for attempt in range(1, WEB_REQUEST_ATTEMPTS + 1):
            try:
                response = self.client.get(url, headers=headers)
            except httpx.HTTPError as error:
                reason = f"{type(error).__name__}"
                wait = self.backoff * 2 ** (attempt - 1)
            else:
                if response.status_code < 400 or response.status_code in GONE_STATUSES:
                    return _page(url, response)
                reason = f"HTTP {response.status_code}"
                if response.status_code != 429 and response.status_code < 500:
                    raise FetchError(reason)
                wait = _retry_wait(response, self.backoff * 2 ** (attempt - 1))
                if wait > self.sleep_cap:
                    raise FetchError(f"{reason}, Retry-After {wait:.0f} s is too long")
            if attempt < WEB_REQUEST_ATTEMPTS:
                logger.info("retrying %s in %.1f s (%s)", url, wait, reason)
                time.sleep(wait)
        raise FetchError(f"{reason} after {WEB_REQUEST_ATTEMPTS} tries")

    def sitemap_urls(self, url: str, depth: int = 0) -> list[str]:
        """Page URLs of a sitemap, following a sitemap index one level down."""
        page = self.get(url)
        if page.status != 200:
            raise FetchError(f"sitemap {url}: HTTP {page.status}")
        try:
            root = ElementTree.fromstring(page.body)
        except ElementTree.ParseError as error:
            raise FetchError(f"sitemap {url}: not XML ({error})") from error
        locations = [(element.text or "").strip() for element in root.iter(f"{_SITEMAP_NS}loc")]
        if root.tag == f"{_SITEMAP_NS}sitemapindex" and depth == 0:
            return [page_url for child in locations if child
                    for page_url in self.sitemap_urls(child, depth + 1)]
        return [location for location in locations if location]


def _page(url: str, response: httpx.Response) -> Page:
    body = response.content if response.status_code == 200 else b""
    if len(body) > MAX_DOCUMENT_BYTES:
        raise FetchError(f"too large ({len(body)} bytes, limit {MAX_DOCUMENT_BYTES})")
    return Page(url=url, status=response.status_code, body=body,
                content_type=response.headers.get("content-type", ""),
                etag=response.headers.get("etag"),
                last_modified=response.headers.get("last-modified"))


def _retry_wait(response: httpx.Response, default: float) -> float:
    value = response.headers.get("retry-after", "")
    try:
        return max(0.0, float(value)) if value else default
    except ValueError:
        return default  # an HTTP date: rare for these servers; the backoff stands in


def same_site_links(base_url: str, html: bytes) -> list[str]:
    """Links of a page to pages of the same site (scheme and host), without fragments."""
    from bs4 import BeautifulSoup

    site = urlsplit(base_url)
    links: list[str] = []
    for anchor in BeautifulSoup(html, "html.parser").find_all("a", href=True):
        target, _fragment = urldefrag(urljoin(base_url, str(anchor["href"])))
        parts = urlsplit(target)
        if (parts.scheme, parts.netloc) == (site.scheme, site.netloc) and target not in links:
            links.append(target)
    return links
