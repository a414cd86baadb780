"""A Slack load on loopback: conversations × turns sent as signed Events API requests, and
the checks that every message was answered exactly once, in order, with its state stored.

Used by tests/slack/test_slack_load.py (CI size, a crash mid-load) and bench/load.py (full
size, figures). Each conversation is one channel thread; its turns are sent one after the
other (the next as soon as the previous one is acked, as a fast user would type), all
conversations at once. Stand-ins are only for external systems: the model server answers
what it is asked after a delay, the fake Slack Web API records what is posted.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

from docassist.core.messages import ConversationKey
from docassist_testkit.any_db import rows
from docassist_testkit.fakes.loopback import wait_healthy
from docassist_testkit.fakes.model_server import Reply, openai_chat, openai_stream, proposal
from docassist_testkit.fakes.slack_api import FakeSlackApi, slack_signature

REPO: Final = Path(__file__).resolve().parents[3]
"""The checkout (testkit/src/docassist_testkit/ is in it): the bot process's working folder."""
TEAM: Final = "T1"
CHANNEL: Final = "CLOAD"
ROOT_BASE: Final = 1_700_000_000
ACK_TIMEOUT_SECONDS: Final = 30.0
MODEL_DELAY_SECONDS: Final = 0.2
"""How long the stand-in model takes per request (selection, then the streamed answer)."""
QUESTIONS: Final = (
    "How do I renew the TLS certificate?",
    "What do I do after changing the docassist-api config?",
    "How do I restore the database from a backup?",
)
BOT_START_SECONDS: Final = 60.0
_MARKER: Final = re.compile(r"\(load (\d+)\.(\d+)\)")


def thread_ts(conversation: int) -> str:
    return f"{ROOT_BASE + conversation}.000100"


def message_ts(conversation: int, turn: int) -> str:
    """Turn 0 is the thread's root message; later turns are replies in it."""
    return f"{ROOT_BASE + conversation}.{100 + turn:06d}"


def event_id(conversation: int, turn: int) -> str:
    return f"EvLoad-{conversation}-{turn}"


def marker(conversation: int, turn: int) -> str:
    """Carried by the question, echoed by the model into the answer: which turn a post is."""
    return f"(load {conversation}.{turn})"


def conversation_key(conversation: int) -> ConversationKey:
    return ConversationKey(platform="slack", workspace=TEAM, channel=CHANNEL,
                           thread=thread_ts(conversation))


def event_body(conversation: int, turn: int) -> str:
    question = QUESTIONS[(conversation + turn) % len(QUESTIONS)]
    event: dict[str, Any] = {
        "type": "app_mention", "user": f"U{conversation:03d}", "team": TEAM,
        "channel": CHANNEL, "ts": message_ts(conversation, turn),
        "text": f"<@UBOT> {question} {marker(conversation, turn)}"}
    if turn:
        event["thread_ts"] = thread_ts(conversation)
    return json.dumps({"token": "t", "team_id": TEAM, "api_app_id": "A1",
                       "type": "event_callback", "event_id": event_id(conversation, turn),
                       "event_time": ROOT_BASE + conversation, "event": event})


# --- the model stand-in --------------------------------------------------------------------


def model_responder(delay: float = MODEL_DELAY_SECONDS) -> Callable[[Any], Reply]:
    """An OpenAI-compatible model that answers what it is asked, after `delay` seconds:
    selection → answer_from_documents with the standalone question; answer → the question
    echoed (its load marker included) with the first retrieved chunk cited, streamed when
    asked to stream."""

    def respond(body: Any) -> Reply:
        data = json.loads(str(body["messages"][-1]["content"]).split("DATA:\n", 1)[1])
        if body.get("response_format"):
            question = data["standalone_question"] or data["user_message"]
            reply = openai_chat(proposal("tool_call", "answer_from_documents",
                                         {"question": question}))
        else:
            cited = f" [{data['chunks'][0]['id']}]" if data["chunks"] else ""
            # Every sentence cites a chunk: uncited sentences of model answers are dropped.
            first, second = f"{data['question']}{cited} Follow the documented steps{cited}.", \
                f" Then check the service status{cited}."
            reply = openai_stream(first, second) if body.get("stream") else \
                openai_chat(first + second)
        reply.delay = delay
        return reply

    return respond


# --- sending -------------------------------------------------------------------------------


@dataclass
class Sent:
    event_id: str
    retry: int | None
    status: int | None
    """The HTTP status; None when the connection failed (the bot was down or killed)."""
    started: float
    ack_ms: float


class EventSender:
    """Signs and posts events, one kept-alive connection per sending thread (Slack's side of
    the wire). Stdlib http.client, not httpx: the sender shares the CPU with the bot on the
    test machine, and a light client keeps the ack figure about the bot (measured on the
    50 × 10 load, same bot: ack p50 120–160 ms with a pooled httpx client, 25–70 ms with
    this). Never a new client per request: that builds an SSL context (~50 ms of CPU),
    which is what the old benchmark mostly measured."""

    def __init__(self, url: str, secret: str) -> None:
        self.url = url
        self.secret = secret
        self._local = threading.local()
        self._connections: list[http.client.HTTPConnection] = []
        self._lock = threading.Lock()

    def _connection(self) -> http.client.HTTPConnection:
        target = urlsplit(self.url)
        connection: http.client.HTTPConnection | None = getattr(self._local, "connection", None)
        if connection is None or (connection.host, connection.port) != (
                target.hostname, target.port):
            connection = http.client.HTTPConnection(str(target.hostname), target.port,
                                                    timeout=ACK_TIMEOUT_SECONDS)
            self._local.connection = connection
            with self._lock:
                self._connections.append(connection)
        return connection

    def send(self, conversation: int, turn: int, retry: int | None = None) -> Sent:
        body = event_body(conversation, turn)
        timestamp = str(int(time.time()))
        headers = {"Content-Type": "application/json", "X-Slack-Request-Timestamp": timestamp,
                   "X-Slack-Signature": slack_signature(self.secret, timestamp, body)}
        if retry is not None:
            headers.update({"X-Slack-Retry-Num": str(retry),
                            "X-Slack-Retry-Reason": "http_error"})
        connection = self._connection()
        started = time.monotonic()
        try:
            connection.request("POST", urlsplit(self.url).path, body=body.encode(),
                               headers=headers)
            response = connection.getresponse()
            response.read()
            status: int | None = response.status
        except (OSError, http.client.HTTPException):  # the bot is down or was killed
            connection.close()
            self._local.connection = None
            status = None
        return Sent(event_id(conversation, turn), retry, status, started,
                    (time.monotonic() - started) * 1000)

    def close(self) -> None:
        with self._lock:
            for connection in self._connections:
                connection.close()


class ReplicaSender:
    """Events spread over several bot processes, as a load balancer would: turn t of
    conversation c goes to replica (c + t) mod n, and a retry to the next live one (Slack's
    redelivery may land anywhere). A replica marked dead gets nothing more."""

    def __init__(self, urls: list[str], secret: str) -> None:
        self.senders = [EventSender(url, secret) for url in urls]
        self.dead: set[int] = set()

    def replica(self, conversation: int, turn: int, retry: int | None) -> int:
        first = (conversation + turn + (1 if retry else 0)) % len(self.senders)
        for step in range(len(self.senders)):
            index = (first + step) % len(self.senders)
            if index not in self.dead:
                return index
        raise RuntimeError("every replica is dead")

    def send(self, conversation: int, turn: int, retry: int | None = None) -> Sent:
        return self.senders[self.replica(conversation, turn, retry)].send(conversation, turn,
                                                                          retry)

    def close(self) -> None:
        for sender in self.senders:
            sender.close()


@dataclass
class LoadRun:
    conversations: int
    turns: int
    think_seconds: float = 0.0
    """Pause between a conversation's turns (0: the next one right after the ack)."""
    sent: list[Sent] = field(default_factory=list)
    next_turn: dict[int, int] = field(default_factory=dict)
    """Per conversation: the first turn not acked yet (== turns when all were acked)."""
    failed: set[tuple[int, int]] = field(default_factory=set)
    """Turns sent without an ack (Slack would send them again with X-Slack-Retry-Num)."""
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def acked(self) -> int:
        return sum(1 for sent in self.sent if sent.status == 200)

    def ack_ms(self) -> list[float]:
        return [sent.ack_ms for sent in self.sent if sent.status == 200]

    def first_sent(self) -> dict[str, float]:
        first: dict[str, float] = {}
        for sent in self.sent:
            first.setdefault(sent.event_id, sent.started)
        return first


def send_load(sender: EventSender | ReplicaSender, run: LoadRun,
              stop: threading.Event | None = None) -> None:
    """Send every conversation's remaining turns, conversations concurrently, turns in order;
    a conversation stops at its first turn without an ack (or when `stop` is set)."""

    def conversation_thread(conversation: int) -> None:
        turn = run.next_turn.get(conversation, 0)
        while turn < run.turns and not (stop is not None and stop.is_set()):
            retry = 1 if (conversation, turn) in run.failed else None
            sent = sender.send(conversation, turn, retry)
            with run._lock:
                run.sent.append(sent)
                if sent.status != 200:
                    run.failed.add((conversation, turn))
                    return
                run.failed.discard((conversation, turn))
                turn += 1
                run.next_turn[conversation] = turn
            if run.think_seconds:
                time.sleep(run.think_seconds)

    threads = [threading.Thread(target=conversation_thread, args=(c,), daemon=True)
               for c in range(run.conversations)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


# --- what Slack received -------------------------------------------------------------------


@dataclass
class Answer:
    thread_ts: str | None
    text: str
    result_id: str | None
    at: float
    """When the answer was complete (post, or the stream's stop)."""
    complete: bool = True
    """False for a stream that was started and never stopped (its process died)."""

    def turns(self) -> list[tuple[int, int]]:
        return [(int(c), int(t)) for c, t in _MARKER.findall(self.text)]


def _result_id(blocks: Iterable[dict[str, Any]] | None) -> str | None:
    for block in blocks or []:
        for element in block.get("elements") or []:
            value = (element.get("positive_button") or {}).get("value")
            if value:
                return str(value).partition(":")[2]
    return None


def _section_text(blocks: Iterable[dict[str, Any]] | None) -> str:
    return " ".join(str(block["text"]["text"]) for block in blocks or []
                    if block.get("type") == "section")


def answers(api: FakeSlackApi, *, complete: bool = True) -> list[Answer]:
    """Answers in the order their delivery began: posts, and streams (start → stop). With
    `complete=False`, only the streams that were started and never stopped."""
    delivered: list[Answer] = []
    streams: dict[str, Answer] = {}
    for call in list(api.calls):
        body = call.body
        if call.method == "chat.postMessage":
            text = _section_text(body.get("blocks")) or str(body.get("text") or "")
            delivered.append(Answer(body.get("thread_ts"), text,
                                    _result_id(body.get("blocks")), call.at))
        elif call.method == "chat.startStream":
            stream = Answer(body.get("thread_ts"), str(body.get("markdown_text") or ""), None,
                            call.at, complete=False)
            streams[str(call.reply.get("ts"))] = stream
            delivered.append(stream)
        elif call.method == "chat.appendStream" and body.get("ts") in streams:
            streams[body["ts"]].text += str(body.get("markdown_text") or "")
        elif call.method == "chat.stopStream" and body.get("ts") in streams:
            stream = streams[body["ts"]]
            stream.text += str(body.get("markdown_text") or "")
            stream.result_id, stream.at, stream.complete = (
                _result_id(body.get("blocks")), call.at, True)
    return [answer for answer in delivered if answer.complete == complete]


def answer_problems(delivered: list[Answer], conversations: int, turns: int) -> list[str]:
    """Empty when every turn was answered exactly once, in its thread, in order."""
    problems: list[str] = []
    by_thread: dict[int, list[int]] = {c: [] for c in range(conversations)}
    for answer in delivered:
        found = answer.turns()
        if len(found) != 1:
            problems.append(f"an answer in thread {answer.thread_ts} names turns {found}: "
                            f"{answer.text[:120]!r}")
            continue
        conversation, turn = found[0]
        if answer.thread_ts != thread_ts(conversation):
            problems.append(f"turn {conversation}.{turn} answered in thread {answer.thread_ts}")
        by_thread.setdefault(conversation, []).append(turn)
    for conversation, answered in sorted(by_thread.items()):
        if answered != list(range(turns)):
            problems.append(f"conversation {conversation}: answers for turns {answered}")
    return problems


# --- what the SQLite file holds ------------------------------------------------------------


def store_problems(db_path: Path | str, conversations: int, turns: int) -> list[str]:
    """Empty when the database (an SQLite file or a PostgreSQL URL) holds exactly the
    expected conversations, turns, tool calls and inbox rows: no lost, doubled or
    half-written state."""
    problems: list[str] = []
    for conversation in range(conversations):
        conversation_id = conversation_key(conversation).conversation_id
        found = rows(db_path, "SELECT version, thread FROM conversations "
                              "WHERE conversation_id = ?", [conversation_id])
        row = found[0] if found else None
        if row is None or row["version"] != turns:
            problems.append(f"conversation {conversation}: row {row}")
        turn_rows = rows(db_path,
                         "SELECT turn_id, event_id, status, result_id, action FROM turns "
                         "WHERE conversation_id = ? ORDER BY turn_id", [conversation_id])
        expected = [(t + 1, event_id(conversation, t)) for t in range(turns)]
        if [(r["turn_id"], r["event_id"]) for r in turn_rows] != expected:
            problems.append(f"conversation {conversation}: turns "
                            f"{[(r['turn_id'], r['event_id']) for r in turn_rows]}")
        for turn_row in turn_rows:
            calls = rows(db_path, "SELECT tool_name, status FROM tool_calls "
                                  "WHERE result_id = ?", [turn_row["result_id"]])
            if turn_row["status"] != "answered" or [
                    (c["tool_name"], c["status"]) for c in calls] != [
                    ("answer_from_documents", "tool_completed")]:
                problems.append(f"turn {turn_row['event_id']}: status "
                                f"{turn_row['status']}, tool calls "
                                f"{[tuple(c.values()) for c in calls]}")
    orphans = rows(db_path, "SELECT COUNT(*) AS n FROM tool_calls WHERE result_id NOT IN "
                            "(SELECT result_id FROM turns)")[0]["n"]
    if orphans:
        problems.append(f"{orphans} tool-call rows without their turn")
    inbox = rows(db_path, "SELECT event_id, status FROM inbox ORDER BY id")
    if sorted(r["event_id"] for r in inbox) != sorted(
            event_id(c, t) for c in range(conversations) for t in range(turns)):
        problems.append(f"inbox holds {len(inbox)} rows for "
                        f"{conversations * turns} events")
    unfinished = [tuple(r.values()) for r in inbox if r["status"] != "done"]
    if unfinished:
        problems.append(f"inbox rows not done: {unfinished[:10]}")
    return problems


# --- the bot as a real process -------------------------------------------------------------



def start_bot(db: Path | str, api: FakeSlackApi, port: int, secret: str,
              env: dict[str, str] | None = None,
              log: Path | None = None) -> subprocess.Popen[bytes]:
    """`docassist slack --http` on `port`, returned once /healthz answers. Its stderr goes
    to `log` (default `<db>.<port>.log`; a pipe nobody reads would fill up and stall the
    bot). `db` is an SQLite file or a PostgreSQL URL."""
    full_env = {**os.environ, "DOCASSIST_DB": str(db), "SLACK_BOT_TOKEN": "xoxb-process",
                "SLACK_SIGNING_SECRET": secret, "DOCASSIST_SLACK_API_URL": api.url,
                **(env or {})}
    if log is None:
        path = Path(db)
        log = path.with_name(f"{path.name}.{port}.log")
    with log.open("wb") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "docassist", "slack", "--http", "--port", str(port)],
            env=full_env, cwd=REPO, stdout=subprocess.DEVNULL, stderr=stderr,
            start_new_session=True)  # its turn processes die with it (kill_replica)
    return wait_healthy(process, port, lambda: log.read_text(errors="replace"),
                        BOT_START_SECONDS)


def model_env(model_url: str) -> dict[str, str]:
    """The bot's environment for a load: selection and answers by the stand-in model,
    no rate limits (the load is far above the per-user default on purpose)."""
    return {"DOCASSIST_MODEL": "openai:load", "DOCASSIST_OPENAI_BASE_URL": f"{model_url}/v1",
            "DOCASSIST_RATE_PER_USER": "0", "DOCASSIST_RATE_GLOBAL": "0"}
