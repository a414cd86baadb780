"""Request hygiene shared by the adapters: what a platform body must be before it is used."""

from __future__ import annotations

import re
from typing import Any, Final

_LONE_SURROGATE: Final = re.compile(r"[\ud800-\udfff]")
"""After JSON decoding, a valid pair is one character: what is left is a lone half, which
no encoder (SQLite, JSON, HTTP) can write."""
_SURROGATE_IN_JSON: Final = re.compile(r"[\ud800-\udfff]|\\u[dD][89a-fA-F]")
"""What JSON text needs to decode to a surrogate: the code point itself or its escape (a
valid pair is escaped too; such text is then looked at in full)."""


class MalformedRequest(ValueError):
    """A request whose content is not what the platform promises: answered 400, nothing run."""


def without_lone_surrogates(value: Any) -> Any:
    """`value` (decoded JSON) with every lone surrogate replaced by U+FFFD, as a lenient
    UTF-8 decoder would: the message stays readable and can be stored and answered."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {without_lone_surrogates(k): without_lone_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [without_lone_surrogates(item) for item in value]
    return value


def json_without_lone_surrogates(text: str, decoded: Any) -> Any:
    """`decoded` (the JSON `text`, parsed) as `without_lone_surrogates` gives it, walked only
    when the text could hold a surrogate: on the ack path most bodies need no walk."""
    if _SURROGATE_IN_JSON.search(text) is None:
        return decoded
    return without_lone_surrogates(decoded)
