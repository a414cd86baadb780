"""The Slack app from a runtime and the environment: what `docassist slack` and `docassist
serve` run. HTTP mode mounts `server.SlackEvents`' route on the shared server (bot/web.py);
Socket Mode stays with `docassist slack`. Either way turns run in turn processes
(`docassist turn-worker`, turn_processes.py) unless DOCASSIST_TURN_PROCESSES=0."""

from __future__ import annotations

from collections.abc import Callable

from pydantic import ValidationError

from docassist.bot.gaps_digest import GapsDigest, digest_channels
from docassist.bot.slack.app import SlackAdapter, SlackConfig
from docassist.bot.slack.digest import slack_poster
from docassist.bot.slack.lane import EventLane
from docassist.bot.slack.server import SlackEvents
from docassist.bot.web import AppServer, Route, add_routes, new_application, run_forever
from docassist.config import SlackSettings
from docassist.core.errors import ConfigurationError
from docassist.core.holder import PROCESS_HOLDER
from docassist.core.limits import HTTP_READ_TIMEOUT_SECONDS
from docassist.directory.slack_groups import SlackUserGroups
from docassist.runtime import Runtime, use_membership
from docassist.serving.metrics import Metrics
from docassist.serving.operations import add_operator_routes, start_serving
from docassist.serving.turn_processes import TurnProcesses, turn_processes_for


def slack_settings() -> SlackSettings:
    """SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET (and the rest) from the environment."""
    try:
        return SlackSettings()
    except ValidationError as error:
        missing = ", ".join(str(e["loc"][0]) for e in error.errors())
        raise ConfigurationError(f"Slack configuration incomplete: {missing}") from error


def slack_adapter(runtime: Runtime, settings: SlackSettings,
                  turns: TurnProcesses | None = None, *, turn_slots: int | None = None,
                  replica: str = PROCESS_HOLDER) -> SlackAdapter:
    """With `turns`, this process only stores and acks (the turn processes answer);
    `turn_slots` sets the turns it runs at once and `replica` its claims' name (a turn
    process's)."""
    config = runtime.settings
    return SlackAdapter(runtime.engine, runtime.store, SlackConfig(
        bot_token=settings.bot_token.get_secret_value(),
        signing_secret=settings.signing_secret.get_secret_value(),
        api_url=settings.api_url, default_language=config.language,
        admin_users=frozenset(u.strip() for u in settings.admin_users.split(",")
                              if u.strip()),
        human_channel=config.human_channel,
        private_channels=settings.private(),
        per_user_per_minute=config.rate_per_user,
        global_per_minute=config.rate_global,
        inbox_workers=turn_slots or config.turns_in_flight(),
        inbox_lease=config.inbox_lease, replica=replica),
        handoff=turns.wake if turns is not None else None)


def slack_turn_processes(runtime: Runtime) -> TurnProcesses | None:
    """DOCASSIST_TURN_PROCESSES children answering this replica's Slack events (None: 0)."""
    return turn_processes_for(runtime.settings.turn_process_count(), ["slack"],
                              runtime.engine.observer)


def use_slack_groups(runtime: Runtime, adapter: SlackAdapter) -> None:
    """`group:slack:…` scope mappings: the asker's Slack user groups (asked only when a group
    mapping exists; cached; a failed lookup gives no groups)."""
    use_membership(runtime, SlackUserGroups(adapter.client))


def start_gaps_digest(runtime: Runtime, adapter: SlackAdapter) -> None:
    """The weekly gaps digest to DOCASSIST_GAPS_DIGEST_CHANNEL, when it is set."""
    channel = digest_channels(runtime.settings.gaps_digest_channel).get("slack")
    if channel:
        GapsDigest(runtime.store, slack_poster(adapter.app.client, channel),
                   runtime.settings.language).start()


def slack_routes(adapter: SlackAdapter) -> list[Route]:
    """POST /slack/events for any server of bot/web.py; message events go through the
    events lane (lane.py)."""
    return SlackEvents(adapter.app, adapter.config.signing_secret,
                       lane=EventLane(adapter)).routes()


def make_slack_server(adapter: SlackAdapter, host: str, port: int,
                      read_timeout: float = HTTP_READ_TIMEOUT_SECONDS) -> AppServer:
    """POST /slack/events as `docassist slack --http` serves it (the events lane included)
    and GET /healthz, not started (`server.serve_in_thread`): for tests and benchmarks."""
    app = new_application()
    add_routes(app, slack_routes(adapter), read_timeout)
    return AppServer(app, host, port, read_timeout=read_timeout)


def _start(runtime: Runtime, adapter: SlackAdapter, turns: TurnProcesses | None) -> None:
    use_slack_groups(runtime, adapter)
    start_gaps_digest(runtime, adapter)
    start_serving(runtime, {"slack": adapter.stale_notes.post},
                  [("Slack", adapter.worker.resume)], answers=turns is None)


def serve(runtime: Runtime, metrics: Metrics, adapter: SlackAdapter, host: str, port: int,
          on_ready: Callable[[int], None], turns: TurnProcesses | None = None,
          read_timeout: float = HTTP_READ_TIMEOUT_SECONDS) -> None:
    """HTTP mode alone (`docassist slack --http`): POST /slack/events with /healthz,
    /readyz and /metrics, until interrupted; `turns` (started here) answer the events."""
    app = new_application()
    add_routes(app, slack_routes(adapter), read_timeout)
    add_operator_routes(app, runtime, metrics, turns)
    if turns is not None:  # they warm up while this process does
        turns.start()
        turns.stop_with(app)
    _start(runtime, adapter, turns)
    if turns is not None:
        turns.wait_ready()
    run_forever(app, host, port, on_ready)


def run_socket_mode(runtime: Runtime, adapter: SlackAdapter, app_token: str,
                    turns: TurnProcesses | None = None) -> None:
    """Socket Mode (no public URL): blocks until interrupted; `turns` (started here) answer
    the events, as in HTTP mode."""
    from slack_bolt.adapter.socket_mode import SocketModeHandler

    if turns is not None:  # they warm up while this process does
        turns.start()
    try:
        _start(runtime, adapter, turns)
        if turns is not None:
            turns.wait_ready()
        SocketModeHandler(adapter.app, app_token).start()  # type: ignore[no-untyped-call]
    finally:
        if turns is not None:
            turns.close()
