"""Trace exports (JSONL and CSV) and purging, by time range and conversation.

Rows carry no user-written or generated text unless `save_raw` was on when they were
written (the `raw` column); question, answer and user are SHA-256 hashes.
"""

from __future__ import annotations

import csv
import json
import logging
import re
import threading
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Final, Literal, TextIO

from pydantic import BaseModel

from docassist.core.errors import StorageError, StorageUnavailableError
from docassist.core.holder import PROCESS_HOLDER
from docassist.core.limits import MAX_RETENTION_DAYS
from docassist.core.ports import TraceLog
from docassist.storage.connection import iso_text
from docassist.storage.limits import (
    RETENTION_PERIOD_SECONDS,
    RETENTION_RETRY_SECONDS,
    SCHEDULE_LEASE_SECONDS,
)
from docassist.storage.privacy import Erasure
from docassist.storage.roles import Retention, TraceEraser

logger = logging.getLogger(__name__)

ExportFormat = Literal["jsonl", "csv"]
TURN_COLUMNS: Final = (
    "result_id", "conversation_id", "generation", "turn_id", "platform", "created_at", "status",
    "decision_status", "decision_reason", "decided_by", "action", "tool_name", "tool_status",
    "error_code", "language", "question_sha256", "standalone_sha256", "answer_sha256",
    "resolution_status", "history_used", "source_ids", "source_turn_id", "warnings",
    "duration_ms", "backend", "model", "answer_backend", "retriever", "audience", "collections",
    "catalog_version",
    "prompt_sha256", "user_sha256",
    "event_id", "raw", "feedback", "feedback_reasons", "tool_calls",
)
_DURATION: Final = re.compile(r"^(\d+)([dhm])$")
_AGE_LIKE: Final = re.compile(r"\s*\d+\s*[dhm]\s*")
"""Meant as an age (parse_age then says what is wrong with it), not as an ISO date."""
SUMMARY_DAYS: Final = 7


class ActivitySummary(BaseModel):
    """What admins see in chat: turns by status and feedback over the last days."""

    days: int
    turns: int
    statuses: list[tuple[str, int]]
    """Most frequent first."""
    helpful: int
    not_helpful: int


def activity_summary(store: TraceLog, days: int = SUMMARY_DAYS) -> ActivitySummary:
    since = iso_text(datetime.now(UTC) - timedelta(days=days))
    turns = store.turns(since=since)
    recent = {row["result_id"] for row in turns}
    votes = [int(vote["value"]) for vote in store.feedback() if vote["result_id"] in recent]
    return ActivitySummary(
        days=days, turns=len(turns),
        statuses=Counter(str(row["status"]) for row in turns).most_common(),
        helpful=sum(vote > 0 for vote in votes), not_helpful=sum(vote < 0 for vote in votes))


def _parse_iso_time(value: str, name: str) -> str:
    """An ISO date or datetime as the UTC ISO text stored in traces; ValueError names it."""
    try:
        moment = datetime.fromisoformat(value)
    except ValueError as error:
        raise ValueError(f"{name}: not an ISO date or time, nor an age like 7d, 12h or 30m: "
                         f"{value!r}") from error
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return iso_text(moment.astimezone(UTC))


def parse_age(value: str) -> timedelta:
    """`90d`, `12h`, `30m`, at most MAX_RETENTION_DAYS; ValueError otherwise."""
    match = _DURATION.match(value.strip())
    if not match or len(match.group(1)) > len(str(MAX_RETENTION_DAYS * 24 * 60)):
        raise ValueError(f"not a duration like 90d, 12h or 30m: {value!r}")
    amount, unit = int(match.group(1)), match.group(2)
    age = {"d": timedelta(days=amount), "h": timedelta(hours=amount),
           "m": timedelta(minutes=amount)}[unit]
    if age > timedelta(days=MAX_RETENTION_DAYS):
        raise ValueError(f"{value!r} is longer than {MAX_RETENTION_DAYS} days")
    return age


def parse_moment(value: str | None, name: str, now: datetime) -> str | None:
    """A time bound (`--since`, `--until`, the admin chat's export) as the UTC ISO text
    traces store: an ISO date or time, or an age before `now` (7d, 12h, 30m, as `traces
    purge --older-than` takes it); None stays None. ValueError names `name` and the value.
    The one parser of these bounds: every command that takes one takes both forms."""
    if value is None:
        return None
    if _AGE_LIKE.fullmatch(value):
        try:
            return iso_text(now - parse_age(value))
        except ValueError as error:
            raise ValueError(f"{name}: {error}") from error
    return _parse_iso_time(value, name)


def scoped_turns(rows: list[dict[str, Any]], audience: str | None = None,
                 collection: str | None = None) -> list[dict[str, Any]]:
    """Turns whose audience is `audience` or starts with it (`channel`, `channel:slack`,
    `shared:teams:19:…`, `private:slack`, `operator`) and that searched `collection`."""
    def kept(row: dict[str, Any]) -> bool:
        label = str(row.get("audience") or "")
        if audience is not None and label != audience and not label.startswith(audience + ":"):
            return False
        return collection is None or collection in _searched(row)
    return [row for row in rows if kept(row)]


def _searched(row: dict[str, Any]) -> list[str]:
    """The collections a turn searched."""
    searched = row.get("collections") or []
    if isinstance(searched, str):  # SQLite keeps JSON as text
        searched = json.loads(searched)
    return [str(name) for name in searched]


def traced_collections(store: TraceLog) -> set[str]:
    """Every collection a recorded turn searched (one since emptied or renamed included)."""
    return {name for row in store.turns() for name in _searched(row)}


def trace_rows(store: TraceLog, since: str | None = None, until: str | None = None,
               conversation_id: str | None = None, *, audience: str | None = None,
               collection: str | None = None) -> list[dict[str, Any]]:
    """Turns (oldest first) with their tool attempts nested under `tool_calls`; optionally
    only those of an audience and those that searched a collection."""
    rows = scoped_turns(store.turns(conversation_id, since, until), audience, collection)
    votes: dict[str, int] = {}
    reasons: dict[str, list[dict[str, str]]] = {}
    for vote in store.feedback():
        votes[vote["result_id"]] = votes.get(vote["result_id"], 0) + int(vote["value"])
        if vote.get("reason"):
            reasons.setdefault(vote["result_id"], []).append(_reason(vote))
    calls: dict[str, list[dict[str, Any]]] = {}
    for call in store.tool_calls():
        calls.setdefault(call["result_id"], []).append(
            {k: v for k, v in call.items() if k not in ("id", "result_id", "conversation_id")})
    exported = []
    for row in rows:
        record = {column: row.get(column) for column in TURN_COLUMNS
                  if column not in ("tool_calls", "feedback", "feedback_reasons")}
        record["feedback"] = votes.get(row["result_id"])  # sum of +1/-1 votes, None if none
        record["feedback_reasons"] = reasons.get(row["result_id"], [])
        for column in ("source_ids", "warnings", "raw", "collections"):
            value = record.get(column)
            if isinstance(value, str):
                record[column] = json.loads(value)
        record["history_used"] = bool(record["history_used"])
        record["tool_calls"] = [
            {**call, "arguments": json.loads(call["arguments"] or "{}")}
            for call in calls.get(row["result_id"], [])]
        exported.append(record)
    return exported


def _reason(vote: dict[str, Any]) -> dict[str, str]:
    """A 👎's reason as exported: the words only where they were kept (`save_raw`)."""
    reason = {"reason": str(vote["reason"])}
    if vote.get("reason_text"):
        reason["text"] = str(vote["reason_text"])
    return reason


def write_export(rows: list[dict[str, Any]], fmt: ExportFormat, out: Path) -> None:
    """Write rows; OSError (unwritable path) propagates for the caller to report."""
    with out.open("w", encoding="utf-8", newline="") as file:
        write_rows(rows, fmt, file)


def write_rows(rows: list[dict[str, Any]], fmt: ExportFormat, file: TextIO) -> None:
    """Rows as JSONL, or as CSV with TURN_COLUMNS (lists and objects as JSON in a cell)."""
    if fmt == "jsonl":
        for row in rows:
            file.write(json.dumps(row, ensure_ascii=False) + "\n")
        return
    writer = csv.DictWriter(file, fieldnames=list(TURN_COLUMNS))
    writer.writeheader()
    for row in rows:
        writer.writerow({key: json.dumps(value, ensure_ascii=False)
                         if isinstance(value, list | dict) else value
                         for key, value in row.items()})


RETENTION_LEASE: Final = "schedule:trace-retention"


class RetentionScheduler:
    """Applies the retention setting now and then once a day (long-running processes): every
    copy of user text older than it is erased (see purge_older_than). Several processes on one
    database run it once a day between them: a run takes the day's lease (a row in the store)
    first, and a process that finds it held by another skips that run and tries again when
    that lease ends, not a day later (a process restarted every day would otherwise skip
    every other day: runs up to two days apart)."""

    def __init__(self, store: Retention, days: int, holder: str = PROCESS_HOLDER) -> None:
        self.store = store
        self.age = timedelta(days=days)
        self.holder = holder
        self._timer: threading.Timer | None = None
        self._stopped = False
        self._next_in: float = RETENTION_PERIOD_SECONDS

    def run_once(self) -> Erasure:
        return purge_older_than(self.store, self.age)

    def start(self) -> Erasure:
        erased = self._run_logged()
        self._schedule()
        return erased

    def _run_logged(self) -> Erasure:
        """A database that takes no writes now (busy, read-only, full) skips this run with one
        log line; it must not stop the bot at start (a restart loop) nor end the schedule."""
        self._next_in = RETENTION_PERIOD_SECONDS
        try:
            if not self.store.claim_lease(RETENTION_LEASE, self.holder,
                                          SCHEDULE_LEASE_SECONDS):
                self._next_in = self._until_lease_ends()
                logger.info("trace retention ran in another process today; skipped here, "
                            "next try in %.0f s", self._next_in)
                return Erasure()
            return self.run_once()
        except StorageUnavailableError as error:
            logger.error("trace retention skipped until the next run: %s", error)
            return Erasure()

    def _until_lease_ends(self) -> float:
        """Seconds until the lease another process holds ends (a day when it cannot be read)."""
        try:
            rows = list(self.store.lease_rows())  # whole: SQLite yields them under its lock
            ends = next((row["expires_at"] for row in rows if row["name"] == RETENTION_LEASE), None)
            left = (datetime.fromisoformat(str(ends)) - datetime.now(UTC)).total_seconds()
        except (StorageError, TypeError, ValueError):
            return RETENTION_PERIOD_SECONDS
        return min(RETENTION_PERIOD_SECONDS, max(RETENTION_RETRY_SECONDS, left + 1))

    def _schedule(self) -> None:
        if self._stopped:
            return
        self._timer = threading.Timer(self._next_in, self._tick)
        self._timer.daemon = True
        self._timer.start()

    def _tick(self) -> None:
        try:
            self._run_logged()
        finally:
            self._schedule()

    def stop(self) -> None:
        self._stopped = True
        if self._timer is not None:
            self._timer.cancel()


def purge_older_than(store: TraceEraser, age: timedelta) -> Erasure:
    """Erase every stored copy of user text older than `age`: traces, inbox events, shadow
    records, votes, and the history of conversations idle since then (privacy.py)."""
    cutoff = iso_text(datetime.now(UTC) - age)
    return store.erase_before(cutoff)
