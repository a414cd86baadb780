"""A fake of an external documentation web site on 127.0.0.1 port 0: pages, a sitemap,
robots.txt, ETag validators, and scripted failures (429, 5xx) per path."""

from __future__ import annotations

import hashlib
import threading
import time
from collections import Counter
from dataclasses import dataclass, field

from docassist_testkit.fakes.loopback import FakeServer, OneWriteHandler, QuietHandler, Request

HOLD_SECONDS = 30.0
"""A held request is answered after this at the latest (a test that failed frees it)."""


@dataclass
class SiteState:
    pages: dict[str, str] = field(default_factory=dict)
    """Path → HTML."""
    robots: str = ""
    files: dict[str, tuple[str, bytes]] = field(default_factory=dict)
    """Path → (content type, bytes): what is not a page (an archive, plain text)."""
    failures: dict[str, list[tuple[int, dict[str, str]]]] = field(default_factory=dict)
    """Path → statuses (with headers) to answer before the page, one per request."""
    sitemap: bool = True
    hits: Counter[str] = field(default_factory=Counter)
    headers_seen: list[dict[str, str]] = field(default_factory=list)
    arrivals: list[tuple[float, str]] = field(default_factory=list)
    """(time.monotonic(), path) of every request, in arrival order."""
    held: dict[str, threading.Event] = field(default_factory=dict)
    """Path → an event its requests wait for before they are answered (a slow site)."""
    redirects: dict[str, str] = field(default_factory=dict)
    """Path → Location answered with 302 (another port stands in for another host)."""
    sitemap_xml: bytes | None = None
    """The sitemap's body instead of one listing every page (an index, a hostile one)."""
    streams: dict[str, int] = field(default_factory=dict)
    """Path → a text/html body of that many bytes, written in chunks as it is read."""
    encoded: dict[str, tuple[str, bytes]] = field(default_factory=dict)
    """Path → (Content-Encoding, body as sent): a gzip bomb."""
    lock: threading.Lock = field(default_factory=threading.Lock)


def page(title: str, *sections: tuple[str, str], stamp: str = "", links: str = "") -> str:
    """HTML with navigation and a footer (both dropped by the reader) around the sections."""
    body = "".join(f"<h2>{heading}</h2><p>{text}</p>" for heading, text in sections)
    return (f"<html lang='en'><head><title>{title}</title></head><body>"
            f"<nav><a href='/'>Home</a>{links}</nav><h1>{title}</h1>{body}"
            f"<footer>Generated {stamp}</footer></body></html>")


class WebSite(FakeServer):
    """Started when made (as the web-sync tests use it); `stop()` ends it."""

    handler = OneWriteHandler

    def __init__(self) -> None:
        super().__init__()
        self.state = SiteState()
        self.start()

    def answer(self, exchange: QuietHandler, request: Request) -> None:
        state = self.state
        path = request.path.split("?", 1)[0]
        with state.lock:
            state.hits[path] += 1
            state.headers_seen.append(request.headers)
            state.arrivals.append((time.monotonic(), path))
            scripted = state.failures.get(path)
            failure = scripted.pop(0) if scripted else None
            hold = state.held.get(path)
        if hold is not None:
            hold.wait(HOLD_SECONDS)
        if failure is not None:
            exchange.reply(failure[0], b"busy", "text/plain", failure[1])
        elif path in state.redirects:
            exchange.reply(302, b"", "text/plain", {"Location": state.redirects[path]})
        elif path in state.streams:
            _stream(exchange, state.streams[path])
        elif path in state.encoded:
            encoding, data = state.encoded[path]
            exchange.reply(200, data, "text/html", {"Content-Encoding": encoding})
        elif path == "/sitemap.xml" and state.sitemap_xml is not None:
            exchange.reply(200, state.sitemap_xml, "application/xml")
        elif path == "/robots.txt":
            _robots(exchange, state.robots)
        elif path == "/sitemap.xml" and state.sitemap:
            exchange.reply(200, _sitemap(self.base_url, list(state.pages)), "application/xml")
        elif path in state.pages:
            _page(exchange, state.pages[path])
        elif path in state.files:
            exchange.reply(200, state.files[path][1], state.files[path][0])
        else:
            exchange.reply(404, b"not found", "text/plain")


STREAM_CHUNK = 1 << 20


def _stream(exchange: QuietHandler, size: int) -> None:
    """A huge page written a megabyte at a time, without a Content-Length (chunked), so the
    reader learns its size only by reading; a client that stops reading ends it."""
    exchange.send_response(200)
    exchange.send_header("Content-Type", "text/html")
    exchange.send_header("Transfer-Encoding", "chunked")
    exchange.end_headers()
    block = b"<p>" + b"x" * (STREAM_CHUNK - 7) + b"</p>"
    try:
        for _ in range(size // STREAM_CHUNK):
            exchange.wfile.write(b"%x\r\n%s\r\n" % (len(block), block))
        exchange.wfile.write(b"0\r\n\r\n")
    except OSError:
        exchange.close_connection = True


def gzip_bomb(inflated: int) -> bytes:
    """`inflated` zero bytes, gzip-compressed (about a thousandth of it on the wire)."""
    import zlib

    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = bytes(STREAM_CHUNK)
    parts = [packer.compress(block) for _ in range(inflated // STREAM_CHUNK)]
    return b"".join(parts) + packer.flush()


def _robots(exchange: QuietHandler, robots: str) -> None:
    if robots:
        exchange.reply(200, robots.encode(), "text/plain")
    else:
        exchange.reply(404, b"", "text/plain")


def _page(exchange: QuietHandler, html: str) -> None:
    data = html.encode()
    etag = '"' + hashlib.sha256(data).hexdigest()[:16] + '"'
    if exchange.headers.get("If-None-Match") == etag:
        exchange.reply(304, b"", "text/html", {"ETag": etag})
    else:
        exchange.reply(200, data, "text/html; charset=utf-8", {"ETag": etag})


def _sitemap(base: str, paths: list[str]) -> bytes:
    entries = "".join(f"<url><loc>{base}{path}</loc></url>" for path in paths)
    return ('<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/'
            f'schemas/sitemap/0.9">{entries}</urlset>').encode()
