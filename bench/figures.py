"""How a bench prints its figures: one JSON document with `--json` (stdout holds nothing
else), else one `key: value` line each."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


def print_figures(figures: Mapping[str, Any], as_json: bool) -> None:
    if as_json:
        print(json.dumps(figures))
        return
    for key, value in figures.items():
        print(f"{key}: {value}")
