"""The weekly gaps digest in a Teams channel, over the fake Bot Connector: a new message in
the configured channel's conversation (no reply address is needed), posted once per period
between processes, plain text, retried while the channel's team is not known yet or the
connector refuses; and its period is a parameter, so the cadence is seen in a second."""

from __future__ import annotations

from typing import Any

import pytest

from docassist.bot.gaps_digest import GapsDigest, digest_channels, lease_for
from docassist.bot.teams.digest import teams_poster
from docassist.core.gaps import QuestionRecorder
from docassist.models.embedders import get_embedder
from docassist.storage import Store
from docassist_testkit.fakes.loopback import wait_until
from tests.conftest import EngineFactory
from tests.helpers import message
from tests.teams.rig import TENANT, TeamsRig

TEAM = "19:team-admins@thread.tacv2"
ADMINS = "19:docassist-admins@thread.tacv2"
HOSTILE = "Is there a **<at>everyone</at>** policy on bringing dogs to the office?"
LEASE = lease_for("teams")


@pytest.fixture
def teams(teams_factory: Any, make_engine: EngineFactory, store: Store) -> TeamsRig:
    """A Teams rig whose engine keeps questions (raw text on), with one unanswered one."""
    engine = make_engine(save_raw=True)
    engine.questions = QuestionRecorder(store, get_embedder("use"), save_raw=True)
    result = engine.handle(message(HOSTILE, thread="lunch"))
    assert result is not None and result.status == "no_answer"
    engine.questions.wait(30)
    rig: TeamsRig = teams_factory(engine)
    return rig


def seen_in_the_team(teams: TeamsRig) -> None:
    """Any activity naming the team teaches where its channels are reached."""
    teams.post({"type": "installationUpdate", "id": "inst-1", "action": "add",
                "channelId": "msteams", "serviceUrl": teams.connector.url,
                "from": {"id": "29:admin"}, "recipient": {"id": "28:docassist-bot"},
                "conversation": {"id": TEAM, "conversationType": "channel",
                                 "tenantId": TENANT},
                "channelData": {"team": {"id": TEAM}, "channel": {"id": ADMINS},
                                "tenant": {"id": TENANT}}})


def digest(teams: TeamsRig, store: Store, **timing: float) -> GapsDigest:
    post = teams_poster(store, teams.adapter.outbound.post_to_channel, ADMINS)
    return GapsDigest(store, post, "en", lease=LEASE, **timing)


def in_channel(teams: TeamsRig) -> list[Any]:
    return [sent for sent in teams.connector.messages() if sent.conversation_id == ADMINS]


def test_the_digest_is_a_plain_new_message_in_the_channel_once_per_week(
        teams: TeamsRig, store: Store) -> None:
    seen_in_the_team(teams)
    assert digest(teams, store).run_if_due()
    [posted] = in_channel(teams)
    assert posted.reply_to_id is None  # a new message in the channel, not a reply
    assert posted.text.startswith("Gaps in the documents over the last 7 days")
    assert "• 1× (no_answer 1) — closest documents: DOC-" in posted.text
    assert HOSTILE in posted.text and posted.activity["textFormat"] == "plain"
    assert not digest(teams, store).run_if_due()  # another process: already done this week
    assert len(in_channel(teams)) == 1


def test_until_the_team_is_seen_the_digest_waits_and_then_is_posted(
        teams: TeamsRig, store: Store) -> None:
    weekly = digest(teams, store)
    with pytest.raises(LookupError, match="not reached yet"):
        weekly.run_if_due()
    assert in_channel(teams) == []
    assert [row["holder"] for row in store.lease_rows() if row["name"] == LEASE] == [""]
    seen_in_the_team(teams)
    assert weekly.run_if_due()
    assert len(in_channel(teams)) == 1


def test_a_refused_post_gives_the_week_back(teams: TeamsRig, store: Store) -> None:
    seen_in_the_team(teams)
    teams.connector.fail(503, 503, 503, 503)  # the SDK's own retries included
    with pytest.raises(Exception):  # noqa: B017  (the SDK's error type is its own)
        digest(teams, store).run_if_due()
    teams.connector.failures.clear()
    assert in_channel(teams) == []
    assert digest(teams, store).run_if_due()
    assert len(in_channel(teams)) == 1


def test_the_cadence_is_the_period_given(teams: TeamsRig, store: Store) -> None:
    """A period of a second instead of a week: once per period, and the schedule ticks."""
    seen_in_the_team(teams)
    quick = digest(teams, store, every=1.0, tick=0.1)
    assert quick.run_if_due() and not quick.run_if_due()
    quick.start()  # the next one once the period has passed, by the schedule itself
    try:
        assert wait_until(lambda: len(in_channel(teams)) == 2, seconds=10)
    finally:
        quick.stop()
    assert len(in_channel(teams)) == 2


def test_the_setting_names_each_platforms_channel() -> None:
    assert digest_channels("C0123") == {"slack": "C0123"}
    assert digest_channels(f"slack:C0123, teams:{ADMINS}") == {"slack": "C0123",
                                                                 "teams": ADMINS}
    assert digest_channels(f"teams:{ADMINS}") == {"teams": ADMINS}
    assert digest_channels("") == {}
