"""A model's sentences without a valid citation are dropped in the core, once: the terminal,
Slack and Teams show the same answer, and the trace counts what was dropped."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from docassist.bot.teams.streaming import inert_markdown
from docassist.core.answering import keep_cited_sentences
from docassist.models.adapters import ModelAnswerer
from docassist.models.base import RetryPolicy
from docassist.models.openai import OpenAIModel
from docassist.storage import Store
from docassist.storage.dense import HybridRetriever
from docassist_testkit.fakes.model_server import ModelServer, openai_chat, openai_stream
from docassist_testkit.fakes.teams_connector import card_text
from tests.cli_run import one_json, run
from tests.conftest import EngineFactory
from tests.helpers import message, rules_selector
from tests.slack.rig import mention

QUESTION = "How do I renew the TLS certificate?"
FAKE = "DOC-FAKE-0123456789-0001"
UNCITED = "Ask Bob in finance, he knows"


def model_answer(cited: str) -> list[str]:
    return [f"Steps: Renew the certificate 30 days before expiry [{cited}]. ",
            f"{UNCITED}. ", f"Trust me [{FAKE}]. ", f"Then reload the gateway [{cited}]."]


def expected(cited: str) -> str:
    return (f"Steps: Renew the certificate 30 days before expiry [{cited}]. "
            f"Then reload the gateway [{cited}].")


SHOWN_IN_CHAT = ("Steps: Renew the certificate 30 days before expiry [1]. "
                 "Then reload the gateway [1].")
"""`expected` as chat shows it: the citation a marker, resolved in the sources block."""


@pytest.fixture
def model_server(hybrid: HybridRetriever) -> Iterator[tuple[ModelServer, str]]:
    cited = hybrid.search(QUESTION, 1)[0].chunk.chunk_id
    with ModelServer() as server:
        server.respond("/v1/chat/completions", lambda body: openai_stream(
            *model_answer(cited)) if body.get("stream") else openai_chat(
            "".join(model_answer(cited))))
        yield server, cited


@pytest.fixture
def model_engine(make_engine: EngineFactory, model_server: tuple[ModelServer, str]
                 ) -> Iterator[Any]:
    server, _ = model_server
    with httpx.Client(timeout=5.0) as client:
        model = OpenAIModel("m", client, base_url=f"{server.url}/v1",
                            policy=RetryPolicy(attempts=1))
        yield make_engine(rules_selector(), answerer=ModelAnswerer(model))


def test_the_terminal_shows_only_cited_sentences(db_path: Path,
                                                 model_server: tuple[ModelServer, str]) -> None:
    server, cited = model_server
    env = {"DOCASSIST_ANSWER_MODEL": "openai:m", "DOCASSIST_OPENAI_BASE_URL":
           f"{server.url}/v1", "DOCASSIST_OPENAI_API_KEY": "sk-test"}
    done = run("ask", QUESTION, "--json", db=db_path, **env)
    result = one_json(done.stdout)
    assert result["answer"] == expected(cited)
    assert result["warnings"] == [f"removed_citation:{FAKE}", "dropped_uncited_sentences:2"]
    shown = run("ask", QUESTION, db=db_path, **env)
    assert "Renew the certificate 30 days" in shown.stdout
    assert UNCITED not in shown.stdout and "Trust me" not in shown.stdout
    store = Store(db_path)
    assert store.turns()[0]["warnings"] == (
        f'["removed_citation:{FAKE}", "dropped_uncited_sentences:2"]')
    store.close()


def test_slack_streams_and_posts_the_same_answer(rig_factory: Any, model_engine: Any,
                                                 model_server: tuple[ModelServer, str]) -> None:
    _, cited = model_server
    rig = rig_factory(model_engine)
    rig.event(mention(QUESTION, "3100.1"), "Ev1")
    streamed = "".join(rig.api.streamed())
    assert streamed.strip() == SHOWN_IN_CHAT
    rig.api.fail("chat.startStream", 400)  # no streaming here: one post
    rig.event(mention(QUESTION, "3200.1"), "Ev2")
    [post] = rig.api.posted()
    assert SHOWN_IN_CHAT in post["blocks"][0]["text"]["text"] and cited in str(post["blocks"])
    assert UNCITED not in str(post)


def test_teams_streams_and_shows_the_same_answer(teams_factory: Any, model_engine: Any,
                                                model_server: tuple[ModelServer, str]) -> None:
    _, cited = model_server
    teams = teams_factory(model_engine)
    teams.post(teams.activity(QUESTION))  # a personal chat: streamed (issue 23)
    [final] = [sent for sent in teams.connector.sent if sent.activity["type"] == "message"]
    assert final.activity["text"] == inert_markdown(SHOWN_IN_CHAT)
    assert all(UNCITED not in str(sent.activity) for sent in teams.connector.sent)
    teams.connector.sent.clear()
    teams.connector.fail(400)  # no streaming here: the whole card, once
    teams.post(teams.activity(QUESTION))
    [sent] = teams.connector.sent
    text = "\n".join(card_text(card) for card in sent.cards)
    assert SHOWN_IN_CHAT in text and cited in text and UNCITED not in text


def test_nothing_supported_left_is_said_plainly(make_engine: EngineFactory,
                                                hybrid: HybridRetriever) -> None:
    with ModelServer() as server, httpx.Client(timeout=5.0) as client:
        server.always("/v1/chat/completions", openai_chat(f"{UNCITED}. Trust me [{FAKE}]."))
        model = OpenAIModel("m", client, base_url=f"{server.url}/v1",
                            policy=RetryPolicy(attempts=1))
        engine = make_engine(rules_selector(), answerer=ModelAnswerer(model))
        result = engine.handle(message(QUESTION))
    assert result is not None and result.status == "answered"
    assert result.answer.startswith("The model's answer cited none of the passages found")
    assert UNCITED not in result.answer and result.sources
    assert "dropped_uncited_sentences:2" in result.warnings


CITED = "[A-0123456789-0001]"


@pytest.mark.parametrize(("text", "remaining", "dropped"), [
    (f"Edytuj plik, np. `sudo vi /etc/x` {CITED}.", None, 0),  # `np.` ends nothing
    (f"1. Stop it. 2. Edit it {CITED}.", None, 0),  # nor do `1.` and `it.`
    (f"Stop the unit. Edit it {CITED}.", f"Edit it {CITED}.", 1),
    (f"Steps:\n- Stop the unit {CITED}\n\nAsk Bob.", f"Steps:\n- Stop the unit {CITED}", 1),
])
def test_sentences_are_cut_conservatively(text: str, remaining: str | None,
                                          dropped: int) -> None:
    assert keep_cited_sentences(text, {CITED[1:-1]}) == (remaining or text, dropped)
