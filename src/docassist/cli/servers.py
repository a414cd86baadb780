"""The serving commands: `serve` (both platforms on one port), `slack`, `teams`, and
`teams-package`. They parse options; the wiring lives in the platform packages
(bot/slack/runner.py, bot/teams/runner.py) and server.py."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from docassist.cli.common import JsonOption, open_checked, require_paths
from docassist.cli.output import emit_json, err, fail, labelled
from docassist.core.errors import ConfigurationError, DocAssistError
from docassist.logs import json_logs
from docassist.runtime import Runtime
from docassist.serving.metrics import Metrics

app = typer.Typer()
logger = logging.getLogger("docassist.serving.server")

PortOption = Annotated[int, typer.Option(help="Port to listen on (0 = any free).")]
HostOption = Annotated[str, typer.Option(help="Address to listen on.")]


def _on_ready(host: str, paths: list[str]) -> Callable[[int], None]:
    def ready(port: int) -> None:
        for path in paths:
            if json_logs():  # stderr then holds JSON lines only
                logger.info("listening on http://%s:%d%s", host, port, path)
            else:
                err.print(f"listening on http://{host}:{port}{path}")
    return ready


def _observed_runtime() -> tuple[Runtime, Metrics]:
    metrics = Metrics()
    runtime = open_checked(observer=metrics)
    metrics.watch_store(runtime.store)
    return runtime, metrics


@app.command()
def serve(port: PortOption = 8080, host: HostOption = "127.0.0.1") -> None:
    """Slack and Teams on one server, with /healthz, /readyz and /metrics.

    Each platform is mounted when its credentials are set in the environment."""
    from docassist.serving.server import configured_platforms, platforms_for, serve_forever

    try:
        settings = configured_platforms()
    except ConfigurationError as error:
        raise fail(str(error), False) from error
    runtime, metrics = _observed_runtime()
    platforms = platforms_for(runtime, settings)
    serve_forever(runtime, metrics, platforms, host, port, _on_ready(host, platforms.paths()))


@app.command()
def slack(
    http: Annotated[bool, typer.Option("--http", help="HTTP mode instead of Socket Mode.")] = False,
    port: Annotated[int, typer.Option(help="HTTP mode port.")] = 3000,
    host: Annotated[str, typer.Option(help="HTTP mode address.")] = "127.0.0.1",
) -> None:
    """Run the Slack app (Socket Mode by default; --http serves POST /slack/events)."""
    from docassist.bot.slack import runner
    from docassist.bot.slack.server import EVENTS_PATH
    from docassist.serving.operations import OPERATOR_PATHS

    runtime, metrics = _observed_runtime()
    try:
        settings = runner.slack_settings()
    except ConfigurationError as error:
        raise fail(str(error), False) from error
    if not http and settings.app_token is None:
        raise fail("Socket Mode needs SLACK_APP_TOKEN (or use --http)", False)
    turns = runner.slack_turn_processes(runtime)  # both modes: this process stores and acks
    adapter = runner.slack_adapter(runtime, settings, turns)
    if http:
        runner.serve(runtime, metrics, adapter, host, port,
                     _on_ready(host, [EVENTS_PATH, *OPERATOR_PATHS]), turns)
    elif settings.app_token is not None:
        runner.run_socket_mode(runtime, adapter, settings.app_token.get_secret_value(), turns)


@app.command("turn-worker", hidden=True)
def turn_worker(
    platforms: Annotated[str, typer.Option(
        help="Whose events it answers: slack, teams, or both (comma-separated).")] = "slack",
) -> None:
    """A turn process of `serve`, `slack` and `teams` (they start it): answers their
    platforms' events from the inbox; stdin carries wake-ups, stdout reports for /metrics."""
    from docassist.serving.turn_processes import RelayObserver, relay_output
    from docassist.serving.turn_worker import (
        PLATFORMS,
        run_turn_process,
        turn_process_platforms,
    )

    names = [name.strip() for name in platforms.split(",") if name.strip()]
    unknown = [name for name in names if name not in PLATFORMS]
    if unknown or not names:
        raise fail(f"unknown platform {', '.join(unknown) or '(none)'}: use "
                   + " or ".join(PLATFORMS), False)
    relay = RelayObserver(relay_output())
    runtime = open_checked(observer=relay, announce=False)
    try:
        chosen = turn_process_platforms(runtime, names)
    except DocAssistError as error:
        raise fail(str(error), False) from error
    run_turn_process(runtime, chosen)


@app.command()
def teams(
    port: Annotated[int, typer.Option(help="Port of POST /api/messages (0 = any free).")] = 3978,
    host: HostOption = "127.0.0.1",
) -> None:
    """Run the Teams endpoint alone: POST /api/messages, /healthz, /readyz, /metrics."""
    from docassist.bot.teams import runner
    from docassist.bot.teams.server import MESSAGES_PATH
    from docassist.serving.operations import OPERATOR_PATHS

    try:
        settings = runner.teams_settings()
    except ConfigurationError as error:
        raise fail(str(error), False) from error
    runtime, metrics = _observed_runtime()
    turns = runner.teams_turn_processes(runtime)  # this process stores and answers inline
    try:
        endpoint = runner.TeamsEndpoint(runtime, settings, turns)
    except DocAssistError as error:
        raise fail(str(error), False) from error
    runner.serve(runtime, metrics, endpoint, host, port, _on_ready(host, [
        MESSAGES_PATH, *OPERATOR_PATHS]), turns)


UrlOption = Annotated[str | None, typer.Option(
    help="An https URL shown in the app's details in Teams (default: its "
    "DOCASSIST_TEAMS_…_URL setting, else the template's example.com).")]


@app.command("teams-package")
def teams_package(
    out: Annotated[Path, typer.Option(help="The zip to write.")] = Path("docassist-teams.zip"),
    bot_app_id: Annotated[str | None, typer.Option(
        help="The bot's Entra app id (default: DOCASSIST_TEAMS_APP_ID).")] = None,
    manifest: Annotated[Path | None, typer.Option(help="Manifest template.")] = None,
    website_url: UrlOption = None,
    privacy_url: UrlOption = None,
    terms_url: UrlOption = None,
    as_json: JsonOption = False,
) -> None:
    """Build the Teams app package to sideload: manifest with ids filled in, plus icons. The
    Teams app id follows from the bot id: a rebuild updates the same app."""
    from docassist.bot.teams.package import build_package, placeholder_urls
    from docassist.config import TeamsSettings, default_teams_manifest, from_environment

    try:
        settings = from_environment(TeamsSettings)
    except DocAssistError as error:
        raise fail(str(error), as_json) from error
    app_id = bot_app_id or settings.app_id
    if not app_id:
        raise fail("give --bot-app-id or set DOCASSIST_TEAMS_APP_ID", as_json)
    if manifest is not None:
        require_paths([manifest], as_json)
    urls = {name: value for name, value in (
        ("websiteUrl", website_url or settings.website_url),
        ("privacyUrl", privacy_url or settings.privacy_url),
        ("termsOfUseUrl", terms_url or settings.terms_url)) if value}
    if any(not value.startswith("https://") for value in urls.values()):
        raise fail("Teams takes only https:// developer URLs", as_json)
    try:
        written = build_package(manifest or default_teams_manifest(), out, app_id,
                                developer_urls=urls)
    except (ValueError, OSError) as error:
        raise fail(f"could not build the package: {error}", as_json) from error
    warnings = _placeholder_warnings(placeholder_urls(written))
    for warning in warnings:
        err.print(labelled("warning:", warning))
    err.print(f"wrote {out}: upload it in Teams → Apps → Manage your apps → Upload an app")
    if as_json:
        emit_json({"out": str(out), "teams_app_id": written["id"], "bot_app_id": app_id,
                   "warnings": warnings})


PACKAGE_URL_OPTIONS = {"websiteUrl": "--website-url / DOCASSIST_TEAMS_WEBSITE_URL",
                       "privacyUrl": "--privacy-url / DOCASSIST_TEAMS_PRIVACY_URL",
                       "termsOfUseUrl": "--terms-url / DOCASSIST_TEAMS_TERMS_URL"}


def _placeholder_warnings(names: list[str]) -> list[str]:
    """One line per developer link still at example.com, naming how to set it."""
    return [f"the app's {name} is still the template's example.com: set "
            f"{PACKAGE_URL_OPTIONS[name]} (Teams shows it in the app's details)"
            for name in names]


