"""Fetching a web source over httpx: robots.txt, sitemaps, links, conditional requests,
redirects followed hop by hop inside the source's walls, bodies read within their limit, and
bounded retries (429 with Retry-After, 5xx with backoff).

Only what a sync needs to decide is returned: a page's body and validators, "not modified",
or "gone"; anything else is a FetchError that fails that page for this sync only.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass, field, replace
from typing import Final
from urllib.parse import urldefrag, urljoin, urlsplit
from urllib.robotparser import RobotFileParser
from xml.etree import ElementTree

import httpx
from defusedxml import ElementTree as SafeElementTree

from docassist.core.documents import redact_url
from docassist.core.errors import ConfigurationError
from docassist.core.limits import HTTP_READ_TIMEOUT_SECONDS, MAX_DOCUMENT_BYTES
from docassist.core.sources import WebSettings
from docassist.sources.bodies import ACCEPT_ENCODING, read_bounded
from docassist.sources.limits import (
    WEB_BACKOFF_SECONDS,
    WEB_MAX_RETRY_AFTER_SECONDS,
    WEB_REQUEST_ATTEMPTS,
)
from docassist.sources.walls import (
    MAX_REDIRECTS,
    MAX_SITEMAP_BYTES,
    OffLimits,
    Resolver,
    WalledTransport,
    Walls,
    is_off_limits,
    system_resolve,
)

logger = logging.getLogger(__name__)

USER_AGENT: Final = "DocAssist"
GONE_STATUSES: Final = frozenset({404, 410})
REDIRECT_STATUSES: Final = frozenset({301, 302, 303, 307, 308})
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


@dataclass(frozen=True)
class Listing:
    """A sitemap's page URLs, and what it listed that the source may not fetch (URL, why)."""

    urls: list[str]
    refused: list[tuple[str, str]] = field(default_factory=list)


class WebFetcher:
    """One sync's HTTP client for one site, inside the source's walls (sources/walls.py).
    The Authorization header comes from the environment variable the source names; it is
    sent to the origin only, never stored or logged."""

    def __init__(self, settings: WebSettings, *, resolve: Resolver = system_resolve,
                 sleep_cap: float = WEB_MAX_RETRY_AFTER_SECONDS,
                 backoff: float = WEB_BACKOFF_SECONDS) -> None:
        self.secret: str | None = None
        if settings.auth_env:
            self.secret = os.environ.get(settings.auth_env)
            if not self.secret:
                raise ConfigurationError(f"environment variable {settings.auth_env} is not set")
        try:
            self.walls = Walls.for_source(settings.url, settings.allow_hosts, resolve)
        except OffLimits as error:
            raise ConfigurationError(f"{redact_url(settings.url)}: {error}") from None
        self.client = httpx.Client(
            transport=WalledTransport(self.walls), follow_redirects=False,
            headers={"User-Agent": USER_AGENT, "Accept-Encoding": ACCEPT_ENCODING},
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

    def get(self, url: str, etag: str | None = None, last_modified: str | None = None,
            limit: int = MAX_DOCUMENT_BYTES) -> Page:
        """The page at `url`, following redirects hop by hop inside the walls. OffLimits
        (a hop off the walls) and BodyRefused (over `limit`) are refusals, not failures."""
        headers = {}
        if etag:
            headers["If-None-Match"] = etag
        if last_modified:
            headers["If-Modified-Since"] = last_modified
        visited: list[str] = []
        current = url
        for _hop in range(MAX_REDIRECTS + 1):
            self.walls.check_url(current)
            page, location = self._get_once(current, headers, limit)
            if location is None:
                return replace(page, url=url)
            visited.append(current)
            current, _fragment = urldefrag(urljoin(current, location))
            if current in visited:
                raise FetchError(f"a redirect loop ({len(visited)} hops)")
        raise FetchError(f"more than {MAX_REDIRECTS} redirects")

    def _headers(self, url: str, extra: dict[str, str]) -> dict[str, str]:
        if self.secret and self.walls.credentials_for(url):
            return {**extra, "Authorization": self.secret}
        return extra

    def _get_once(self, url: str, headers: dict[str, str], limit: int
                  ) -> tuple[Page, str | None]:
        """One URL with the bounded retries: the page, or where it redirects."""
        for attempt in range(1, WEB_REQUEST_ATTEMPTS + 1):
            wait = self.backoff * 2 ** (attempt - 1)
            try:
                with self.client.stream("GET", url, headers=self._headers(url, headers)) as r:
                    status = r.status_code
                    if status in REDIRECT_STATUSES and r.headers.get("location"):
                        return Page(url, status), r.headers["location"]
                    if status < 400 or status in GONE_STATUSES:
                        return _page(url, r, limit), None
                    reason = f"HTTP {status}"
                    if status != 429 and status < 500:
                        raise FetchError(reason)
                    wait = _retry_wait(r, wait)
                    if wait > self.sleep_cap:
                        raise FetchError(f"{reason}, Retry-After {wait:.0f} s is too long")
            except httpx.HTTPError as error:
                refused = is_off_limits(error)
                if refused is not None:
                    raise OffLimits(refused) from None
                reason = f"{type(error).__name__}"
            if attempt < WEB_REQUEST_ATTEMPTS:
                logger.info("retrying %s in %.1f s (%s)", url, wait, reason)
                time.sleep(wait)
        raise FetchError(f"{reason} after {WEB_REQUEST_ATTEMPTS} tries")

    def sitemap_urls(self, url: str, depth: int = 0) -> Listing:
        """Page URLs of a sitemap, following a sitemap index one level down. The XML is
        bounded (MAX_SITEMAP_BYTES) and read without a DTD or entities."""
        page = self.get(url, limit=MAX_SITEMAP_BYTES)
        if page.status != 200:
            raise FetchError(f"sitemap {url}: HTTP {page.status}")
        try:
            root = SafeElementTree.fromstring(page.body, forbid_dtd=True)
        except (ElementTree.ParseError, ValueError) as error:
            raise FetchError(f"sitemap {url}: not plain XML ({error})") from error
        locations = [(element.text or "").strip() for element in root.iter(f"{_SITEMAP_NS}loc")]
        if root.tag != f"{_SITEMAP_NS}sitemapindex" or depth > 0:
            return Listing([location for location in locations if location])
        listing = Listing([])
        for child in filter(None, locations):
            try:
                found = self.sitemap_urls(child, depth + 1)
            except OffLimits as error:
                listing.refused.append((child, str(error)))
                continue
            listing.urls.extend(found.urls)
            listing.refused.extend(found.refused)
        return listing


def _page(url: str, response: httpx.Response, limit: int) -> Page:
    body = read_bounded(response, limit) if response.status_code == 200 else b""
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


def links_within(walls: Walls, base_url: str, html: bytes) -> list[str]:
    """Links of a page that the source may fetch (its origin, allowed hosts), without
    fragments; links elsewhere are not followed, nor counted (every page links out)."""
    from bs4 import BeautifulSoup

    links: list[str] = []
    for anchor in BeautifulSoup(html, "html.parser").find_all("a", href=True):
        target, _fragment = urldefrag(urljoin(base_url, str(anchor["href"])))
        if target in links:
            continue
        try:
            walls.check_url(target)
        except OffLimits:
            continue
        links.append(target)
    return links
