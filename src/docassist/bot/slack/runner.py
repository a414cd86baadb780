"""The Slack app from a runtime and the environment: what `docassist slack` and `docassist
serve` run. HTTP mode mounts `server.SlackEvents`' route on the shared server (bot/web.py);
Socket Mode stays with `docassist slack`."""

from __future__ import annotations

from collections.abc import Callable

from pydantic import ValidationError

from docassist.bot.gaps_digest import GapsDigest, digest_channels
from docassist.bot.slack.app import SlackAdapter, SlackConfig
from docassist.bot.slack.digest import slack_poster
from docassist.bot.slack.server import SlackEvents
from docassist.bot.web import Route, add_routes, new_application, run_forever
from docassist.config import SlackSettings
from docassist.core.errors import ConfigurationError
from docassist.core.limits import HTTP_READ_TIMEOUT_SECONDS
from docassist.directory.slack_groups import SlackUserGroups
from docassist.metrics import Metrics
from docassist.operations import add_operator_routes, start_serving
from docassist.runtime import Runtime, use_membership


def slack_settings() -> SlackSettings:
    """SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET (and the rest) from the environment."""
    try:
        return SlackSettings()
    except ValidationError as error:
        missing = ", ".join(str(e["loc"][0]) for e in error.errors())
        raise ConfigurationError(f"Slack configuration incomplete: {missing}") from error


def slack_adapter(runtime: Runtime, settings: SlackSettings) -> SlackAdapter:
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
        inbox_workers=config.turns_in_flight(),
        inbox_lease=config.inbox_lease))


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
    """POST /slack/events for any server of bot/web.py."""
    return SlackEvents(adapter.app, adapter.config.signing_secret).routes()


def _start(runtime: Runtime, adapter: SlackAdapter) -> None:
    use_slack_groups(runtime, adapter)
    start_gaps_digest(runtime, adapter)
    start_serving(runtime, {"slack": adapter.stale_notes.post},
                  [("Slack", adapter.worker.resume)])


def serve(runtime: Runtime, metrics: Metrics, adapter: SlackAdapter, host: str, port: int,
          on_ready: Callable[[int], None],
          read_timeout: float = HTTP_READ_TIMEOUT_SECONDS) -> None:
    """HTTP mode alone (`docassist slack --http`): POST /slack/events with /healthz,
    /readyz and /metrics, until interrupted."""
    app = new_application()
    add_routes(app, slack_routes(adapter), read_timeout)
    add_operator_routes(app, runtime, metrics)
    _start(runtime, adapter)
    run_forever(app, host, port, on_ready)


def run_socket_mode(runtime: Runtime, adapter: SlackAdapter, app_token: str) -> None:
    """Socket Mode (no public URL): blocks until interrupted."""
    from slack_bolt.adapter.socket_mode import SocketModeHandler

    _start(runtime, adapter)
    SocketModeHandler(adapter.app, app_token).start()  # type: ignore[no-untyped-call]
