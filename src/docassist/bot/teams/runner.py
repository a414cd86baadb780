"""The Teams endpoint from a runtime and the environment: what `docassist teams` and
`docassist serve` run."""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import partial

from aiohttp import web
from microsoft_agents.hosting.core.authorization import Connections

from docassist.bot.teams.app import TeamsAdapter, TeamsConfig
from docassist.bot.teams.digest import start_teams_gaps_digest
from docassist.bot.teams.server import (
    ANONYMOUS_NOISE_LOGGER,
    ANONYMOUS_WARNING,
    TeamsCredentials,
    connections_for,
    mount,
)
from docassist.bot.web import new_application, run_forever
from docassist.config import GraphSettings, TeamsSettings, from_environment
from docassist.core.errors import ConfigurationError
from docassist.core.holder import PROCESS_HOLDER
from docassist.core.limits import HTTP_READ_TIMEOUT_SECONDS
from docassist.directory.entra import DIRECTORY_CHECK, EntraMembership
from docassist.runtime import Runtime, use_membership
from docassist.serving.metrics import Metrics
from docassist.serving.operations import add_operator_routes, start_serving
from docassist.serving.turn_processes import TurnProcesses, turn_processes_for
from docassist.sources.graph import GraphClient


def teams_settings() -> TeamsSettings:
    """The three credentials (or DOCASSIST_TEAMS_ANONYMOUS=true) from the environment."""
    settings = from_environment(TeamsSettings)  # a bad value names its variable
    missing = settings.missing_credentials()
    if missing:
        raise ConfigurationError("Teams configuration incomplete: " + ", ".join(missing)
                                 + " (or set DOCASSIST_TEAMS_ANONYMOUS=true for local testing)")
    return settings


class TeamsEndpoint:
    """The adapter and the connections its JWT check and replies use."""

    def __init__(self, runtime: Runtime, settings: TeamsSettings,
                 turns: TurnProcesses | None = None, *, turn_slots: int | None = None,
                 replica: str = PROCESS_HOLDER) -> None:
        """With `turns`, this process stores activities and runs only expectReplies turns
        (the turn processes answer the rest); `turn_slots` sets the turns it runs at once
        and `replica` its claims' name (a turn process's)."""
        credentials = None
        if not settings.anonymous and settings.app_password is not None:
            credentials = TeamsCredentials(settings.app_id, settings.tenant_id,
                                           settings.app_password.get_secret_value())
        self.connections: Connections = connections_for(credentials)
        config = runtime.settings
        self.adapter = TeamsAdapter(runtime.engine, runtime.store, TeamsConfig(
            app_id=settings.app_id if credentials else "",
            tenant_id=settings.tenant_id,
            human_channel=config.human_channel,
            teams_human_channel=settings.human_channel,
            default_language=config.language, admin_users=settings.admins(),
            per_user_per_minute=config.rate_per_user,
            global_per_minute=config.rate_global,
            inbox_workers=turn_slots or config.turns_in_flight(),
            inbox_lease=config.inbox_lease, replica=replica), self.connections,
            handoff=turns.wake if turns is not None else None)
        if settings.anonymous:
            logging.getLogger("docassist.teams").warning(ANONYMOUS_WARNING)
            # Without an app id the SDK warns on every request; anonymous mode expects it.
            logging.getLogger(ANONYMOUS_NOISE_LOGGER).setLevel(logging.ERROR)

    @staticmethod
    def entra_groups() -> EntraMembership | None:
        """`group:teams:…` scope mappings: Entra ID groups through Graph, when configured."""
        graph = GraphSettings().resolved()
        return None if graph.missing() else EntraMembership(partial(GraphClient, graph))

    def use_entra_groups(self, runtime: Runtime) -> None:
        lookup = self.entra_groups()
        if lookup is not None:
            use_membership(runtime, lookup)
            runtime.optional[DIRECTORY_CHECK] = lambda: lookup.problem

    def mount(self, app: web.Application,
              read_timeout: float = HTTP_READ_TIMEOUT_SECONDS) -> None:
        mount(app, self.adapter, self.connections, read_timeout)


def teams_turn_processes(runtime: Runtime) -> TurnProcesses | None:
    """DOCASSIST_TURN_PROCESSES children answering this replica's Teams activities (None:
    0)."""
    return turn_processes_for(runtime.settings.turn_process_count(), ["teams"],
                              runtime.engine.observer)


def serve(runtime: Runtime, metrics: Metrics, endpoint: TeamsEndpoint, host: str, port: int,
          on_ready: Callable[[int], None], turns: TurnProcesses | None = None,
          read_timeout: float = HTTP_READ_TIMEOUT_SECONDS) -> None:
    """The endpoint alone (`docassist teams`): POST /api/messages with /healthz, /readyz and
    /metrics, until interrupted (unfinished events resume when the server starts); `turns`
    (started here) answer the activities, as Slack's do."""
    app = new_application()
    endpoint.mount(app, read_timeout)
    add_operator_routes(app, runtime, metrics, turns)
    if turns is not None:  # they warm up while this process does
        turns.start()
        turns.stop_with(app)
    endpoint.use_entra_groups(runtime)
    start_teams_gaps_digest(runtime, endpoint.adapter)
    start_serving(runtime, {"teams": endpoint.adapter.stale_notes.post})
    if turns is not None:
        turns.wait_ready()
    run_forever(app, host, port, on_ready)
