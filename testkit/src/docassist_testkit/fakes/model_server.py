"""A loopback HTTP server speaking the Ollama and OpenAI APIs, scripted per path.

Stand-in for model servers (external systems): it records every request (path, headers,
JSON body; `requests`, as every fake) and answers with scripted replies — JSON, raw bodies,
errors, slow replies, NDJSON or SSE streams. Port 0, so tests never collide.
"""

from __future__ import annotations

import json
import time
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from docassist_testkit.fakes.loopback import FakeServer, QuietHandler, Request


@dataclass
class Reply:
    status: int = 200
    json: Any = None
    body: bytes | None = None
    delay: float = 0.0
    lines: list[str] | None = None
    content_type: str = "application/json"


@dataclass
class ModelServer(FakeServer):
    replies: dict[str, deque[Reply]] = field(default_factory=lambda: defaultdict(deque))
    fallback: dict[str, Reply] = field(default_factory=dict)
    responders: dict[str, Callable[[Any], Reply]] = field(default_factory=dict)

    def script(self, path: str, *replies: Reply) -> None:
        self.replies[path].extend(replies)

    def always(self, path: str, reply: Reply) -> None:
        """Answer every request to `path` with `reply` once the script is used up."""
        self.fallback[path] = reply

    def respond(self, path: str, responder: Callable[[Any], Reply]) -> None:
        """Answer every request to `path` with `responder(request body)` once the script is
        used up: a model that answers what it is asked (load tests)."""
        self.responders[path] = responder

    def bodies(self, path: str) -> list[Any]:
        return [r.body for r in self.requests if r.path.split("?")[0] == path]

    def answer(self, exchange: QuietHandler, request: Request) -> None:
        path = request.path.split("?")[0]
        queue = self.replies.get(path)
        responder = self.responders.get(path)
        if queue:
            reply = queue.popleft()
        elif responder is not None:
            reply = responder(request.body)
        else:
            reply = self.fallback.get(
                path, Reply(status=404, json={"error": f"no scripted reply for {path}"}))
        if reply.delay:
            time.sleep(reply.delay)
        if reply.lines is not None:
            _stream(exchange, reply)
            return
        data = reply.body if reply.body is not None else (
            json.dumps(reply.json).encode() if reply.json is not None else b"")
        exchange.reply(reply.status, data, reply.content_type)


def _stream(exchange: QuietHandler, reply: Reply) -> None:
    exchange.send_response(reply.status)
    exchange.send_header("Content-Type", reply.content_type)
    exchange.send_header("Transfer-Encoding", "chunked")
    exchange.end_headers()
    for line in reply.lines or []:
        data = (line + "\n").encode()
        exchange.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        exchange.wfile.flush()
    exchange.wfile.write(b"0\r\n\r\n")


# --- reply builders ----------------------------------------------------------------------


def proposal(decision: str = "tool_call", action: str | None = None,
             arguments: dict[str, Any] | None = None, message: str | None = None) -> str:
    """A selection model's reply: the JSON proposal DocAssist asks it for."""
    return json.dumps({"decision": decision, "action": action, "arguments": arguments or {},
                       "message": message})


def openai_chat(content: str) -> Reply:
    return Reply(json={"id": "c1", "object": "chat.completion",
                       "choices": [{"index": 0, "message": {"role": "assistant",
                                                            "content": content},
                                    "finish_reason": "stop"}]})


def openai_stream(*deltas: str) -> Reply:
    events = [json.dumps({"choices": [{"index": 0, "delta": {"content": d}}]}) for d in deltas]
    return Reply(lines=[f"data: {e}\n" for e in events] + ["data: [DONE]\n"],
                 content_type="text/event-stream")


def openai_embeddings(*vectors: list[float]) -> Reply:
    items = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
    return Reply(json={"object": "list", "data": list(reversed(items))})


def ollama_chat(content: str) -> Reply:
    return Reply(json={"model": "m", "message": {"role": "assistant", "content": content},
                       "done": True})


def ollama_stream(*deltas: str) -> Reply:
    lines = [json.dumps({"message": {"role": "assistant", "content": d}, "done": False})
             for d in deltas]
    return Reply(lines=[*lines, json.dumps({"message": {"role": "assistant", "content": ""},
                                            "done": True})],
                 content_type="application/x-ndjson")


def ollama_embed(*vectors: list[float]) -> Reply:
    return Reply(json={"model": "m", "embeddings": list(vectors)})
