"""Group membership lookups against loopback fakes of Microsoft Graph (with the TLS token
service) and Slack's user-group API: pagination, cache expiry, throttling, expired or
revoked credentials (no groups, nothing cached, nothing secret logged)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from slack_sdk import WebClient

from docassist.config import GraphSettings
from docassist.core.ports import MembershipLookup
from docassist.directory.entra import EntraMembership
from docassist.directory.limits import MEMBERSHIP_CACHE_SECONDS
from docassist.directory.slack_groups import SlackUserGroups
from docassist.sources.graph import GraphClient
from docassist_testkit.fakes.graph_site import CLIENT_ID, CLIENT_SECRET, TENANT, FakeGraph
from docassist_testkit.fakes.loopback import free_port
from docassist_testkit.fakes.slack_groups_api import BOT_TOKEN, FakeSlackGroups

USER = "6f1c2d3e-0000-4000-8000-00000000000a"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def group(group_id: str) -> dict[str, str]:
    return {"@odata.type": "#microsoft.graph.group", "id": group_id}


@pytest.fixture
def graph(tmp_path: Path) -> Iterator[FakeGraph]:
    fake = FakeGraph(tmp_path)
    fake.state.groups[USER] = [group("g-ops"), {"@odata.type": "#microsoft.graph.directoryRole",
                                                "id": "role-reader"},
                               group("g-hr"), group("g-eng"), group("g-all")]
    yield fake
    fake.stop()


@pytest.fixture
def entra(graph: FakeGraph) -> Iterator[tuple[EntraMembership, Clock]]:
    clock = Clock()
    client = GraphClient(GraphSettings(
        tenant_id=TENANT, client_id=CLIENT_ID, client_secret=CLIENT_SECRET,
        url=graph.graph_url, authority_host=graph.authority_host, ca_bundle=graph.ca_file))
    yield EntraMembership(lambda: client, clock=clock), clock
    client.close()


def member_requests(graph: FakeGraph) -> list[str]:
    return [path for path in graph.state.graph_paths() if "transitiveMemberOf" in path]


def test_entra_groups_follow_every_page_and_leave_out_roles(
        entra: tuple[EntraMembership, Clock], graph: FakeGraph) -> None:
    lookup: MembershipLookup = entra[0]
    assert lookup.groups_of("teams", USER) == {"g-ops", "g-hr", "g-eng", "g-all"}
    assert len(member_requests(graph)) == 3  # five entries, two per page
    assert "$skiptoken=2" in member_requests(graph)[1]
    assert lookup.groups_of("slack", USER) == frozenset()
    assert len(member_requests(graph)) == 3  # another platform's user: nothing asked


def test_entra_groups_are_cached_until_they_expire(
        entra: tuple[EntraMembership, Clock], graph: FakeGraph) -> None:
    lookup, clock = entra
    assert "g-hr" in lookup.groups_of("teams", USER)
    graph.state.groups[USER] = [group("g-ops")]
    clock.now += MEMBERSHIP_CACHE_SECONDS - 1
    assert "g-hr" in lookup.groups_of("teams", USER)
    assert len(member_requests(graph)) == 3
    clock.now += 2
    assert lookup.groups_of("teams", USER) == {"g-ops"}


def test_entra_throttling_is_waited_out(entra: tuple[EntraMembership, Clock],
                                        graph: FakeGraph) -> None:
    graph.state.failures[f"/v1.0/users/{USER}/transitiveMemberOf"] = [
        (429, {"Retry-After": "0"}), (503, {})]
    assert len(entra[0].groups_of("teams", USER)) == 4


def test_an_expired_secret_gives_no_groups_and_is_asked_again(
        entra: tuple[EntraMembership, Clock], graph: FakeGraph,
        caplog: pytest.LogCaptureFixture) -> None:
    lookup, _clock = entra
    graph.state.secret_expired = True
    with caplog.at_level(logging.DEBUG):
        assert lookup.groups_of("teams", USER) == frozenset()
    assert "refused the app's credentials" in caplog.text
    assert CLIENT_SECRET not in caplog.text
    graph.state.secret_expired = False
    assert len(lookup.groups_of("teams", USER)) == 4  # the failure was not cached


def test_a_revoked_graph_token_gives_no_groups(entra: tuple[EntraMembership, Clock],
                                                graph: FakeGraph,
                                                caplog: pytest.LogCaptureFixture) -> None:
    graph.state.revoked = True
    assert entra[0].groups_of("teams", USER) == frozenset()
    assert "Microsoft Graph refused the credentials (HTTP 401)" in caplog.text
    assert "graph-access-token" not in caplog.text


@pytest.fixture
def slack() -> Iterator[tuple[SlackUserGroups, FakeSlackGroups, Clock]]:
    fake = FakeSlackGroups()
    fake.state.groups = {"S-OPS": ["U1", "U2"], "S-HR": ["U2"], "S-EMPTY": []}
    clock = Clock()
    yield SlackUserGroups(WebClient(token=BOT_TOKEN, base_url=fake.url), clock=clock), \
        fake, clock
    fake.stop()


def test_slack_user_groups_map_each_user_to_their_groups(
        slack: tuple[SlackUserGroups, FakeSlackGroups, Clock]) -> None:
    lookup, fake, _clock = slack
    assert lookup.groups_of("slack", "U2") == {"S-OPS", "S-HR"}
    assert lookup.groups_of("slack", "U1") == {"S-OPS"}
    assert lookup.groups_of("slack", "U9") == frozenset()
    assert lookup.groups_of("teams", "U1") == frozenset()
    assert fake.state.calls == ["usergroups.list"] + ["usergroups.users.list"] * 3
    assert set(fake.state.authorization) == {f"Bearer {BOT_TOKEN}"}


def test_slack_groups_are_cached_until_they_expire(
        slack: tuple[SlackUserGroups, FakeSlackGroups, Clock]) -> None:
    lookup, fake, clock = slack
    assert lookup.groups_of("slack", "U1") == {"S-OPS"}
    fake.state.groups["S-HR"].append("U1")
    clock.now += MEMBERSHIP_CACHE_SECONDS - 1
    assert lookup.groups_of("slack", "U1") == {"S-OPS"}
    assert fake.state.calls.count("usergroups.list") == 1
    clock.now += 2
    assert lookup.groups_of("slack", "U1") == {"S-OPS", "S-HR"}


def test_slack_throttling_is_waited_out(
        slack: tuple[SlackUserGroups, FakeSlackGroups, Clock]) -> None:
    lookup, fake, _clock = slack
    fake.state.throttled = {"usergroups.list": 1, "usergroups.users.list": 2}
    assert lookup.groups_of("slack", "U2") == {"S-OPS", "S-HR"}
    assert fake.state.calls.count("usergroups.list") == 2


def test_an_expired_slack_token_gives_no_groups_and_is_asked_again(
        slack: tuple[SlackUserGroups, FakeSlackGroups, Clock],
        caplog: pytest.LogCaptureFixture) -> None:
    lookup, fake, _clock = slack
    fake.state.token_error = "token_expired"
    with caplog.at_level(logging.DEBUG):
        assert lookup.groups_of("slack", "U1") == frozenset()
    assert "Slack user groups: token_expired" in caplog.text
    assert BOT_TOKEN not in caplog.text
    fake.state.token_error = None
    assert lookup.groups_of("slack", "U1") == {"S-OPS"}


def test_an_unreachable_sign_in_service_is_met_at_the_first_lookup_not_at_start(
        graph: FakeGraph) -> None:
    """Issue 39: MSAL reads the authority when its client is made; made at start, a login
    service that could not be reached stopped `serve` (Slack too)."""
    down = f"https://127.0.0.1:{free_port()}"
    attempts: list[str] = []

    def connect() -> GraphClient:
        attempts.append(down)
        return GraphClient(GraphSettings(
            tenant_id=TENANT, client_id=CLIENT_ID, client_secret=CLIENT_SECRET,
            url=graph.graph_url, authority_host=down, ca_bundle=graph.ca_file))

    lookup = EntraMembership(connect)
    assert attempts == [] and lookup.problem is None
    assert lookup.groups_of("teams", USER) == frozenset()  # fail closed
    assert attempts == [down]
    assert lookup.problem is not None and "could not be reached" in lookup.problem
    assert CLIENT_SECRET not in lookup.problem
