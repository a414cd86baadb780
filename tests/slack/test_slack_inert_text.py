"""Document text is data in Slack: a document with `<!channel>`, `<!here>`, `<!everyone>`
and disguised links in its text, title and owner is answered, listed, described and
suggested over the loopback Slack API, and every posted payload shows them as written."""

from __future__ import annotations

from pathlib import Path

import pytest

from docassist.bot.slack.render import SECTION_TEXT_LIMIT, SHOW_SOURCES_ACTION, render
from docassist.core.results import TurnResult
from docassist.storage import Store
from docassist_testkit.fakes.model_server import ModelServer, openai_stream
from tests import hostile
from tests.slack.rig import CHANNEL, TEAM, SlackRig, mention


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    path, _ = hostile.hostile_database(tmp_path)
    return path


TITLE = "Zebra alarm &lt;!channel&gt; &amp; &lt;https://evil.example/t|the wiki&gt;"
"""The title as Slack must receive it: entities, so it pings and links nothing."""


def answer_text() -> str:
    """The page's passage in its own words and lines (issue 40), every piece inert; its
    citation is the marker [1]."""
    return (f"From “{TITLE}”, section “Zebra alarm paging”:\n"
            "When the zebra alarm sounds, tell &lt;!everyone&gt; and open "
            "&lt;https://evil.example/login|the status page&gt;.\n"
            "Silence the zebra alarm with `zebra-ctl mute --all &lt;!here&gt;` and read "
            "*now* [the zebra runbook](https://evil.example/runbook). [1]")


def sources_context(chunk: str, marker: str = "") -> dict[str, object]:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": (
        f"{marker}`{chunk}` <{hostile.CATALOG_URL}|{TITLE} v1.0 — Zebra alarm paging>")}]}


def test_an_answer_and_its_sources_are_posted_inert(rig: SlackRig, store: Store) -> None:
    chunk = hostile.chunk_id(store)
    rig.event(mention(hostile.QUESTION, "100.1"), "Ev1")
    [post] = rig.api.posted()
    text = answer_text()
    assert post["text"] == text
    blocks = post["blocks"]
    assert blocks[:2] == [{"type": "section", "text": {"type": "mrkdwn", "text": text}},
                          sources_context(chunk, "[1] ")]
    assert [block["type"] for block in blocks[2:]] == ["actions", "context_actions"]
    button = {"type": "block_actions", "team": {"id": TEAM}, "user": {"id": "U1"},
              "container": {"type": "message", "channel_id": CHANNEL, "thread_ts": "100.1"},
              "message": {"ts": "1800000000.000001", "thread_ts": "100.1"},
              "channel": {"id": CHANNEL}, "trigger_id": "tr1",
              "actions": [{"action_id": SHOW_SOURCES_ACTION, "action_ts": "100.5"}]}
    rig.interactive(button)
    sources = rig.api.posted()[-1]
    listed = (f"Sources of the previous answer (turn 1):\n"
              f"• [{chunk}] {TITLE} (v1.0) — Zebra alarm paging")
    assert sources["text"] == listed
    assert sources["blocks"][:2] == [{"type": "section", "text": {"type": "mrkdwn",
                                                                  "text": listed}},
                                     sources_context(chunk)]


def test_metadata_and_the_document_list_are_posted_inert(rig: SlackRig, store: Store,
                                                         tmp_path: Path) -> None:
    rig.command("/docassist-meta", "DOC-ZEBRA")
    rig.command("/docassist-docs", "")
    meta, docs = rig.api.posted("chat.postEphemeral")
    assert meta["text"] == (f"DOC-ZEBRA: {TITLE}\nVersion: 1.0 · owner: Ops &lt;!here&gt; "
                            f"team · language: en · updated: 2026-11-01 · chunks: 1\n"
                            f"Link: {hostile.CATALOG_URL}")  # the link, not the server's file
    assert str(tmp_path) not in meta["text"]
    line = f"• `DOC-ZEBRA` <{hostile.CATALOG_URL}|{TITLE}> (v1.0)"
    assert docs["text"] == f"Documents in the catalog:\n{line}"
    assert docs["blocks"] == [
        {"type": "header", "text": {"type": "plain_text", "text": "Documents in the catalog:"}},
        {"type": "section", "text": {"type": "mrkdwn", "text": line}}]


def test_suggested_prompts_are_inert(rig: SlackRig) -> None:
    rig.event({"type": "assistant_thread_started", "event_ts": "1.0",
               "assistant_thread": {"user_id": "U1", "channel_id": "D1", "thread_ts": "1200.1",
                                    "context": {"channel_id": "C1", "team_id": "T1"}}}, "EvA")
    [prompts] = rig.api.wait_posted("assistant.threads.setSuggestedPrompts")
    assert prompts["prompts"] == [{
        "title": "What does “Zebra alarm ‹!channel› & ‹https://evil.example/t|",
        "message": f"What does “{TITLE}” say?"}]


def test_a_streamed_answer_is_inert(streaming_rig: tuple[SlackRig, ModelServer],
                                    store: Store) -> None:
    rig, server = streaming_rig
    chunk = hostile.chunk_id(store)
    server.script("/v1/chat/completions", openai_stream(
        f"Tell <!channel> & see <https://evil.example|docs> [{chunk}].",
        f" Then mute it [{chunk}]."))
    rig.event(mention(hostile.QUESTION, "300.1"), "Ev1")
    assert rig.api.streamed() == [
        "Tell &lt;!channel&gt; &amp; see &lt;https://evil.example|docs&gt; [1]. ",
        "Then mute it [1]. "]


def test_a_users_message_reaches_the_core_as_typed(rig: SlackRig) -> None:
    """Slack sends `<`, `>` and `&` typed by a user as entities; the core gets the
    characters, and the reply escapes them again."""
    rig.event(mention("What do I do when the zebra alarm sounds &amp; the &lt;pager&gt; too?",
                      "400.1"), "Ev1")
    [turn] = rig.store.turns()
    state = rig.store.load(rig.adapter.key_for(TEAM, CHANNEL, None, "400.1", "channel"))
    assert state.state.history[0].content == (
        "What do I do when the zebra alarm sounds & the <pager> too?")
    assert turn["status"] == "answered"


def test_long_answers_are_cut_between_steps() -> None:
    steps = [f"{n}. Step {n}: run `check-{n} --all`" + " and wait for it" * 20
             for n in range(1, 41)]
    result = TurnResult(result_id="r", conversation_id="c", generation=0, turn_id=1,
                        status="answered", answer="Do this:\n" + "\n".join(steps),
                        language="en")
    sections = [block["text"]["text"] for message in render(result)
                for block in message["blocks"] if block["type"] == "section"]
    assert len(sections) > 1 and all(len(text) <= SECTION_TEXT_LIMIT for text in sections)
    lines = [line for text in sections for line in text.split("\n")]
    assert lines == ["Do this:", *steps]  # every step whole, on its own line, in order
