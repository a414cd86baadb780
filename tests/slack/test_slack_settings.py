"""Slack's settings come only from the names the docs give (SLACK_*, DOCASSIST_*): an unrelated
API_URL or ADMIN_USERS in the environment must not steer the bot's token or its admins."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from docassist.config import SlackSettings

FIELD_NAMES = {"BOT_TOKEN": "xoxb-elsewhere", "SIGNING_SECRET": "elsewhere",
               "APP_TOKEN": "xapp-elsewhere", "API_URL": "http://169.254.169.254/",
               "ADMIN_USERS": "U-EVE", "PRIVATE_CHANNELS": "C-ELSEWHERE"}
"""The fields' own names, which other programs use for their own settings."""


@pytest.fixture
def environment(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in ("SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_APP_TOKEN",
                 "DOCASSIST_SLACK_API_URL", "DOCASSIST_ADMIN_USERS",
                 "DOCASSIST_SLACK_PRIVATE_CHANNELS"):
        monkeypatch.delenv(name, raising=False)
    for name, value in FIELD_NAMES.items():
        monkeypatch.setenv(name, value)
    return monkeypatch


def test_the_fields_own_names_are_not_read(environment: pytest.MonkeyPatch) -> None:
    environment.setenv("SLACK_BOT_TOKEN", "xoxb-ours")
    environment.setenv("SLACK_SIGNING_SECRET", "ours")
    settings = SlackSettings()
    assert settings.bot_token.get_secret_value() == "xoxb-ours"
    assert settings.signing_secret.get_secret_value() == "ours"
    assert settings.app_token is None
    assert settings.api_url == "https://slack.com/api/"
    assert settings.admin_users == ""
    assert settings.private() == frozenset()


def test_the_fields_own_names_alone_do_not_configure_slack(
        environment: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValidationError) as error:
        SlackSettings()
    assert {"SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET"} <= {
        str(problem["loc"][0]) for problem in error.value.errors()}
