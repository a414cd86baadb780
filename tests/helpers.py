"""Test helpers: a scripted selector stands in for a model (an external system); tools
swapped through the real registry; keys, messages and trace rows for tests."""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

import pytest

from docassist.core.errors import ModelError
from docassist.core.learned import LearnedSelector
from docassist.core.messages import ChatMessage, Command, ConversationKey
from docassist.core.ports import ExampleSource, Reading
from docassist.core.selection import SelectionRequest
from docassist.core.tools import (
    ToolContext,
    ToolOutcome,
    ToolRegistry,
)
from docassist.core.trace import TurnRecord
from docassist.models.embedders import get_embedder
from docassist.storage import index_paths
from docassist.storage.roles import IndexWrites

Indexed = TypeVar("Indexed", bound=IndexWrites)
SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


def script(name: str) -> ModuleType:
    """scripts/NAME.py loaded by path (scripts/ is not a package), registered under its name
    so that its dataclasses find their module."""
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


SCORES_HELDOUT_TEST = pytest.mark.skipif(
    os.environ.get("DOCASSIST_SCORE_HELDOUT_TEST") != "1",
    reason="scores the held-out test split: only for the final figure "
           "(DOCASSIST_SCORE_HELDOUT_TEST=1), never while tuning")
"""The held-out test split is scored once, by whoever reports the final figure: a suite run
that scored it on every change would make it a tuning set."""


def rules_selector() -> LearnedSelector:
    """The model-free default selector, as `DOCASSIST_MODEL=rules` builds it."""
    return LearnedSelector(lambda: get_embedder("use"))


class ScriptedSelector:
    """Answers selection requests with prepared raw texts, in order; records the requests."""

    backend = "scripted"
    model = "scripted-v1"
    examples: ExampleSource | None = None

    def __init__(self, *responses: str | Exception) -> None:
        self.responses = list(responses)
        self.requests: list[SelectionRequest] = []

    def propose(self, request: SelectionRequest) -> str:
        self.requests.append(request)
        response = self.responses.pop(0)
        if isinstance(response, Exception):
            raise response
        return response

    def reading(self, request: SelectionRequest) -> Reading | None:
        return None


MODEL_DOWN = ModelError("connection refused")


class Recorder:
    """A tool function that records its calls: proof that the executor did (not) call it."""

    def __init__(self, result: Any = None) -> None:
        self.calls: list[Any] = []
        self.result = {"ok": True} if result is None else result

    def __call__(self, arguments: Any, context: ToolContext) -> Any:
        self.calls.append(arguments)
        return self.result


@contextmanager
def swapped(registry: ToolRegistry, name: str, function: Any) -> Iterator[Any]:
    """Register the tool `name` with `function` (through the registry, as any tool enters);
    yield the real function; register the original again in `finally`."""
    original = registry.get(name)
    assert original is not None, name
    registry.register(dataclasses.replace(original, function=function))
    try:
        yield original.function
    finally:
        registry.register(original)


@contextmanager
def recording(registry: ToolRegistry, *names: str) -> Iterator[dict[str, Recorder]]:
    """Put recorders in place of the named tools; restore the originals in `finally`."""
    recorders = {name: Recorder() for name in names}
    with ExitStack() as stack:
        for name in names:
            stack.enter_context(swapped(registry, name, recorders[name]))
        yield recorders


def key(thread: str = "t1", platform: str = "test") -> ConversationKey:
    return ConversationKey(platform=platform, workspace="w", channel="c", thread=thread)


def message(text: object, thread: str = "t1", *, command: Command | None = None,
            argument: str | None = None, event_id: str | None = None) -> ChatMessage:
    return ChatMessage(key=key(thread), user="U1", text=text, command=command,
                       command_argument=argument, event_id=event_id)


def turn_record(result_id: str, turn_id: int, outcomes: list[ToolOutcome]) -> TurnRecord:
    return TurnRecord(
        result_id=result_id, conversation_id=key("matrix").conversation_id, generation=0,
        turn_id=turn_id, platform="test", created_at="2026-11-30T00:00:00", status="tool_error",
        decision_status="action_proposed", decision_reason=None, decided_by="selector",
        action=outcomes[0].name if outcomes else None,
        tool_name=outcomes[-1].name if outcomes else None,
        tool_status=outcomes[-1].status if outcomes else None,
        error_code=outcomes[-1].error_code if outcomes else None, language="en",
        question_sha256=None,
        standalone_sha256=None, answer_sha256=None, resolution_status=None, history_used=False,
        source_ids=[], source_turn_id=None, warnings=[], duration_ms=0.0, backend="test",
        model="test", catalog_version="v", prompt_sha256=None, user_sha256=None, event_id=None)


def assert_ask_again_refused(store: Any, reason: str) -> None:
    """The last turn is an "Ask again" that ran nothing: rejected for `reason`, no tool, and
    the thread's first answer the only one (Slack and Teams alike)."""
    last = store.turns()[-1]
    assert last["status"] == "invalid_message"
    assert (last["decision_status"], last["decision_reason"]) == ("rejected", reason)
    assert last["tool_name"] is None and store.tool_calls(last["result_id"]) == []
    assert [t["status"] for t in store.turns()].count("answered") == 1  # the first answer


def slack_seen(post: dict[str, Any]) -> str:
    """A Slack message as people see it: its text, then its blocks' texts (a citation is a
    marker like [1] in the text; the sources block resolves it to the chunk id)."""
    texts = [str(post.get("text", ""))]
    for block in post.get("blocks") or []:
        if isinstance(block.get("text"), dict):
            texts.append(str(block["text"].get("text", "")))
        texts.extend(str(element.get("text", "")) for element in block.get("elements", [])
                     if isinstance(element, dict) and isinstance(element.get("text"), str))
    return "\n".join(texts)


def index_pages(store: Indexed, folder: Path, pages: dict[str, str]) -> Indexed:
    """`pages` (file name → Markdown) written into `folder` and indexed into `store`."""
    folder.mkdir()
    for name, text in pages.items():
        (folder / name).write_text(text, encoding="utf-8")
    index_paths(store, [folder])
    return store
