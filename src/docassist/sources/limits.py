"""Every numeric limit of document sources: web crawling, remote connectors, sync leases."""

from typing import Final

WEB_MAX_PAGES: Final = 500
"""Pages one web source may hold (sitemap entries beyond it, or crawled links, are left out
with a note): a runaway sitemap or a calendar of generated pages cannot fill the catalog."""

WEB_MAX_DEPTH: Final = 3
"""Links followed from a web source's start page (the start page is depth 0)."""

WEB_REQUEST_ATTEMPTS: Final = 3
"""Tries per web request when the site answers 429 or 5xx (or the connection drops)."""

WEB_BACKOFF_SECONDS: Final = 0.5
"""First wait between tries after a 5xx; doubled each time."""

WEB_MAX_RETRY_AFTER_SECONDS: Final = 30.0
"""A site's Retry-After is obeyed up to this; longer waits fail the page for this sync."""

SYNC_LEASE_SECONDS: Final = 900
"""How long a process holds a source's sync lease; a process that died frees it after this."""

REMOTE_MAX_ITEMS: Final = 20_000
"""Pages, attachments or files one Confluence or SharePoint source may hold; the rest are left
out with a note (a mistyped space or a whole tenant's drive cannot flood the catalog)."""

CONFLUENCE_PAGE_LIMIT: Final = 100
"""Results asked for per Confluence listing request (Cloud allows up to 250 with bodies,
Data Center caps expanded bodies lower; the `next` link is followed either way)."""
