"""Response bodies read within a limit while they stream and while they inflate: a body over
the limit is refused after reading at most the limit (plus one network chunk), never read
whole first and never truncated. Only the encodings DocAssist asks for are accepted."""

from __future__ import annotations

import zlib
from typing import Final

import httpx

ACCEPT_ENCODING: Final = "gzip, deflate"
"""Sent with every request: the encodings `read_bounded` inflates itself, in bounded steps."""
_GZIP_OR_ZLIB: Final = 32 + zlib.MAX_WBITS
"""zlib's automatic header detection: gzip or zlib-wrapped deflate."""


class BodyRefused(Exception):
    """A body DocAssist does not read: over its limit, or in an encoding it did not ask for."""


class TooLarge(BodyRefused):
    """A body over its limit (on the wire or inflated)."""


def read_bounded(response: httpx.Response, limit: int) -> bytes:
    encoding = response.headers.get("content-encoding", "identity").strip().lower()
    inflater = _inflater(encoding)
    declared = response.headers.get("content-length", "")
    if inflater is None and declared.isdigit() and int(declared) > limit:
        raise TooLarge(f"too large ({int(declared)} bytes, limit {limit})")
    body = bytearray()
    try:
        for raw in response.iter_raw():
            pending = raw
            while pending:
                if inflater is None:
                    piece, pending = pending, b""
                else:  # at most what still fits, plus one byte to tell "over"
                    piece = inflater.decompress(pending, limit - len(body) + 1)
                    pending = inflater.unconsumed_tail
                body += piece
                _check(len(body), limit, inflater is not None)
                if not piece:
                    break
        if inflater is not None:
            body += inflater.flush()
            _check(len(body), limit, True)
    except zlib.error as error:
        raise BodyRefused(f"a broken {encoding} body ({error})") from error
    return bytes(body)


def _check(size: int, limit: int, inflated: bool) -> None:
    if size > limit:
        raise TooLarge(f"too large (over {limit} bytes{', inflated' if inflated else ''})")


def _inflater(encoding: str) -> zlib._Decompress | None:
    if encoding in ("identity", ""):
        return None
    if encoding in ("gzip", "x-gzip", "deflate"):
        return zlib.decompressobj(_GZIP_OR_ZLIB)
    raise BodyRefused(f"unsupported content encoding {encoding!r}")
