"""A fake of an external documentation web site on 127.0.0.1 port 0: pages, a sitemap,
robots.txt, ETag validators, and scripted failures (429, 5xx) per path."""

from __future__ import annotations

import hashlib
import threading
from collections import Counter
from dataclasses import dataclass, field

from tests.loopback import LoopbackServer, QuietHandler


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
    lock: threading.Lock = field(default_factory=threading.Lock)


def page(title: str, *sections: tuple[str, str], stamp: str = "", links: str = "") -> str:
    """HTML with navigation and a footer (both dropped by the reader) around the sections."""
    body = "".join(f"<h2>{heading}</h2><p>{text}</p>" for heading, text in sections)
    return (f"<html lang='en'><head><title>{title}</title></head><body>"
            f"<nav><a href='/'>Home</a>{links}</nav><h1>{title}</h1>{body}"
            f"<footer>Generated {stamp}</footer></body></html>")


class WebSite:
    def __init__(self) -> None:
        self.state = SiteState()
        state = self.state

        class Handler(QuietHandler):
            def reply(self, status: int, data: bytes, content_type: str = "text/plain",
                      extra: dict[str, str] | None = None) -> None:
                """Headers and body in one write: two writes meet the client's delayed ACK
                (~40 ms a response), which would be the fake's time, not the sync's."""
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                for name, value in (extra or {}).items():
                    self.send_header(name, value)
                self._headers_buffer.append(b"\r\n" + data)  # type: ignore[attr-defined]
                self.flush_headers()

            def do_GET(self) -> None:
                path = self.path.split("?", 1)[0]
                with state.lock:
                    state.hits[path] += 1
                    state.headers_seen.append(dict(self.headers))
                    scripted = state.failures.get(path)
                    failure = scripted.pop(0) if scripted else None
                if failure is not None:
                    self.reply(failure[0], b"busy", "text/plain", failure[1])
                elif path == "/robots.txt":
                    self._robots()
                elif path == "/sitemap.xml" and state.sitemap:
                    self.reply(200, _sitemap(self._base(), list(state.pages)), "application/xml")
                elif path in state.pages:
                    self._page(state.pages[path])
                elif path in state.files:
                    self.reply(200, state.files[path][1], state.files[path][0])
                else:
                    self.reply(404, b"not found", "text/plain")

            def _base(self) -> str:
                host, port = self.server.server_address[:2]
                return f"http://{host!s}:{port}"

            def _robots(self) -> None:
                if state.robots:
                    self.reply(200, state.robots.encode(), "text/plain")
                else:
                    self.reply(404, b"", "text/plain")

            def _page(self, html: str) -> None:
                data = html.encode()
                etag = '"' + hashlib.sha256(data).hexdigest()[:16] + '"'
                if self.headers.get("If-None-Match") == etag:
                    self.reply(304, b"", "text/html", {"ETag": etag})
                else:
                    self.reply(200, data, "text/html; charset=utf-8", {"ETag": etag})

        self.server = LoopbackServer(Handler)

    @property
    def url(self) -> str:
        return self.server.base_url

    def stop(self) -> None:
        self.server.stop()


def _sitemap(base: str, paths: list[str]) -> bytes:
    entries = "".join(f"<url><loc>{base}{path}</loc></url>" for path in paths)
    return ('<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/'
            f'schemas/sitemap/0.9">{entries}</urlset>').encode()
