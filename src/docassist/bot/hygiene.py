"""Request hygiene shared by the adapters: what a platform body must be before it is used."""

from __future__ import annotations

import re
from typing import Any, Final

_LONE_SURROGATE: Final = re.compile(r"[\ud800-\udfff]")
"""After JSON decoding, a valid pair is one character: what is left is a lone half, which
no encoder (SQLite, JSON, HTTP) can write."""


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
