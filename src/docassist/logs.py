"""Logs go to stderr. By default Python's plain lines (warnings and errors);
`DOCASSIST_LOG_FORMAT=json` gives one JSON object per line at INFO and above — `time`,
`level`, `logger`, `event` (the message) and, where a turn is concerned, `turn_id`,
`conversation` (a hash of the conversation key), `status`, `decision`, `duration_ms`.

Stdlib logging with a small formatter rather than python-json-logger: twenty lines, no
dependency, and the one thing a library would not do for us — every value of a secret
variable in the environment is replaced by `[redacted]` wherever it appears, in JSON and
plain lines alike. Nothing logs a
user's text (the turn log line carries ids and hashes only), so no raw question reaches a
log whatever DOCASSIST_SAVE_RAW says.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
from datetime import UTC, datetime
from typing import Final

LOG_FORMAT_ENV: Final = "DOCASSIST_LOG_FORMAT"
LOG_LEVEL_ENV: Final = "DOCASSIST_LOG_LEVEL"
LOG_LEVELS: Final = ("DEBUG", "INFO", "WARNING", "ERROR")
PLAIN_FORMAT: Final = "%(levelname)s %(name)s %(message)s"
TURN_FIELDS: Final = ("turn_id", "conversation", "status", "decision", "duration_ms")
SECRET_NAME: Final = re.compile(r"(TOKEN|SECRET|PASSWORD|API_KEY|_KEY)$")
QUIET_LOGGERS: Final = ("httpx", "httpcore", "aiohttp.access")
REPAIR_LOGGERS: Final = ("pypdf",)
"""Libraries whose warnings tell how they worked around a malformed file they then read
(pypdf: "Ignoring wrong pointing object …", "Multiple definitions in dictionary …"): lines
mixed into ours that ask nothing of the operator, so shown at DEBUG only. A file they cannot
read at all still fails, and the indexer's note names it."""
MIN_SECRET_CHARS: Final = 6
"""Shorter values ("true", "0") would redact ordinary words."""


def secret_values(environ: dict[str, str] | None = None) -> list[str]:
    """Values of the environment's secret-looking variables, longest first."""
    env = os.environ if environ is None else environ
    values = {value for name, value in env.items()
              if SECRET_NAME.search(name) and len(value) >= MIN_SECRET_CHARS}
    return sorted(values, key=len, reverse=True)


def redact(text: str, secrets: list[str]) -> str:
    for secret in secrets:
        text = text.replace(secret, "[redacted]")
    return text


class RedactingFormatter(logging.Formatter):
    """Plain lines, their tracebacks included, with every secret value replaced."""

    def __init__(self, secrets: list[str], fmt: str | None = None) -> None:
        super().__init__(fmt)
        self.secrets = secrets

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record), self.secrets)


class JsonFormatter(logging.Formatter):
    def __init__(self, secrets: list[str]) -> None:
        super().__init__()
        self.secrets = secrets

    def _clean(self, text: str) -> str:
        return redact(text, self.secrets)

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(), "logger": record.name,
            "event": self._clean(record.getMessage())}
        for name in TURN_FIELDS:
            if name in record.__dict__:
                entry[name] = record.__dict__[name]
        if record.exc_info:
            entry["error"] = self._clean(self.formatException(record.exc_info))
        return json.dumps(entry, ensure_ascii=False, default=str)


def json_logs(environ: dict[str, str] | None = None) -> bool:
    """Is DOCASSIST_LOG_FORMAT=json (then stderr holds JSON lines only)?"""
    env = os.environ if environ is None else environ
    return env.get(LOG_FORMAT_ENV, "").strip().lower() == "json"


class LogLevelError(ValueError):
    """DOCASSIST_LOG_LEVEL names no level."""


def log_level(environ: dict[str, str] | None = None) -> str | None:
    """DOCASSIST_LOG_LEVEL (upper case), None when unset; LogLevelError when it is not one
    of LOG_LEVELS."""
    env = os.environ if environ is None else environ
    value = env.get(LOG_LEVEL_ENV, "").strip().upper()
    if not value:
        return None
    if value not in LOG_LEVELS:
        raise LogLevelError(f"{LOG_LEVEL_ENV}={env[LOG_LEVEL_ENV]!r} is not a log level "
                            f"(one of {', '.join(LOG_LEVELS)})")
    return value


def configure_logging(environ: dict[str, str] | None = None) -> None:
    """JSON lines on stderr when DOCASSIST_LOG_FORMAT=json (INFO and above unless
    DOCASSIST_LOG_LEVEL says otherwise); otherwise Python's plain lines, at
    DOCASSIST_LOG_LEVEL when it is set. Every DocAssist process reads the same two
    variables, so turn processes log like the server that started them."""
    env = dict(os.environ if environ is None else environ)
    level = log_level(env)
    secrets = secret_values(env)
    for library in REPAIR_LOGGERS:  # NOTSET: at DEBUG they follow the root like ours
        logging.getLogger(library).setLevel(logging.NOTSET if level == "DEBUG" else logging.ERROR)
    if not json_logs(env):
        if level is not None:
            plain = logging.StreamHandler(sys.stderr)
            plain.setFormatter(RedactingFormatter(secrets, PLAIN_FORMAT))
            logging.basicConfig(level=level, handlers=[plain])
        elif logging.lastResort is not None:  # Python's own warnings-and-errors handler
            logging.lastResort.setFormatter(RedactingFormatter(secrets))
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter(secrets))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level or logging.INFO)
    logging.captureWarnings(True)  # warnings too, as JSON lines
    if level != "DEBUG":  # a line per outgoing request would drown the turns
        for chatty in QUIET_LOGGERS:
            logging.getLogger(chatty).setLevel(logging.WARNING)
