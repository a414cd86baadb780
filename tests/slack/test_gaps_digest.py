"""The weekly gaps digest, posted to an admin channel through the fake Slack Web API."""

from __future__ import annotations

from typing import Any

import pytest
from slack_sdk.errors import SlackApiError

from docassist.bot.gaps_digest import LEASE, GapsDigest
from docassist.bot.slack.digest import slack_poster
from docassist.core.gaps import QuestionRecorder
from docassist.models.embedders import get_embedder
from docassist.storage import Store
from tests.conftest import EngineFactory
from tests.helpers import message
from tests.slack.rig import SlackRig

HOSTILE = "What is the <!channel> dress code for client visits?"


@pytest.fixture
def admin_rig(rig_factory: Any, make_engine: EngineFactory, store: Store) -> SlackRig:
    """A Slack rig whose engine keeps questions (raw text on), with one unanswered one."""
    engine = make_engine(save_raw=True)
    engine.questions = QuestionRecorder(store, get_embedder("use"), save_raw=True)
    result = engine.handle(message(HOSTILE, thread="lunch"))
    assert result is not None and result.status == "no_answer"
    engine.questions.wait(30)
    rig: SlackRig = rig_factory(engine)
    return rig


def test_the_digest_is_posted_once_a_week_escaped(admin_rig: SlackRig, store: Store) -> None:
    post = slack_poster(admin_rig.adapter.app.client, "C-ADMIN")
    weekly = GapsDigest(store, post, "en")
    assert weekly.run_if_due()
    assert not weekly.run_if_due()  # this process too, at its next tick: once per week
    [posted] = admin_rig.api.posted()
    assert posted["channel"] == "C-ADMIN"
    assert posted["text"].startswith("Gaps in the documents over the last 7 days")
    assert "• 1× (no_answer 1) — closest documents: DOC-" in posted["text"]
    assert "&lt;!channel&gt;" in posted["text"] and "<!channel>" not in posted["text"]
    assert not GapsDigest(store, post, "en").run_if_due()  # another process: already done
    assert len(admin_rig.api.posted()) == 1


def test_a_refused_post_is_retried_at_the_next_tick(admin_rig: SlackRig, store: Store) -> None:
    admin_rig.api.fail("chat.postMessage", 400)
    digest = GapsDigest(store, slack_poster(admin_rig.adapter.app.client, "C-ADMIN"), "pl")
    with pytest.raises(SlackApiError):
        digest.run_if_due()
    assert [row["holder"] for row in store.lease_rows() if row["name"] == LEASE] == [""]
    assert digest.run_if_due()
    [posted] = admin_rig.api.posted()
    assert posted["text"].startswith("Luki w dokumentach z ostatnich 7 dni")
