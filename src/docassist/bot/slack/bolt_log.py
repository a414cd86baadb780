"""Bolt's one warning that says nothing to an operator.

Bolt's `App` reads SLACK_BOT_TOKEN from the environment whenever no `token` is passed, and
warns "As you gave `client` as well, `token` will be unused." when a `client` comes too.
We always pass our own client (kept-alive connections, our retries: web_api.py), and it holds
that same token, so the warning is printed at every start (once per process: `serve` showed
it three times) and means nothing. Passing `token=None` cannot stop it (Bolt falls back to
the environment), and clearing the variable would hide it from the turn processes, so
exactly that message is dropped on Bolt's `App` logger; every other Bolt warning stays.
"""

from __future__ import annotations

import logging
from typing import Final

from slack_bolt.logger.messages import warning_client_prioritized_and_token_skipped

BOLT_APP_LOGGER: Final = "slack_bolt.App"
TOKEN_UNUSED: Final = warning_client_prioritized_and_token_skipped()


class _TokenUnusedFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != TOKEN_UNUSED


_FILTER: Final = _TokenUnusedFilter()


def quiet_token_warning() -> None:
    """Drop Bolt's "token will be unused" warning (idempotent)."""
    logging.getLogger(BOLT_APP_LOGGER).addFilter(_FILTER)
