"""The Slack app from a runtime and the environment: what `docassist slack` and `docassist
serve` run. HTTP mode mounts `server.SlackEvents`' route on the shared server (bot/web.py);
Socket Mode stays with `docassist slack`."""

from __future__ import annotations

from pydantic import ValidationError

from docassist.bot.slack.app import SlackAdapter, SlackConfig
from docassist.bot.slack.server import SlackEvents
from docassist.bot.web import Route
from docassist.config import SlackSettings
from docassist.core.errors import ConfigurationError
from docassist.runtime import Runtime


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
        per_user_per_minute=config.rate_per_user,
        global_per_minute=config.rate_global,
        inbox_workers=config.inbox_workers))


def slack_routes(adapter: SlackAdapter) -> list[Route]:
    """POST /slack/events for any server of bot/web.py."""
    return SlackEvents(adapter.app, adapter.config.signing_secret).routes()


def run_socket_mode(adapter: SlackAdapter, app_token: str) -> None:
    """Socket Mode (no public URL): blocks until interrupted."""
    from slack_bolt.adapter.socket_mode import SocketModeHandler

    SocketModeHandler(adapter.app, app_token).start()  # type: ignore[no-untyped-call]
