"""A one-page handbook whose page changes between syncs: the stale-note tests of both
platforms (the `zebra` fixture in conftest.py syncs version 1 as a folder source)."""

from __future__ import annotations

from typing import Final

ZEBRA_V1: Final = "# Zebra alarm\n\n## Paging\n\nPage the zebra on-call team through PagerDuty.\n"
ZEBRA_V2: Final = (
    "# Zebra alarm\n\n## Paging\n\nPage the zebra on-call team through Opsgenie now.\n")
QUESTION: Final = "How do I page the zebra on-call team?"
