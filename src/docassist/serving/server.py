"""`docassist serve`: one aiohttp server for both platforms and the operators.

    POST /slack/events   Slack (HTTP mode), when SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET are set
    POST /api/messages   Teams, when its three credentials are set (or anonymous mode)
    GET  /healthz        the process is up
    GET  /readyz         database writable, models reachable, index loaded (503 + reason)
    GET  /metrics        Prometheus text format (metrics.py)

`docassist slack --http` and `docassist teams` serve one platform the same way (the
`serve` of bot/slack/runner.py and bot/teams/runner.py), with the same operator routes
(operations.py).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass

from aiohttp import web

from docassist.bot.slack.app import SlackAdapter
from docassist.bot.slack.runner import (
    slack_adapter,
    slack_routes,
    slack_settings,
    start_gaps_digest,
)
from docassist.bot.slack.server import EVENTS_PATH
from docassist.bot.stale_courier import Post
from docassist.bot.teams.digest import start_teams_gaps_digest
from docassist.bot.teams.runner import TeamsEndpoint, teams_settings
from docassist.bot.teams.server import MESSAGES_PATH
from docassist.bot.web import (
    add_routes,
    new_application,
    run_forever,
)
from docassist.config import SlackSettings, TeamsSettings
from docassist.core.errors import ConfigurationError
from docassist.core.limits import HTTP_READ_TIMEOUT_SECONDS
from docassist.core.ports import MembershipLookup
from docassist.directory.entra import DIRECTORY_CHECK
from docassist.directory.slack_groups import SlackUserGroups
from docassist.runtime import Runtime, use_membership
from docassist.serving.metrics import Metrics
from docassist.serving.operations import OPERATOR_PATHS, add_operator_routes, start_serving
from docassist.serving.turn_processes import TurnProcesses, turn_processes_for

logger = logging.getLogger(__name__)

@dataclass
class Platforms:
    """What this process serves (at least one)."""

    slack: SlackAdapter | None = None
    teams: TeamsEndpoint | None = None
    turns: TurnProcesses | None = None
    """The processes that run the turns (None: turns run in this process)."""

    def paths(self) -> list[str]:
        mounted = [EVENTS_PATH] if self.slack is not None else []
        return [*mounted, *([MESSAGES_PATH] if self.teams is not None else []),
                *OPERATOR_PATHS]

    def couriers(self) -> dict[str, Post]:
        posts: dict[str, Post] = {}
        if self.slack is not None:
            posts["slack"] = self.slack.stale_notes.post
        if self.teams is not None:
            posts["teams"] = self.teams.adapter.stale_notes.post
        return posts


def build_app(runtime: Runtime, metrics: Metrics, platforms: Platforms,
              read_timeout: float = HTTP_READ_TIMEOUT_SECONDS) -> web.Application:
    app = new_application()
    if platforms.slack is not None:
        add_routes(app, slack_routes(platforms.slack), read_timeout)
    if platforms.teams is not None:
        platforms.teams.mount(app, read_timeout)
    add_operator_routes(app, runtime, metrics, platforms.turns)
    return app


@dataclass
class PlatformSettings:
    slack: SlackSettings | None = None
    teams: TeamsSettings | None = None

    def names(self) -> list[str]:
        return [name for name, found in (("slack", self.slack), ("teams", self.teams))
                if found is not None]


def configured_platforms() -> PlatformSettings:
    """Slack when SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET are set; Teams when its three
    credentials are (or DOCASSIST_TEAMS_ANONYMOUS=true). Neither is a configuration error;
    a platform half configured is said (a warning) and left out. Read before the database
    is opened: a process that cannot serve touches nothing."""
    found = PlatformSettings()
    problems: list[str] = []
    if os.environ.get("SLACK_BOT_TOKEN") or os.environ.get("SLACK_SIGNING_SECRET"):
        try:
            found.slack = slack_settings()
        except ConfigurationError as error:
            problems.append(str(error))
    teams_names = ("DOCASSIST_TEAMS_APP_ID", "DOCASSIST_TEAMS_TENANT_ID",
                   "DOCASSIST_TEAMS_APP_PASSWORD", "DOCASSIST_TEAMS_ANONYMOUS")
    if any(os.environ.get(name) for name in teams_names):
        try:
            found.teams = teams_settings()
        except ConfigurationError as error:
            problems.append(str(error))
    for problem in problems:
        logger.warning("not mounted: %s", problem)
    if found.slack is None and found.teams is None:
        raise ConfigurationError(
            "nothing to serve: set SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET (Slack), or "
            "DOCASSIST_TEAMS_APP_ID, DOCASSIST_TEAMS_TENANT_ID and DOCASSIST_TEAMS_APP_PASSWORD "
            "(Teams)" + (f"; {'; '.join(problems)}" if problems else ""))
    return found


def platforms_for(runtime: Runtime, settings: PlatformSettings) -> Platforms:
    """Both platforms' turns run in turn processes (unless DOCASSIST_TURN_PROCESSES=0),
    except Teams' expectReplies turns: their caller waits on this process."""
    turns = turn_processes_for(runtime.settings.turn_process_count(), settings.names(),
                               runtime.engine.observer)
    return Platforms(
        slack=slack_adapter(runtime, settings.slack, turns) if settings.slack else None,
        teams=TeamsEndpoint(runtime, settings.teams, turns) if settings.teams else None,
        turns=turns)


class MembershipByPlatform:
    """Each platform's directory for its own users (`group:slack:…`, `group:teams:…`)."""

    def __init__(self, lookups: dict[str, MembershipLookup]) -> None:
        self.lookups = lookups

    def groups_of(self, platform: str, user_id: str) -> frozenset[str]:
        lookup = self.lookups.get(platform)
        return lookup.groups_of(platform, user_id) if lookup is not None else frozenset()


def use_directories(runtime: Runtime, platforms: Platforms) -> None:
    """Each platform's groups for `group:…` scope mappings (turn processes use them too)."""
    lookups: dict[str, MembershipLookup] = {}
    if platforms.slack is not None:
        lookups["slack"] = SlackUserGroups(platforms.slack.client)
    entra = platforms.teams.entra_groups() if platforms.teams is not None else None
    if entra is not None:
        lookups["teams"] = entra
        runtime.optional[DIRECTORY_CHECK] = lambda: entra.problem
    use_membership(runtime, MembershipByPlatform(lookups))


def start_platforms(runtime: Runtime, platforms: Platforms) -> None:
    use_directories(runtime, platforms)
    if platforms.slack is not None:
        start_gaps_digest(runtime, platforms.slack)
    start_teams_gaps_digest(runtime, platforms.teams.adapter if platforms.teams else None)
    resumers = [("Slack", platforms.slack.worker.resume)] if platforms.slack else []
    start_serving(runtime, platforms.couriers(), resumers)


def serve_forever(runtime: Runtime, metrics: Metrics, platforms: Platforms, host: str,
                  port: int, on_ready: Callable[[int], None]) -> None:
    """Start the platforms and serve until interrupted (Teams resumes its own events when
    the server starts: its adapter needs the event loop)."""
    app = build_app(runtime, metrics, platforms)
    if platforms.turns is not None:  # they warm up while this process does
        platforms.turns.start()
        platforms.turns.stop_with(app)
    start_platforms(runtime, platforms)
    if platforms.turns is not None:
        platforms.turns.wait_ready()
    run_forever(app, host, port, on_ready)
