"""manifest.yml declares exactly what the app uses, and says how to use it."""

from __future__ import annotations

import yaml  # type: ignore[import-untyped]

from docassist.bot.slack.listeners import LISTENERS, SlackListeners
from docassist.bot.slack.render import CLEAR_THREAD_SHORTCUT
from docassist.core import i18n
from docassist.directory.slack_groups import REQUIRED_SCOPE as GROUPS_SCOPE
from tests.conftest import REPO

ADMIN_SUBCOMMANDS = ("export", "stats", "sources", "scopes")
"""What `/docassist-admin` does (bot/slack/admin.py `AdminCommands.handle`)."""


def test_manifest_matches_the_listeners() -> None:
    manifest = yaml.safe_load((REPO / "manifest.yml").read_text())
    commands = {command["command"] for command in manifest["features"]["slash_commands"]}
    # The listeners' flat table (bot/slack/listeners.py) is what Bolt registers.
    assert commands == {name for kind, name, _ in LISTENERS if kind == "command"}
    assert all(hasattr(SlackListeners, method) for _, _, method in LISTENERS)
    [shortcut] = manifest["features"]["shortcuts"]
    assert (shortcut["type"], shortcut["callback_id"]) == ("message", CLEAR_THREAD_SHORTCUT)
    events = set(manifest["settings"]["event_subscriptions"]["bot_events"])
    assert events == {"app_mention", "assistant_thread_started",
                      "assistant_thread_context_changed", "message.channels",
                      "message.groups", "message.im"}
    assert set(manifest["oauth_config"]["scopes"]["bot"]) == {
        "app_mentions:read", "channels:history", "groups:history", "im:history", "chat:write",
        "commands", "assistant:write", "im:write", "files:write",
        GROUPS_SCOPE}  # `group:slack:S…` scopes read a user group's members
    assert manifest["settings"]["interactivity"]["is_enabled"] is True


def test_the_admin_command_hint_names_every_subcommand() -> None:
    manifest = yaml.safe_load((REPO / "manifest.yml").read_text())
    [admin] = [command for command in manifest["features"]["slash_commands"]
               if command["command"] == "/docassist-admin"]
    hinted = admin["usage_hint"].replace("|", " ").split()
    usage = i18n.text("slack_admin_usage", "en").replace("|", " ").split()
    for subcommand in ADMIN_SUBCOMMANDS:
        assert subcommand in hinted and subcommand in usage
